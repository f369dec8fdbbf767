"""DiverseCompressor behind ContextualCompressionRetriever over a BM25 retriever."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_community.retrievers import BM25Retriever

from tests.helpers.approx import approx_scores, results
from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_langchain import METADATA_KEY, DiverseCompressor, DiverseRetriever, EmbeddingCache

K, FETCH = 4, 20
QUERY = "What causes the seasons on Earth?"


def rows(docs) -> list[int]:
    return [int(d.metadata["row"]) for d in docs]


@pytest.fixture(scope="module")
def bm25(corpus_docs):
    return BM25Retriever.from_documents(copy.deepcopy(corpus_docs), k=FETCH)


@pytest.fixture
def spy(make_spy):
    return make_spy()


def test_reranks_bm25_output_like_the_core(bm25, spy, embeddings):
    retriever = ContextualCompressionRetriever(
        base_compressor=DiverseCompressor(embeddings=spy, k=K), base_retriever=bm25
    )
    got = retriever.invoke(QUERY)
    base = bm25.invoke(QUERY)
    qvec = np.asarray(embeddings.embed_query(QUERY))
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in base]))
    sel = default_selection(QUERY, [d.page_content for d in base], qvec, vecs, K)
    assert rows(got) == [rows(base)[i] for i in sel.indices]
    assert [d.metadata[METADATA_KEY]["rank"] for d in got] == list(range(K))
    np.testing.assert_allclose([d.metadata[METADATA_KEY]["gain"] for d in got], sel.gains,
                               atol=1e-6)
    assert (spy.query_calls, spy.document_calls, spy.documents_embedded) == (1, 1, FETCH)
    # The second time, the documents come from the cache.
    assert results(retriever.invoke(QUERY)) == approx_scores(results(got))
    assert (spy.query_calls, spy.document_calls) == (2, 1)


async def test_async_compression_matches_sync(bm25, spy):
    retriever = ContextualCompressionRetriever(
        base_compressor=DiverseCompressor(embeddings=spy, k=K, method="mmr",
                                       method_kwargs={"lambda_mult": 0.4}),
        base_retriever=bm25,
    )
    got = await retriever.ainvoke(QUERY)
    assert {d.metadata[METADATA_KEY]["method"] for d in got} == {"mmr"}
    assert results(got) == approx_scores(results(retriever.invoke(QUERY)))


def test_input_documents_are_untouched_and_edge_cases(bm25, spy):
    docs = bm25.invoke(QUERY)
    snapshot = copy.deepcopy(docs)
    compressor = DiverseCompressor(embeddings=spy, k=3)
    out = compressor.compress_documents(docs, QUERY)
    assert len(out) == 3 and docs == snapshot
    assert all(METADATA_KEY not in d.metadata for d in docs)
    assert compressor.compress_documents([], QUERY) == []
    with pytest.raises(ValueError, match=r"k: expected an integer >= 1, got 0"):
        DiverseCompressor(embeddings=spy, k=0)
    assert len(DiverseCompressor(embeddings=spy, k=50).compress_documents(docs, QUERY)) == FETCH


def test_shares_a_cache_with_a_retriever(hidden_store_cls, spy, corpus_docs):
    store = hidden_store_cls(spy)
    store.add_texts([d.page_content for d in corpus_docs[:50]],
                    [dict(d.metadata) for d in corpus_docs[:50]])
    cache = EmbeddingCache()
    retriever = DiverseRetriever(vectorstore=store, k=10, fetch_k=10, method="similarity",
                              cache=cache)
    docs = retriever.invoke(QUERY)
    spy.reset()
    DiverseCompressor(embeddings=spy, k=3, cache=cache).compress_documents(docs, QUERY)
    assert spy.document_calls == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"k": -2}, "k: expected an integer >= 1"),
        ({"k": 2.0}, "k: expected an integer >= 1, got 2.0"),
        ({"k": True}, "k: expected an integer >= 1, got True"),
        ({"k": "3"}, "k: expected an integer >= 1, got '3'"),
        ({"method": "vrsd2"}, "method: unknown method"),
        ({"method": "dpp", "method_kwargs": {"lambda_mult": 0.5}}, "lambda_mult: not an option"),
    ],
)
def test_bad_settings_fail_at_construction(spy, settings, message):
    with pytest.raises(ValueError, match=message):
        DiverseCompressor(embeddings=spy, **settings)


async def test_the_default_over_a_hybrid_search(corpus_docs, spy, embeddings):
    """docs/adapters.md "Over a hybrid search you already run": an EnsembleRetriever of
    BM25 (no vectors) and a dense store feeds the default. Each candidate is embedded
    once, keeps its id, and the result is the core's default on the hybrid's candidates
    with the relevance from their vectors and their words; async gives the same."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_kit.lexical import pool_relevance, tokenize
    from vrsd_kit.rerank import pool_keywords

    docs = copy.deepcopy(corpus_docs[:120])
    bm25 = BM25Retriever.from_documents(docs, k=10, preprocess_func=tokenize)
    dense = InMemoryVectorStore.from_documents(docs, embeddings).as_retriever(
        search_kwargs={"k": 10})
    hybrid = EnsembleRetriever(retrievers=[bm25, dense])
    retriever = ContextualCompressionRetriever(
        base_compressor=DiverseCompressor(embeddings=spy, k=K), base_retriever=hybrid)
    got = retriever.invoke(QUERY)
    fused = hybrid.invoke(QUERY)
    assert len(fused) > 10  # the two sides differ
    assert (spy.document_calls, spy.documents_embedded) == (1, len(fused))
    assert all(d.id == f"arc-{d.metadata['row']}" for d in got)  # BM25's copies keep ids
    q = np.asarray(embeddings.embed_query(QUERY))
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in fused]))
    texts = [d.page_content for d in fused]
    words = pool_relevance(QUERY, texts, q, vecs)
    keywords, _ = pool_keywords(DEFAULT_METHOD, words, texts)  # what the rerank body builds
    sel = select(q, vecs, K, method=DEFAULT_METHOD, **keywords)
    assert rows(got) == [rows(fused)[i] for i in sel.indices]
    for doc, i, fused_relevance in zip(got, sel.indices, sel.relevance, strict=True):
        entry = doc.metadata[METADATA_KEY]
        assert entry["cosine"] == pytest.approx(words.cosine[i], abs=1e-6)
        assert entry["lexical"] == pytest.approx(words.lexical[i])
        assert entry["relevance"] == pytest.approx(fused_relevance, abs=1e-6)
    assert rows(await retriever.ainvoke(QUERY)) == rows(got)
    assert spy.document_calls == 1  # the second call's candidates came from the cache
