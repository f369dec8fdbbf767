"""The Haystack peer rows of the evidence protocol pick what the Haystack components
pick when run directly on the same candidates (and ``DiverseRanker``'s row what the core
picks): the memoised, prefix-sharing pickers change nothing."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_cli.demo import load_corpus
from vrsd_core import DEFAULT_METHOD, method_options, select
from vrsd_eval.evidence import VARIANTS
from vrsd_eval.haystack_peers import ST_MMR_LAMBDA, haystack_peer_rows
from vrsd_kit.lexical import pool_relevance

QUERIES = ["Will an afternoon coffee keep me awake at night?", "How do plants make sugar?"]
N = 24


@pytest.fixture(scope="module")
def problem(model_path):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path)
    texts = [p.text for p in load_corpus()]
    vectors = model.encode(texts)
    out = []
    for query in QUERIES:
        q = model.encode(query).astype(np.float64)
        order = np.argsort(-(vectors @ q))[:N]  # a retriever's top N
        out.append((q, vectors[order].astype(np.float64), [texts[i] for i in order], query))
    return out


@pytest.fixture(scope="module", params=[False, True], ids=["given-vectors", "reembed"])
def rows(model_path, request):
    return haystack_peer_rows(model_path, max_k=10, reembed=request.param)


def _direct(model_path, strategy, texts, query, k):
    from haystack import Document
    from haystack_integrations.components.rankers.sentence_transformers import (
        SentenceTransformersDiversityRanker,
    )

    ranker = SentenceTransformersDiversityRanker(model=model_path, strategy=strategy,
                                                 lambda_threshold=ST_MMR_LAMBDA)
    docs = [Document(id=str(i), content=t) for i, t in enumerate(texts)]
    return [int(d.id) for d in ranker.run(query=query, documents=docs, top_k=k)["documents"]]


def test_rows(rows):
    assert list(rows) == ["haystack diversity greedy_diversity_order",
                          f"haystack diversity mmr({ST_MMR_LAMBDA})",
                          "haystack PyversityRanker (dpp, 0.5)", "haystack DiverseRanker (default)"]


@pytest.mark.parametrize(("label", "strategy"), [
    ("haystack diversity greedy_diversity_order", "greedy_diversity_order"),
    (f"haystack diversity mmr({ST_MMR_LAMBDA})", "maximum_margin_relevance"),
])
def test_diversity_rows_equal_the_component_run_directly(rows, problem, model_path, label,
                                                         strategy):
    """The candidates' vectors are the bundled model's: given or embedded again, the
    ranker sees the same geometry and must pick what it picks on its own."""
    for q, cands, texts, query in problem:
        for k in (2, 5, 10, 14):  # 14 > max_k: the picker runs further
            got = rows[label](q, cands, k, texts, query)
            assert got == _direct(model_path, strategy, texts, query, k)
            assert len(set(got)) == k


def test_pyversity_and_vrsd_rows_equal_their_references(rows, problem):
    from pyversity import diversify

    for q, cands, texts, query in problem:
        unit = cands / np.linalg.norm(cands, axis=1, keepdims=True)
        scores = unit @ (q / np.linalg.norm(q))
        for k in (3, 8):
            want = diversify(cands, scores, k, strategy="dpp", diversity=0.5).indices.tolist()
            assert rows["haystack PyversityRanker (dpp, 0.5)"](q, cands, k, texts, query) == want
            words = pool_relevance(query, texts, q, cands)  # the ranker reads them
            want = select(q, cands, k, method=DEFAULT_METHOD,
                          **words.select_keywords(method_options(DEFAULT_METHOD))
                          ).indices.tolist()
            assert rows["haystack DiverseRanker (default)"](q, cands, k, texts, query) == want


def test_given_vectors_embed_nothing(problem, model_path, monkeypatch):
    from sentence_transformers import SentenceTransformer

    rows = haystack_peer_rows(model_path, max_k=10)
    calls = []
    encode = SentenceTransformer.encode
    monkeypatch.setattr(SentenceTransformer, "encode",
                        lambda self, *a, **kw: calls.append(a) or encode(self, *a, **kw))
    q, cands, texts, query = problem[0]
    for label in ("haystack diversity greedy_diversity_order",
                  f"haystack diversity mmr({ST_MMR_LAMBDA})"):
        assert len(rows[label](q, cands, 5, texts, query)) == 5
    assert calls == []
    again = haystack_peer_rows(model_path, max_k=10, reembed=True)
    again["haystack diversity greedy_diversity_order"](q, cands, 5, texts, query)
    assert len(calls) == 2  # the texts, then the query: the spy can see an encode


def test_eval_haystack_writes_the_table_and_vrsd_ranker_matches_the_default(
        vrsd, data_dir, tmp_path):
    import json

    run = vrsd("eval", "haystack", "--data-dir", data_dir,
               "--limit", "12", "--fetch-k", "20", "--k", "2", "4", "--out", tmp_path,
               "--no-progress")
    assert run.code == 0, run.err
    table = (tmp_path / "haystack.md").read_text()
    assert run.out.strip() == table.strip()
    for label in ("similarity", "default", "haystack diversity greedy_diversity_order",
                  f"haystack diversity mmr({ST_MMR_LAMBDA})",
                  "haystack PyversityRanker (dpp, 0.5)", "haystack DiverseRanker (default)"):
        assert f"| {label} |" in table
    report = json.loads((tmp_path / "haystack.json").read_text())["minilm"]
    assert set(report) == set(VARIANTS)  # every corpus variant of the evidence protocol
    for variant in report.values():  # the Haystack component picks what the core picks
        for cells in variant["k"].values():
            assert cells["haystack DiverseRanker (default)"] == cells["default"]
