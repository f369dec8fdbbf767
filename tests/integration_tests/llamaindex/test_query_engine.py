"""DiversePostprocessor and DiverseRerankRetriever inside real query engines, checked against
``vrsd_core.select`` run independently on the candidates' vectors."""

from __future__ import annotations

import copy
import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle

from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

TOP_N = 5
FETCH_K = 20


def expected(index, hf_embed, vectors_by_id, query, method=DEFAULT_METHOD, **options):
    """(candidate ids in store order, the core's selection over their vectors)."""
    candidates = index.as_retriever(similarity_top_k=FETCH_K).retrieve(query)
    ids = [n.node.node_id for n in candidates]
    assert len(ids) == FETCH_K
    query_vector = np.asarray(hf_embed.get_query_embedding(query))
    vectors = np.stack([vectors_by_id[i] for i in ids])
    if method == DEFAULT_METHOD and not options:  # the default reads the nodes' words too
        texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in candidates]
        return ids, default_selection(query, texts, query_vector, vectors, TOP_N)
    return ids, select(query_vector, vectors, TOP_N, method=method, **options)


def check_against_core(nodes, ids, sel, method=DEFAULT_METHOD):
    assert [n.node.node_id for n in nodes] == [ids[i] for i in sel.indices]
    np.testing.assert_allclose([n.score for n in nodes], sel.relevance, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([n.node.metadata["vrsd"]["gain"] for n in nodes], sel.gains,
                               rtol=1e-5, atol=1e-6)
    assert [n.node.metadata["vrsd"]["rank"] for n in nodes] == list(range(TOP_N))
    assert {n.node.metadata["vrsd"]["method"] for n in nodes} == {method}


@pytest.mark.parametrize("use_store", [True, False], ids=["store-vectors", "re-embed"])
@pytest.mark.parametrize("mode", ["query", "aquery"])
async def test_query_engine_source_nodes_equal_core_selection(
    index, hf_embed, vectors_by_id, queries, mode, use_store
):
    postprocessor = DiversePostprocessor(
        top_n=TOP_N, embed_model=hf_embed, vector_store=index.vector_store if use_store else None
    )
    engine = index.as_query_engine(
        similarity_top_k=FETCH_K, node_postprocessors=[postprocessor], llm=MockLLM()
    )
    for query in queries:
        ids, sel = expected(index, hf_embed, vectors_by_id, query)
        response = engine.query(query) if mode == "query" else await engine.aquery(query)
        check_against_core(response.source_nodes, ids, sel)


def test_chroma_returns_nodes_without_vectors(chroma_index, queries):
    """The premise of the Chroma tests: the store's nodes carry no embedding."""
    nodes = chroma_index.as_retriever(similarity_top_k=FETCH_K).retrieve(queries[0])
    assert len(nodes) == FETCH_K
    assert all(n.node.embedding is None for n in nodes)


@pytest.mark.parametrize("method,options", [("mmr", {"lambda_mult": 0.5}), ("dpp", {}),
                                            ("similarity", {}), ("vrsd", {"refine": "swap"})])
def test_other_methods_through_the_query_engine(
    simple_index, hf_embed, vectors_by_id, queries, method, options
):
    postprocessor = DiversePostprocessor(top_n=TOP_N, method=method, method_kwargs=options,
                                      embed_model=hf_embed)
    engine = simple_index.as_query_engine(
        similarity_top_k=FETCH_K, node_postprocessors=[postprocessor], llm=MockLLM()
    )
    ids, sel = expected(simple_index, hf_embed, vectors_by_id, queries[1], method, **options)
    check_against_core(engine.query(queries[1]).source_nodes, ids, sel, method)


def test_vrsd_differs_from_plain_top_k_on_real_queries(simple_index, hf_embed, openbookqa):
    """On real data the diverse pick is not just the similarity top-5 (else the
    adapter would be decorative); checked over 10 queries, not one lucky query."""
    postprocessor = DiversePostprocessor(top_n=TOP_N, embed_model=hf_embed,
                                      vector_store=simple_index.vector_store)
    retriever = simple_index.as_retriever(similarity_top_k=FETCH_K)
    differ = 0
    for query in openbookqa.queries[:10]:
        nodes = retriever.retrieve(query)
        picked = {n.node.node_id for n in postprocessor.postprocess_nodes(nodes, query_str=query)}
        differ += picked != {n.node.node_id for n in nodes[:TOP_N]}
    assert differ > 0


@pytest.mark.parametrize("mode", ["retrieve", "aretrieve"])
async def test_retriever_equals_postprocessor(
    index, hf_embed, vectors_by_id, queries, mode
):
    base = index.as_retriever()  # LlamaIndex default top-k (2): DiverseRerankRetriever widens it
    default_top_k = base.similarity_top_k
    retriever = DiverseRerankRetriever(base, top_n=TOP_N, fetch_k=FETCH_K)
    for query in queries:
        ids, sel = expected(index, hf_embed, vectors_by_id, query)
        nodes = retriever.retrieve(query) if mode == "retrieve" else await retriever.aretrieve(
            query
        )
        check_against_core(nodes, ids, sel)
    assert base.similarity_top_k == default_top_k  # the caller's retriever is untouched


async def test_retriever_in_a_retriever_query_engine(simple_index, hf_embed, vectors_by_id,
                                                     queries):
    retriever = DiverseRerankRetriever(simple_index.as_retriever(), top_n=TOP_N, fetch_k=FETCH_K)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    ids, sel = expected(simple_index, hf_embed, vectors_by_id, queries[1])
    check_against_core(engine.query(queries[1]).source_nodes, ids, sel)
    check_against_core((await engine.aquery(queries[1])).source_nodes, ids, sel)


def test_retriever_concurrent_calls_do_not_interfere(simple_index, openbookqa):
    """Over-fetching works on per-call copies: threads asking different questions get
    the same answers as one thread, and the wrapped retriever keeps its top-k."""
    base = simple_index.as_retriever(similarity_top_k=3)
    retriever = DiverseRerankRetriever(base, top_n=TOP_N, fetch_k=FETCH_K)
    questions = openbookqa.queries[:6]
    serial = [[n.node.node_id for n in retriever.retrieve(q)] for q in questions]
    with ThreadPoolExecutor(max_workers=3) as pool:
        parallel = list(pool.map(lambda q: [n.node.node_id for n in retriever.retrieve(q)],
                                 questions))
    assert parallel == serial
    assert base.similarity_top_k == 3


def test_retriever_leaves_callers_bundle_alone(simple_index, queries):
    retriever = DiverseRerankRetriever(simple_index.as_retriever(), top_n=TOP_N, fetch_k=FETCH_K)
    bundle = QueryBundle(queries[0])
    before = copy.deepcopy(dataclasses.asdict(bundle))
    assert len(retriever.retrieve(bundle)) == TOP_N
    assert dataclasses.asdict(bundle) == before


def test_default_embed_model_is_the_bundled_model(hf_embed):
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from vrsd_kit.bundled_model import bundled_model_path
    from vrsd_llamaindex import default_embed_model

    model = default_embed_model(embed_batch_size=4)
    assert isinstance(model, HuggingFaceEmbedding)
    assert model.model_name == bundled_model_path() and model.embed_batch_size == 4
    text = "Plants need sunlight to grow."
    np.testing.assert_allclose(model.get_text_embedding(text), hf_embed.get_text_embedding(text),
                               atol=1e-6)


async def test_documented_one_line_usage(simple_index, hf_embed, vectors_by_id, queries,
                                         settings_embed_model):
    """The README line, with the model set the LlamaIndex way (Settings.embed_model)."""
    settings_embed_model(hf_embed)
    engine = simple_index.as_query_engine(
        similarity_top_k=20, node_postprocessors=[DiversePostprocessor(top_n=5)], llm=MockLLM()
    )
    ids, sel = expected(simple_index, hf_embed, vectors_by_id, queries[0])
    check_against_core(engine.query(queries[0]).source_nodes, ids, sel)
    check_against_core((await engine.aquery(queries[0])).source_nodes, ids, sel)
