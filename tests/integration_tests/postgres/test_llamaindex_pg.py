"""LlamaIndex PGVectorStore on a real Postgres.

``DiverseRerankRetriever`` over ``index.as_retriever()`` reads the candidates' vectors in the
same query as the candidates (only the query is embedded); ``DiversePostprocessor``
with ``vector_store=`` reads them by node id. Either way the picks are
``vrsd_core.select``'s on the same candidates, with vectors read by separate SQL.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode

from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20


def _filters(split: str):
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    return MetadataFilters(filters=[MetadataFilter(key="split", value=split)])


def expected(case, sql, query, method, filters=None, **options):
    qvec = np.asarray(case.spy._inner.get_query_embedding(query))
    hits = case.index.as_retriever(similarity_top_k=FETCH_K, filters=filters,
                                   embed_model=case.spy._inner).retrieve(query)
    ids = [h.node.node_id for h in hits]
    got = dict(sql("SELECT node_id, embedding::text FROM data_arc_li WHERE node_id = ANY(%s)",
                   [ids]))
    vecs = np.stack([np.asarray(json.loads(got[i])) for i in ids])
    if method == DEFAULT_METHOD:  # the default reads the nodes' words too
        texts = [h.node.get_content(metadata_mode=MetadataMode.NONE) for h in hits]
        sel = default_selection(query, texts, qvec, vecs, K, **options)
    else:
        sel = select(qvec, vecs, K, method=method, **options)
    return [hits[i].node.metadata["row"] for i in sel.indices], sel


def rows(hits) -> list[int]:
    return [h.node.metadata["row"] for h in hits]


@pytest.mark.parametrize(("method", "options"),
                         [("vrsd", {}), ("mmr", {"lambda_mult": 0.3}), ("dpp", {})])
def test_retriever_equals_core_and_embeds_only_the_query(li_pgvector, sql, queries, method,
                                                         options):
    case = li_pgvector
    retriever = DiverseRerankRetriever(case.index.as_retriever(), top_n=K, fetch_k=FETCH_K,
                              method=method, method_kwargs=options)
    for query in queries[:3]:
        want, sel = expected(case, sql, query, method, **options)
        case.spy.reset()
        got = retriever.retrieve(query)
        assert rows(got) == want
        assert case.spy.counts == (1, 0)  # one query, no candidate text
        np.testing.assert_allclose([h.score for h in got], sel.relevance, atol=1e-5)


def test_retriever_filters_in_the_store_syntax(li_pgvector, sql, queries):
    case = li_pgvector
    retriever = DiverseRerankRetriever(case.index.as_retriever(filters=_filters("A")), top_n=K,
                              fetch_k=FETCH_K)
    for query in queries[:3]:
        case.spy.reset()
        got = retriever.retrieve(query)
        assert {h.node.metadata["split"] for h in got} == {"A"}
        assert rows(got) == expected(case, sql, query, DEFAULT_METHOD, filters=_filters("A"))[0]
        assert case.spy.counts == (1, 0)


async def test_async_retriever_matches_sync(li_pgvector, queries):
    retriever = DiverseRerankRetriever(li_pgvector.index.as_retriever(), top_n=K, fetch_k=FETCH_K)
    for query in queries[:2]:
        li_pgvector.spy.reset()
        assert rows(await retriever.aretrieve(query)) == rows(retriever.retrieve(query))


def test_callers_retriever_and_store_unchanged(li_pgvector, queries):
    inner = li_pgvector.index.as_retriever()
    store_before = inner._vector_store
    DiverseRerankRetriever(inner, top_n=K, fetch_k=FETCH_K).retrieve(queries[0])
    assert inner._vector_store is store_before
    assert inner.similarity_top_k != FETCH_K
    # The store's plain query still returns nodes without vectors, as it always did.
    plain = inner.retrieve(queries[0])
    assert all(h.node.embedding is None for h in plain)


def test_postprocessor_reads_vectors_from_the_store(li_pgvector, sql, queries):
    case = li_pgvector
    post = DiversePostprocessor(top_n=K, embed_model=case.spy, vector_store=case.store)
    base = case.index.as_retriever(similarity_top_k=FETCH_K)
    for query in queries[:2]:
        want, _ = expected(case, sql, query, DEFAULT_METHOD)
        case.spy.reset()
        hits = base.retrieve(query)
        assert all(h.node.embedding is None for h in hits)
        got = post.postprocess_nodes(hits, query_str=query)
        assert rows(got) == want
        assert case.spy.counts == (2, 0)  # the base retriever's query and the postprocessor's
