"""``reembed`` on the LlamaIndex side: nodes that arrive without vectors, which
neither they nor ``vector_store`` hold, are embedded again only as the policy
allows; a spy embedding model counts every call."""

from __future__ import annotations

import warnings

import pytest
from llama_index.core.schema import QueryBundle
from llama_index.core.vector_stores.simple import SimpleVectorStore

from vrsd_kit.stores import ReembeddingWarning
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

TOP_N, FETCH_K = 5, 20
NO_CALLS = {"query": 0, "aquery": 0, "batch": 0, "abatch": 0}


pytestmark = pytest.mark.usefixtures("fresh_reembed_warnings")


@pytest.fixture
def bare(simple_index, hf_embed, queries):
    """Candidates without vectors (the docstore strips them) and a bundle with the query's."""
    nodes = simple_index.as_retriever(similarity_top_k=FETCH_K).retrieve(queries[0])
    assert all(n.node.embedding is None for n in nodes)
    return nodes, QueryBundle(queries[0], embedding=hf_embed.get_query_embedding(queries[0]))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_warns_once_naming_the_reason(bare, spy, mode):
    nodes, bundle = bare
    post = DiversePostprocessor(top_n=TOP_N, embed_model=spy)
    run = post.postprocess_nodes if mode == "sync" else post.apostprocess_nodes
    with pytest.warns(ReembeddingWarning, match="no vector_store: the nodes came without "
                                                "embeddings and no vector_store was given"):
        out = run(nodes, query_bundle=bundle)
        out = await out if mode == "async" else out
    assert len(out) == TOP_N
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReembeddingWarning)
        out = run(nodes, query_bundle=bundle)
        await out if mode == "async" else out


class UnregisteredStore(SimpleVectorStore):
    """A store the registry does not know: its own class, and no vectors to give."""

    def get_nodes(self, node_ids=None, filters=None):  # noqa: ANN001, ANN201
        return []


def test_refuse_embeds_nothing_and_names_the_store(bare, spy):
    nodes, bundle = bare
    store = UnregisteredStore()
    post = DiversePostprocessor(top_n=TOP_N, embed_model=spy, vector_store=store,
                             reembed="refuse")
    spy.reset()
    with pytest.raises(ValueError, match="reembed: UnregisteredStore: the nodes came without "
                                         "embeddings and the store did not return them"):
        post.postprocess_nodes(nodes, query_bundle=bundle)
    assert spy.calls == NO_CALLS


def test_refuse_is_satisfied_by_the_store_vectors(simple_index, bare, spy):
    nodes, bundle = bare
    strict = DiversePostprocessor(top_n=TOP_N, embed_model=spy, reembed="refuse",
                               vector_store=simple_index.vector_store)
    spy.reset()
    out = strict.postprocess_nodes(nodes, query_bundle=bundle)
    assert len(out) == TOP_N and spy.calls == NO_CALLS
    retriever = DiverseRerankRetriever(simple_index.as_retriever(embed_model=spy), top_n=TOP_N,
                              fetch_k=FETCH_K, reembed="refuse")
    assert retriever.postprocessor.reembed == "refuse"
    assert len(retriever.retrieve(bundle.query_str)) == TOP_N


def test_allow_is_silent(bare, spy):
    nodes, bundle = bare
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReembeddingWarning)
        out = DiversePostprocessor(top_n=TOP_N, embed_model=spy, reembed="allow").postprocess_nodes(
            nodes, query_bundle=bundle)
    assert len(out) == TOP_N


def test_bad_policy_names_the_option():
    with pytest.raises(ValueError, match="reembed"):
        DiversePostprocessor(reembed="sometimes")
