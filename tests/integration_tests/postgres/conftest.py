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
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import langchain_postgres  # noqa: F401
import numpy as np
import pgserver  # the dev extra installs it: a missing one fails, never skips
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

CORPUS_SIZE = 200
DIM = 384


class SpyEmbeddings(Embeddings):
    """Forwards to real embeddings and counts what it was asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.query_calls = 0
            self.documents_embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.documents_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            self.query_calls += 1
        return self.inner.embed_query(text)


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
    """The model on one intra-op thread (see the LlamaIndex tests' conftest: on this
    shared 2-core machine torch's threads wait on each other); restored afterwards."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


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
def lc_embeddings() -> Embeddings:
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore

    from vrsd_langchain import default_embeddings

    return CacheBackedEmbeddings.from_bytes_store(
        default_embeddings(), InMemoryByteStore(), namespace="all-MiniLM-L6-v2",
        query_embedding_cache=True, key_encoder="sha256",
    )


@pytest.fixture(scope="session")
def corpus(arc_da) -> list[Document]:
    return [
        Document(
            id=f"arc-{i}",
            page_content=text,
            metadata={"row": i, "split": "AB"[i % 2]},
        )
        for i, text in enumerate(arc_da.corpus[:CORPUS_SIZE])
    ]


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


@pytest.fixture(params=["pgvector", "pgvector_store"])
def lc_case(request) -> LCCase:
    case = request.getfixturevalue(f"lc_{request.param}")
    case.spy.reset()
    return case


# --- LlamaIndex -----------------------------------------------------------------


@pytest.fixture(scope="session")
def li_embed_model():
    from vrsd_llamaindex import default_embed_model

    return default_embed_model()


def make_li_spy(inner):
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class SpyEmbedding(BaseEmbedding):
        """A real LlamaIndex model that counts queries and texts embedded."""

        _inner: Any = PrivateAttr()
        _queries: int = PrivateAttr(default=0)
        _texts: int = PrivateAttr(default=0)

        def __init__(self, inner: Any) -> None:
            super().__init__(model_name=f"spy:{inner.model_name}")
            self._inner = inner

        def reset(self) -> None:
            self._queries = 0
            self._texts = 0

        @property
        def counts(self) -> tuple[int, int]:
            return self._queries, self._texts

        def _get_query_embedding(self, query: str) -> list[float]:
            self._queries += 1
            return self._inner.get_query_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            self._queries += 1
            return await self._inner.aget_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            self._texts += len(texts)
            return self._inner.get_text_embedding_batch(texts)

    return SpyEmbedding(inner)


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
