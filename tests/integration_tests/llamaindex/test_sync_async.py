"""Every LlamaIndex entry point gives the same result sync and async on the same input,
along each I/O path of its one body (``vrsd_kit.steps``): the query and the nodes
embedded by the model, the nodes' vectors read back from the store, and
``DiverseRerankRetriever`` over a vector index; and the async run uses only the async model
calls."""

from __future__ import annotations

import pytest
from llama_index.core.schema import QueryBundle

from tests.helpers.approx import approx_scores
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

TOP_N, FETCH_K = 4, 16


def key(nodes):
    return [(n.node.node_id, n.score, n.node.metadata["vrsd"]) for n in nodes]


@pytest.mark.parametrize("from_store", [False, True], ids=["embedded", "from_store"])
@pytest.mark.filterwarnings("ignore::vrsd_kit.stores.ReembeddingWarning")
async def test_postprocessor_sync_equals_async(index, spy, queries, from_store):
    store = index.vector_store if from_store else None
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy, vector_store=store)
    for query in queries[:2]:
        nodes = index.as_retriever(similarity_top_k=FETCH_K).retrieve(query)
        spy.reset()
        want = postprocessor.postprocess_nodes(nodes, query_bundle=QueryBundle(query))
        assert spy.calls["aquery"] == spy.calls["abatch"] == 0
        got = await postprocessor.apostprocess_nodes(nodes, query_bundle=QueryBundle(query))
        assert spy.calls["aquery"] == 1 and spy.calls["abatch"] == spy.calls["batch"]
        assert len(want) == TOP_N and key(got) == approx_scores(key(want))


async def test_retriever_sync_equals_async(index, spy, queries):
    retriever = DiverseRerankRetriever(index.as_retriever(embed_model=spy), top_n=TOP_N,
                                       fetch_k=FETCH_K)
    for query in queries[:2]:
        want = retriever.retrieve(query)
        got = await retriever.aretrieve(query)
        assert len(want) == TOP_N and key(got) == approx_scores(key(want))


async def test_errors_are_the_same_sync_and_async(spy):
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy)
    with pytest.raises(ValueError, match="query_bundle") as sync_error:
        postprocessor.postprocess_nodes([], query_bundle=QueryBundle("  "))
    with pytest.raises(ValueError, match="query_bundle") as async_error:
        await postprocessor.apostprocess_nodes([], query_bundle=QueryBundle("  "))
    assert str(sync_error.value) == str(async_error.value)
