"""1,000 mixed queries through every Postgres path leave every table exactly as it was.

Methods vrsd/mmr/dpp/similarity, k, fetch_k and filters vary per query (seeded);
the snapshot is every row of every table in the database (ids, vectors, text,
metadata, as JSON text) plus the list of tables, read on a separate connection.
"""

from __future__ import annotations

import random

import pytest

from vrsd_langchain import DiverseRetriever
from vrsd_llamaindex import DiverseRerankRetriever as LIRetriever

pytestmark = pytest.mark.slow

N_QUERIES = 1000
METHODS = ("vrsd", "mmr", "dpp", "similarity")


def snapshot(sql) -> dict[str, list[str]]:
    tables = [t for (t,) in sql(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
    )]
    return {
        t: [r for (r,) in sql(f"SELECT row_to_json(x)::text FROM {t} x ORDER BY 1")]
        for t in tables
    }


def test_mixed_queries_write_nothing(lc_pgvector, lc_pgvector_store, li_pgvector, sql, arc_da):
    from llama_index.core.schema import QueryBundle
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    texts = arc_da.queries[:40]
    vectors = lc_pgvector.spy.inner.embed_documents(texts)  # once; queries reuse them
    before = snapshot(sql)
    assert {"public.langchain_pg_embedding", "public.arc_v2", "public.data_arc_li"} <= set(before)
    assert len(before["public.langchain_pg_embedding"]) == 200

    rng = random.Random(12)
    returned = 0
    for i in range(N_QUERIES):
        method = METHODS[i % len(METHODS)]
        k = rng.randint(1, 6)
        fetch_k = rng.randint(k, 30)
        j = rng.randrange(len(texts))
        split = rng.choice([None, "A", "B"])
        target = i % 3
        if target < 2:
            case = (lc_pgvector, lc_pgvector_store)[target]
            kwargs = {"filter": {"split": {"$eq": split}}} if split else {}
            retriever = DiverseRetriever(vectorstore=case.store, k=k, fetch_k=fetch_k,
                                      method=method, search_kwargs=kwargs,
                                      embeddings=case.spy.inner)
            docs = retriever.invoke(texts[j])
            assert all(d.metadata["split"] == split for d in docs if split)
            returned += len(docs)
        else:
            filters = (MetadataFilters(filters=[MetadataFilter(key="split", value=split)])
                       if split else None)
            retriever = LIRetriever(li_pgvector.index.as_retriever(filters=filters), top_n=k,
                                    fetch_k=fetch_k, method=method)
            hits = retriever.retrieve(QueryBundle(query_str=texts[j], embedding=vectors[j]))
            assert all(h.node.metadata["split"] == split for h in hits if split)
            returned += len(hits)
    assert returned > N_QUERIES  # the queries did return results
    assert snapshot(sql) == before
