"""Per-candidate inputs read from the documents: outside relevance and the per-source cap.

Each result is checked against ``select`` on the same candidates with the same
per-candidate arrays; the bad-input cases name the argument.
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from tests.helpers.approx import approx_scores, results
from vrsd_core import select
from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore

from .conftest import row_of

QUERY = "How do plants make their food?"
K, FETCH_K = 4, 20


@pytest.fixture(scope="module")
def scored_store(corpus_docs, embeddings):
    """InMemory store whose documents carry a numeric "score" and a coarse "source"
    (five rows share one source), as a hybrid store or a chunker would write them."""
    docs = copy.deepcopy(corpus_docs[:120])
    for doc in docs:
        row = row_of(doc)
        doc.metadata["score"] = float((row * 37) % 11) / 10.0
        doc.metadata["source"] = f"doc-{row // 5}"
    store = InMemoryVectorStore(embeddings)
    store.add_documents(docs)
    return store


def candidates(store, embeddings, n=FETCH_K):
    qvec = np.asarray(embeddings.embed_query(QUERY))
    hits = store._similarity_search_with_score_by_vector(embedding=qvec.tolist(), k=n)
    return qvec, [d for d, _, _ in hits], np.asarray([v for _, _, v in hits])


def test_relevance_from_a_metadata_field(scored_store, embeddings):
    qvec, docs, vecs = candidates(scored_store, embeddings)
    got = DiverseRetriever(vectorstore=scored_store, k=K, fetch_k=FETCH_K, method="mmr",
                        method_kwargs={"lambda_mult": 0.7}, relevance="score").invoke(QUERY)
    scores = [d.metadata["score"] for d in docs]
    sel = select(qvec, vecs, K, method="mmr", lambda_mult=0.7, relevance=scores)
    assert [row_of(d) for d in got] == [row_of(docs[i]) for i in sel.indices]
    # the entry reports the relevance the method used
    assert [d.metadata["vrsd"]["relevance"] for d in got] == pytest.approx(
        [scores[i] for i in sel.indices])
    # it changes the result (the store's order is not the scores' order)
    plain = DiverseRetriever(vectorstore=scored_store, k=K, fetch_k=FETCH_K, method="mmr",
                          method_kwargs={"lambda_mult": 0.7}).invoke(QUERY)
    assert [row_of(d) for d in plain] != [row_of(d) for d in got]


def test_relevance_from_a_callable_on_query_and_documents(scored_store, embeddings):
    qvec, docs, vecs = candidates(scored_store, embeddings)
    seen = []

    def by_length(query, documents):  # e.g. a cross-encoder would score (query, text)
        seen.append((query, [d.id for d in documents]))
        return [len(d.page_content) / 100 for d in documents]

    retriever = DiverseVectorStore(scored_store).as_retriever(
        search_type="dpp", search_kwargs={"k": K, "fetch_k": FETCH_K, "relevance": by_length})
    got = retriever.invoke(QUERY)
    assert seen == [(QUERY, [d.id for d in docs])]
    sel = select(qvec, vecs, K, method="dpp",
                 relevance=[len(d.page_content) / 100 for d in docs])
    assert [row_of(d) for d in got] == [row_of(docs[i]) for i in sel.indices]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"method": "vrsd", "relevance": "score"}, "relevance: method 'vrsd'"),
        ({"method": "mmr", "relevance": 5}, "relevance: give the name of a metadata field"),
        ({"group_by": "source"}, "max_per_group: group_by"),
        ({"max_per_group": 2}, "group_by: group_by"),
        ({"group_by": "source", "max_per_group": 0}, "max_per_group: expected an integer >= 1"),
        ({"group_by": 3.5, "max_per_group": 1}, "group_by: give the name"),
    ],
)
def test_bad_per_candidate_settings_fail_at_construction(scored_store, settings, message):
    with pytest.raises(ValueError, match=message):
        DiverseRetriever(vectorstore=scored_store, **settings)


@pytest.mark.parametrize(
    ("relevance", "message"),
    [
        ("missing_field", "relevance: candidate .* has no metadata field 'missing_field'"),
        (lambda q, docs: [0.5] * (len(docs) - 1), "relevance: expected 20 values"),
        (lambda q, docs: [float("nan")] * len(docs), "relevance: candidate 0 has nan"),
        (lambda q, docs: ["high"] * len(docs), "relevance: candidate 0 has 'high'"),
    ],
)
def test_bad_relevance_values_are_named_at_query_time(scored_store, relevance, message):
    retriever = DiverseRetriever(vectorstore=scored_store, k=K, fetch_k=FETCH_K,
                              method="mmr", relevance=relevance)
    with pytest.raises(ValueError, match=message):
        retriever.invoke(QUERY)


@pytest.mark.parametrize("method", ["similarity", "vrsd", "mmr", "dpp", "cluster", "top_m"])
def test_group_cap_on_every_method(scored_store, embeddings, method):
    qvec, docs, vecs = candidates(scored_store, embeddings)
    options = {"seed": 0} if method == "top_m" else {}
    got = DiverseRetriever(vectorstore=scored_store, k=6, fetch_k=FETCH_K, method=method,
                        method_kwargs=options, group_by="source", max_per_group=1,
                        ).invoke(QUERY)
    sources = [d.metadata["source"] for d in got]
    assert max(Counter(sources).values()) == 1
    sel = select(qvec, vecs, 6, method=method, groups=[d.metadata["source"] for d in docs],
                 max_per_group=1, **options)
    assert [row_of(d) for d in got] == [row_of(docs[i]) for i in sel.indices]


def test_group_by_callable_and_per_call_override(scored_store):
    retriever = DiverseRetriever(vectorstore=scored_store, k=6, fetch_k=FETCH_K,
                              method="similarity")
    by_callable = retriever.invoke(QUERY, group_by=lambda d: d.metadata["source"],
                                   max_per_group=1)
    by_field = retriever.invoke(QUERY, group_by="source", max_per_group=1)
    assert results(by_callable) == approx_scores(results(by_field))
    assert max(Counter(d.metadata["source"] for d in by_field).values()) == 1
    assert retriever.group_by is None  # the per-call override left the field alone


def test_cap_that_leaves_fewer_than_k_returns_fewer(embeddings):
    store = InMemoryVectorStore(embeddings)
    store.add_documents([
        Document(page_content=f"Photosynthesis fact number {i}.", metadata={"source": s})
        for i, s in enumerate("AAABBB")
    ])
    got = DiverseRetriever(vectorstore=store, k=5, fetch_k=6, group_by="source",
                        max_per_group=1).invoke(QUERY)
    assert sorted(d.metadata["source"] for d in got) == ["A", "B"]


def test_ensemble_bm25_and_dense_feeding_the_compressor_with_hybrid_relevance(
    scored_store, corpus_docs, embeddings
):
    """A LangChain EnsembleRetriever (BM25 + dense) feeds DiverseCompressor, whose MMR
    weighs a hybrid relevance (cosine blended with normalised BM25) instead of cosine."""
    from langchain_classic.retrievers import ContextualCompressionRetriever, EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from rank_bm25 import BM25Okapi

    docs = copy.deepcopy(corpus_docs[:120])
    bm25 = BM25Retriever.from_documents(docs, k=10)
    dense = InMemoryVectorStore.from_documents(docs, embeddings).as_retriever(
        search_kwargs={"k": 10})
    ensemble = EnsembleRetriever(retrievers=[bm25, dense], weights=[0.5, 0.5])
    calls = []

    def hybrid(query, documents):
        calls.append(len(documents))
        lexical = BM25Okapi([d.page_content.lower().split() for d in documents]).get_scores(
            query.lower().split())
        lexical = lexical / lexical.max() if lexical.max() > 0 else lexical
        q = np.asarray(embeddings.embed_query(query))
        v = np.asarray(embeddings.embed_documents([d.page_content for d in documents]))
        cosine = v @ q / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))
        return 0.5 * cosine + 0.5 * lexical

    compressor = DiverseCompressor(embeddings=embeddings, k=K, method="mmr",
                                method_kwargs={"lambda_mult": 0.7}, relevance=hybrid)
    pipeline = ContextualCompressionRetriever(base_compressor=compressor,
                                              base_retriever=ensemble)
    got = pipeline.invoke(QUERY)
    fused = ensemble.invoke(QUERY)
    assert len(got) == K and calls == [len(fused)]
    q = np.asarray(embeddings.embed_query(QUERY))
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in fused]))
    sel = select(q, vecs, K, method="mmr", lambda_mult=0.7, relevance=hybrid(QUERY, fused))
    assert [d.page_content for d in got] == [fused[i].page_content for i in sel.indices]


def test_search_by_vector_refuses_a_relevance_callable(scored_store, embeddings):
    # a search by vector has no query text to give the callable (not "" in its place)
    qvec = embeddings.embed_query(QUERY)
    calls = []

    def scorer(query, docs):
        calls.append(query)
        return [1.0] * len(docs)

    store = DiverseVectorStore(scored_store)
    with pytest.raises(ValueError, match="^relevance: "):
        store.max_marginal_relevance_search_by_vector(qvec, k=K, fetch_k=FETCH_K,
                                                      relevance=scorer)
    assert calls == []
    # a metadata field has no need of the text
    got = store.max_marginal_relevance_search_by_vector(qvec, k=K, fetch_k=FETCH_K,
                                                        relevance="score")
    assert len(got) == K
