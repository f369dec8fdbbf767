"""The Postgres server stopped under a retriever, then restarted on the same data.

A server of its own (its own data directory), so the session server is never
touched. Stopped: every query raises the driver's error (never ``[]``, never a
hang: pytest-timeout bounds each test). Restarted on the same data directory: the
same retriever objects answer exactly as before.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy.exc import OperationalError

from vrsd_langchain import DiverseRetriever
from vrsd_llamaindex import DiverseRerankRetriever as LIRetriever

from .conftest import DIM, _uuid, build_pgvector, server_dir, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

K, FETCH_K = 4, 20


def _li_store(server):
    from llama_index.vector_stores.postgres import PGVectorStore

    return PGVectorStore.from_params(
        table_name="arc_li", embed_dim=DIM, connection_string=server.url("psycopg2"),
        async_connection_string=server.url("asyncpg"),
    )


def test_stop_gives_an_error_and_restart_gives_the_same_results(
    corpus, corpus_vectors, lc_embeddings, li_embed_model, queries
):

    with server_dir() as pgdata:
        _stop_restart(pgdata, corpus, corpus_vectors, lc_embeddings, li_embed_model, queries)


def _stop_restart(pgdata, corpus, corpus_vectors, lc_embeddings, li_embed_model, queries):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    server = start_server(pgdata)
    try:
        lc_store = build_pgvector(server, corpus, corpus_vectors, lc_embeddings)
        li_store = _li_store(server)
        li_store.add([
            TextNode(id_=str(_uuid(d.id)), text=d.page_content, metadata=dict(d.metadata),
                     embedding=list(v))
            for d, v in zip(corpus, corpus_vectors, strict=True)
        ])
        index = VectorStoreIndex.from_vector_store(li_store, embed_model=li_embed_model)
        lc = DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K)
        li = LIRetriever(index.as_retriever(), top_n=K, fetch_k=FETCH_K)

        def answers():
            return (
                [[d.id for d in lc.invoke(q)] for q in queries[:3]],
                [[h.node.node_id for h in li.retrieve(q)] for q in queries[:3]],
            )

        before = answers()
        assert all(len(r) == K for part in before for r in part)

        server.stop()
        for _ in range(2):  # pooled connections and new ones alike
            started = time.monotonic()
            with pytest.raises(OperationalError) as lc_err:
                lc.invoke(queries[0])
            with pytest.raises(OperationalError) as li_err:
                li.retrieve(queries[0])
            # Reported, not asserted (the bound is the test's timeout).
            print(f"stopped server: both errors after {time.monotonic() - started:.2f} s: "
                  f"{str(lc_err.value).splitlines()[0]!r} / {str(li_err.value).splitlines()[0]!r}")

        server = start_server(pgdata)
        # The first query after the restart may meet a pooled connection the old server
        # closed: SQLAlchemy then invalidates the pool and raises once; after that, answers.
        for name, call in (("langchain", lambda: lc.invoke(queries[0])),
                           ("llamaindex", lambda: li.retrieve(queries[0]))):
            try:
                call()
            except OperationalError as exc:
                print(f"{name}: first query after restart: {str(exc).splitlines()[0]!r}")
        assert answers() == before
    finally:
        server.stop()
