"""The hybrid-search rows of the evidence protocol on a 6-question slice (LSA: no model
to load): each row equals the LangChain call a user would make, question by question,
at every k and at token budgets, and the budgets hold."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import select
from vrsd_eval import budget as be
from vrsd_eval.evidence import EVIDENCE_KS, evaluate_evidence, evidence_specs, load_evidence_corpora
from vrsd_eval.hybrid import DEFAULT_OVER_HYBRID, HYBRID, HYBRID_ROWS, HybridSearch
from vrsd_eval.pools import build_pools, score
from vrsd_kit.lexical import tokenize
from vrsd_kit.tokens import approx_token_count, count_tokens

LIMIT, FETCH = 6, 50
ROWS = ["default", "similarity"]


@pytest.fixture(scope="module")
def corpora(data_dir):
    pytest.importorskip("sklearn")
    pytest.importorskip("rank_bm25")
    from vrsd_eval.geometries import geometry

    out = []
    for corpus in load_evidence_corpora(data_dir, limit=LIMIT):
        embeddings = geometry("lsa").fit(corpus.texts)
        pools = build_pools(corpus.texts, corpus.questions, embeddings, FETCH, show=False)
        out.append((corpus, pools, HybridSearch(corpus.texts, pools)))
    return out


def _rows(documents):
    return [d.metadata["row"] for d in documents]


def _user_ensemble(corpus, pools, each):
    """The hybrid search as a user builds it: BM25 over the whole corpus + the dense store."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever

    bm25 = BM25Retriever.from_texts(corpus.texts,
                                    metadatas=[{"row": i} for i in range(len(corpus.texts))],
                                    preprocess_func=tokenize, k=each)
    return EnsembleRetriever(retrievers=[bm25, pools.store.as_retriever(search_kwargs={"k": each})])


def _user_compression(corpus, pools, k, **budget):
    from langchain_classic.retrievers import ContextualCompressionRetriever

    from vrsd_langchain import DiverseCompressor

    return ContextualCompressionRetriever(
        base_compressor=DiverseCompressor(embeddings=pools.embeddings, k=k, **budget),
        base_retriever=_user_ensemble(corpus, pools, FETCH // 2))


def test_the_rows_are_the_users_langchain_calls(corpora):
    for corpus, pools, hybrid in corpora:
        ensembles = {k: _user_ensemble(corpus, pools, k) for k in EVIDENCE_KS}
        diverse = {k: _user_compression(corpus, pools, k) for k in EVIDENCE_KS}
        longest = 0
        for question in corpus.questions:
            got = hybrid.rows_at_k(question, EVIDENCE_KS)
            for k in EVIDENCE_KS:
                fused = _rows(ensembles[k].invoke(question))
                longest = max(longest, len(fused) - k)
                assert got[HYBRID][k] == fused[:k], (corpus.name, question, k)
                assert got[DEFAULT_OVER_HYBRID][k] == _rows(diverse[k].invoke(question)), (
                    corpus.name, question, k)
        assert longest > 0  # the two sides differ: a fusion has more than k, cut to k


def test_the_rows_in_the_protocol(corpora):
    for corpus, pools, hybrid in corpora:
        res = evaluate_evidence(corpus, pools, evidence_specs(ROWS), hybrid=hybrid, show=False)
        assert res.labels[-2:] == list(HYBRID_ROWS) and set(HYBRID_ROWS) <= set(res.peers)
        assert set(HYBRID_ROWS) <= set(res.words)  # never "the best by vectors only"
        owner = np.asarray(corpus.passage_of)
        for qi, question in enumerate(corpus.questions):
            got = hybrid.rows_at_k(question, EVIDENCE_KS)
            for label in HYBRID_ROWS:
                for k in EVIDENCE_KS:
                    assert (res.recall[k][label][qi], res.complete[k][label][qi]) == score(
                        got[label][k], owner, corpus.gold[qi])
        # the hybrid is not top-k under another name
        assert any((res.recall[k][HYBRID] != res.recall[k]["similarity"]).any()
                   for k in EVIDENCE_KS)
        # without peers, no hybrid rows
        bare = evaluate_evidence(corpus, pools, evidence_specs(ROWS), ks=(2,), peers=False,
                                 show=False)
        assert bare.labels == ROWS


def test_fill_to_budget_is_the_filled_ranked_list():
    # 1 does not fit after 3: skipped for 2 and 0 (cutting from the tail keeps [3])
    assert be.fill_to_budget([3, 1, 2, 0], [10, 50, 5, 40], 60) == [3, 2, 0]
    assert be.fill_to_budget([2, 0, 1], [5, 50, 9], 20) == [2, 0]  # 1 (50) does not fit
    rng = np.random.default_rng(0)
    for _ in range(20):
        vectors, q = rng.standard_normal((30, 8)), rng.standard_normal(8)
        counts = rng.integers(10, 200, size=30)
        order = select(q, vectors, 30, method="similarity").indices.tolist()
        for budget in (0, 150, 400, 10_000):
            filled = select(q, vectors, 30, method="similarity", max_tokens=budget,
                            token_counts=counts).indices.tolist()
            assert be.fill_to_budget(order, counts, budget) == filled


def test_the_rows_at_token_budgets(corpora):
    for corpus, pools, hybrid in corpora:
        budgets = be.passage_budgets(corpus)
        res = be.evaluate_budgets(corpus, pools, evidence_specs(ROWS), budgets, hybrid=hybrid,
                                  show=False)
        counts = count_tokens(approx_token_count, corpus.texts)
        owner = np.asarray(corpus.passage_of)
        for b in budgets:
            for label in HYBRID_ROWS:
                assert res.tokens[b][label].max() <= b, (corpus.name, label, b)
                assert res.tokens[b][label].min() > 0  # something fits every budget
        ensemble = _user_ensemble(corpus, pools, FETCH // 2)
        for qi, question in enumerate(corpus.questions):
            fused = _rows(ensemble.invoke(question))
            for b in budgets:
                filled = be.fill_to_budget(fused, counts, b)
                assert (res.recall[b][HYBRID][qi], res.complete[b][HYBRID][qi]) == score(
                    filled, owner, corpus.gold[qi])
                direct = _rows(_user_compression(corpus, pools, FETCH, max_tokens=b).invoke(
                    question))
                assert res.tokens[b][DEFAULT_OVER_HYBRID][qi] == counts[direct].sum()
                assert (res.recall[b][DEFAULT_OVER_HYBRID][qi],
                        res.complete[b][DEFAULT_OVER_HYBRID][qi]) == score(
                    direct, owner, corpus.gold[qi])


def test_the_compressor_embeds_each_text_once_per_corpus(corpora):
    """The default over the hybrid reads the candidates' vectors through one cache per
    corpus: a question asked again embeds nothing."""
    corpus, _, hybrid = corpora[0]
    hybrid.rows_at_k(corpus.questions[0], EVIDENCE_KS)
    misses = hybrid.cache.misses
    hybrid.rows_at_k(corpus.questions[0], EVIDENCE_KS)
    assert hybrid.cache.misses == misses and hybrid.cache.hits > 0
