"""Where the candidate and query vectors come from, counted by a spy embedding
model (a real BaseEmbedding wrapping the bundled HuggingFace model)."""

from __future__ import annotations

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from vrsd_llamaindex import DiversePostprocessor

TOP_N = 5
FETCH_K = 20


def without_vectors(index, query: str) -> list[NodeWithScore]:
    nodes = index.as_retriever(similarity_top_k=FETCH_K).retrieve(query)
    assert all(n.node.embedding is None for n in nodes)  # both stores strip them
    return nodes


def with_vectors(nodes: list[NodeWithScore], vectors_by_id) -> list[NodeWithScore]:
    return [
        NodeWithScore(
            node=n.node.model_copy(update={"embedding": list(vectors_by_id[n.node.node_id])}),
            score=n.score,
        )
        for n in nodes
    ]


def ids(nodes):
    return [n.node.node_id for n in nodes]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_nodes_without_vectors_are_embedded_once(index, spy, vectors_by_id, queries,
                                                       mode):
    nodes = without_vectors(index, queries[0])
    bundle = QueryBundle(queries[0], embedding=spy._inner.get_query_embedding(queries[0]))
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy)
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
        assert spy.calls == {"query": 0, "aquery": 0, "batch": 1, "abatch": 0}
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle)
        assert spy.calls == {"query": 0, "aquery": 0, "batch": 0, "abatch": 1}
    # exactly the text the index embedded, once per node
    assert spy.texts == [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
    # and the vectors are the index's: the same picks as from stored vectors
    reference = DiversePostprocessor(top_n=TOP_N, embed_model=spy).postprocess_nodes(
        with_vectors(nodes, vectors_by_id), query_bundle=bundle
    )
    assert ids(out) == ids(reference)
    np.testing.assert_allclose([n.score for n in out], [n.score for n in reference], atol=1e-5)


def test_only_nodes_lacking_vectors_are_embedded(simple_index, spy, vectors_by_id, queries):
    nodes = without_vectors(simple_index, queries[1])
    mixed = [m if i % 2 else n
             for i, (n, m) in enumerate(zip(nodes, with_vectors(nodes, vectors_by_id),
                                            strict=True))]
    bundle = QueryBundle(queries[1], embedding=spy._inner.get_query_embedding(queries[1]))
    out = DiversePostprocessor(top_n=TOP_N, embed_model=spy).postprocess_nodes(mixed, bundle)
    assert spy.calls["batch"] == 1
    assert spy.texts == [n.node.get_content(metadata_mode=MetadataMode.EMBED)
                         for n in nodes[0::2]]
    spy.reset()
    full = DiversePostprocessor(top_n=TOP_N, embed_model=spy).postprocess_nodes(
        with_vectors(nodes, vectors_by_id), bundle
    )
    assert ids(out) == ids(full)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_nodes_with_vectors_and_embedded_query_need_no_model_calls(
    simple_index, spy, vectors_by_id, queries, mode
):
    nodes = with_vectors(without_vectors(simple_index, queries[1]), vectors_by_id)
    bundle = QueryBundle(queries[1], embedding=spy._inner.get_query_embedding(queries[1]))
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy)
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle)
    assert len(out) == TOP_N
    assert spy.calls == {"query": 0, "aquery": 0, "batch": 0, "abatch": 0}
    assert spy.texts == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_vector_store_lookup_avoids_re_embedding(index, spy, vectors_by_id, queries, mode):
    nodes = without_vectors(index, queries[0])
    bundle = QueryBundle(queries[0], embedding=spy._inner.get_query_embedding(queries[0]))
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy,
                                      vector_store=index.vector_store)
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle)
    assert spy.texts == []
    assert spy.calls["batch"] == spy.calls["abatch"] == 0
    reference = DiversePostprocessor(top_n=TOP_N, embed_model=spy).postprocess_nodes(
        with_vectors(nodes, vectors_by_id), query_bundle=bundle
    )
    assert ids(out) == ids(reference)


def test_store_without_some_ids_falls_back_to_embedding(simple_index, spy, vectors_by_id,
                                                        queries):
    """Nodes the store does not know (here: a node from outside the index) are embedded."""
    from llama_index.core.schema import TextNode

    nodes = without_vectors(simple_index, queries[0])
    stranger = NodeWithScore(node=TextNode(text="Photosynthesis needs sunlight.", id_="x"),
                             score=0.1)
    bundle = QueryBundle(queries[0], embedding=spy._inner.get_query_embedding(queries[0]))
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy,
                                      vector_store=simple_index.vector_store)
    postprocessor.postprocess_nodes([*nodes, stranger], query_bundle=bundle)
    assert spy.texts == [stranger.node.get_content(metadata_mode=MetadataMode.EMBED)]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_query_is_embedded_only_when_the_bundle_has_no_vector(
    simple_index, spy, vectors_by_id, queries, mode
):
    nodes = with_vectors(without_vectors(simple_index, queries[0]), vectors_by_id)
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy)
    bundle = QueryBundle(queries[0])  # what LlamaIndex's async retriever leaves behind
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
        assert spy.calls["query"] == 1
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle)
        assert spy.calls["aquery"] == 1
    assert spy.calls["query"] + spy.calls["aquery"] == 1
    assert bundle.embedding is None  # the caller's bundle is not written
    embedded = QueryBundle(queries[0], embedding=spy._inner.get_query_embedding(queries[0]))
    assert ids(out) == ids(postprocessor.postprocess_nodes(nodes, query_bundle=embedded))


def test_settings_embed_model_is_the_default(simple_index, spy, vectors_by_id, queries,
                                             settings_embed_model):
    nodes = without_vectors(simple_index, queries[0])
    settings_embed_model(spy)
    out = DiversePostprocessor(top_n=TOP_N).postprocess_nodes(nodes, query_str=queries[0])
    assert len(out) == TOP_N
    assert spy.calls["query"] == 1 and spy.calls["batch"] == 1


def test_unset_settings_embed_model_is_a_clear_error_only_when_needed(
    simple_index, vectors_by_id, hf_embed, queries, settings_embed_model
):
    """With no model anywhere, LlamaIndex would silently fall back to OpenAI; vrsd
    refuses instead, and only when a vector is actually missing."""
    settings_embed_model(None)
    postprocessor = DiversePostprocessor(top_n=TOP_N)  # constructing never resolves a model
    nodes = without_vectors(simple_index, queries[0])
    bundle = QueryBundle(queries[0], embedding=hf_embed.get_query_embedding(queries[0]))
    with pytest.raises(ValueError, match="embed_model"):
        postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
    with pytest.raises(ValueError, match="embed_model"):
        postprocessor.postprocess_nodes(with_vectors(nodes, vectors_by_id), query_str=queries[0])
    out = postprocessor.postprocess_nodes(with_vectors(nodes, vectors_by_id), query_bundle=bundle)
    assert len(out) == TOP_N


async def test_query_engine_embeds_the_query_as_often_as_llamaindex_makes_it(
    simple_index, spy, queries
):
    """Sync: the retriever leaves the query vector in the bundle, so it is embedded
    once. Async: LlamaIndex hands postprocessors a bundle without it, so the
    postprocessor embeds the query again (once). No candidate text is embedded
    when the store's vectors are used."""
    from llama_index.core.llms import MockLLM

    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=spy,
                                      vector_store=simple_index.vector_store)
    engine = simple_index.as_query_engine(similarity_top_k=FETCH_K, embed_model=spy,
                                          node_postprocessors=[postprocessor], llm=MockLLM())
    sync_ids = ids(engine.query(queries[0]).source_nodes)
    assert spy.calls == {"query": 1, "aquery": 0, "batch": 0, "abatch": 0}
    spy.reset()
    async_ids = ids((await engine.aquery(queries[0])).source_nodes)
    assert spy.calls == {"query": 0, "aquery": 2, "batch": 0, "abatch": 0}
    assert async_ids == sync_ids and spy.texts == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_vrsd_retriever_embeds_the_query_once(simple_index, spy, queries, mode):
    from vrsd_llamaindex import DiverseRerankRetriever

    retriever = DiverseRerankRetriever(simple_index.as_retriever(embed_model=spy), top_n=TOP_N,
                              fetch_k=FETCH_K)
    assert retriever.postprocessor.embed_model is spy  # the index retriever's own model
    if mode == "sync":
        out = retriever.retrieve(queries[0])
    else:
        out = await retriever.aretrieve(queries[0])
    assert len(out) == TOP_N
    assert spy.calls["query"] + spy.calls["aquery"] == 1
    assert spy.texts == []  # candidate vectors read from the index's store


def test_query_str_works(hf_embed, settings_embed_model):
    """``postprocess_nodes(nodes, query_str=...)`` embeds the string (Settings' model)."""
    settings_embed_model(hf_embed)
    texts = ["The sun gives plants light.", "The sun gives plants light!", "Rain waters crops."]
    nodes = [NodeWithScore(node=TextNode(text=t, id_=str(i)), score=0.5)
             for i, t in enumerate(texts)]
    out = DiversePostprocessor(top_n=2).postprocess_nodes(nodes, query_str="What do plants need?")
    assert len(out) == 2 and {"0", "1"} != {n.node.node_id for n in out}
