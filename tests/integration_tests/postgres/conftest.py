"""A real Postgres + pgvector server for the session, and the three Postgres stores over it.

The server is the PyPI package ``pgserver`` (Postgres binaries with pgvector),
started in a temporary data directory; it listens on a unix socket in that
directory only (``listen_addresses`` is empty) and is stopped at the end of the
session. Each store gets the first 200 ARC-DA texts with their vectors
computed once by the bundled model (``add_embeddings``/nodes with embeddings),
so building a store embeds nothing through the store's spy.

* ``lc_pgvector``: LangChain ``PGVector`` (classic, JSONB metadata);
* ``lc_pgvector_store``: LangChain ``PGVectorStore`` (v2, over a ``PGEngine``);
* ``li_pgvector``: LlamaIndex ``PGVectorStore``, wrapped in a ``VectorStoreIndex``.

``sql`` runs a statement on its own psycopg connection: the independent way the
tests read rows and vectors.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import langchain_postgres  # noqa: F401
import numpy as np
import pgserver  # the dev extra installs it: a missing one fails, never skips
import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    arc_corpus_fixture,
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from tests.helpers.spies import SpyEmbeddings, make_li_spy, one_torch_thread
from tests.helpers.store_cases import cases_in

DIM = 384


@dataclass
class Server:
    """One pgserver instance: its data directory and a SQLAlchemy URL per driver."""

    pgdata: Path
    handle: Any

    @property
    def uri(self) -> str:
        return self.handle.get_uri()

    def url(self, driver: str = "psycopg") -> str:
        return self.uri.replace("postgresql://", f"postgresql+{driver}://", 1)

    def stop(self) -> None:
        self.handle.cleanup()


def start_server(pgdata: Path) -> Server:
    """Start (or restart, on an existing data directory) Postgres with pgvector."""
    handle = pgserver.get_server(str(pgdata), cleanup_mode="stop")
    handle.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return Server(pgdata, handle)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    """The model on one intra-op thread (see ``tests.helpers.spies.one_torch_thread``)."""
    with one_torch_thread():
        yield


@contextmanager
def server_dir() -> Iterator[Path]:
    """A data directory of its own, outside pytest's basetemp: a concurrent pytest run
    prunes old basetemps, and the unix socket path must stay short (< 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="vrsd-pg-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    with server_dir() as pgdata:
        server = start_server(pgdata)
        try:
            yield server
        finally:
            server.stop()


def run_sql(uri: str, statement: str, params: Sequence[Any] | None = None) -> list[tuple]:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        return conn.execute(statement, params).fetchall()


@pytest.fixture(scope="session")
def sql(pg_server) -> Callable[..., list[tuple]]:
    return lambda statement, params=None: run_sql(pg_server.uri, statement, params)


def parse_vector(text: str) -> np.ndarray:
    return np.asarray(json.loads(text), dtype=np.float64)


@pytest.fixture(scope="session")
def corpus_vectors(corpus, lc_embeddings) -> list[list[float]]:
    return lc_embeddings.embed_documents([d.page_content for d in corpus])


@pytest.fixture(scope="session")
def queries(arc_da) -> list[str]:
    return arc_da.queries[:6]


@dataclass
class LCCase:
    kind: str
    store: Any
    spy: SpyEmbeddings
    filter_a: dict
    table: str  # what no_writes snapshots


def build_pgvector(server: Server, corpus, vectors, embeddings, name="arc") -> Any:
    from langchain_postgres import PGVector

    store = PGVector(SpyEmbeddings(embeddings), connection=server.url(), collection_name=name,
                     use_jsonb=True, embedding_length=DIM)
    store.add_embeddings(
        [d.page_content for d in corpus], vectors, [dict(d.metadata) for d in corpus],
        ids=[d.id for d in corpus],
    )
    return store


@pytest.fixture(scope="session")
def lc_pgvector(pg_server, corpus, corpus_vectors, lc_embeddings) -> LCCase:
    store = build_pgvector(pg_server, corpus, corpus_vectors, lc_embeddings)
    return LCCase("pgvector", store, store.embeddings, {"split": {"$eq": "A"}},
                  "langchain_pg_embedding")


@pytest.fixture(scope="session")
def lc_pgvector_store(pg_server, corpus, corpus_vectors, lc_embeddings) -> Iterator[LCCase]:
    from langchain_postgres import PGEngine, PGVectorStore

    engine = PGEngine.from_connection_string(pg_server.url())
    engine.init_vectorstore_table("arc_v2", DIM)
    spy = SpyEmbeddings(lc_embeddings)
    store = PGVectorStore.create_sync(engine, spy, "arc_v2")
    store.add_embeddings(
        [d.page_content for d in corpus], corpus_vectors, [dict(d.metadata) for d in corpus],
        ids=[str(_uuid(d.id)) for d in corpus],
    )
    yield LCCase("pgvector_store", store, spy, {"split": {"$eq": "A"}}, "arc_v2")
    engine._run_as_sync(engine._pool.dispose())


def _uuid(text: str):
    import uuid

    return uuid.uuid5(uuid.NAMESPACE_URL, text)


@pytest.fixture(params=cases_in("langchain", "postgres"))
def lc_case(request) -> LCCase:
    case = request.getfixturevalue(f"lc_{request.param}")
    case.spy.reset()
    return case


# --- LlamaIndex -----------------------------------------------------------------


@dataclass
class LICase:
    store: Any
    index: Any
    spy: Any
    table: str


@pytest.fixture(scope="session")
def li_pgvector(pg_server, corpus, corpus_vectors, li_embed_model) -> Iterator[LICase]:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.postgres import PGVectorStore

    store = PGVectorStore.from_params(
        host=str(pg_server.pgdata), port="5432", database="postgres", user="postgres",
        password="", table_name="arc_li", embed_dim=DIM,
        connection_string=pg_server.url("psycopg2"),
        async_connection_string=pg_server.url("asyncpg"),
    )
    nodes = [
        TextNode(id_=str(_uuid(d.id)), text=d.page_content, metadata=dict(d.metadata),
                 embedding=list(v))
        for d, v in zip(corpus, corpus_vectors, strict=True)
    ]
    store.add(nodes)
    spy = make_li_spy(li_embed_model)
    index = VectorStoreIndex.from_vector_store(store, embed_model=spy)
    yield LICase(store, index, spy, "data_arc_li")
    store._engine.dispose()
