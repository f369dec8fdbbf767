"""``vrsd_eval.pools``: a protocol's rows pick what the rerank body picks (the same keywords,
``vrsd_kit.rerank.pool_keywords``), question by question, on pools holding copies; and
``score`` counts evidence in paragraphs, ``pool_reach`` what a whole pool holds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from langchain_core.documents import Document

from vrsd_eval.evidence import WORDS_ROWS
from vrsd_eval.methods import MethodSpec
from vrsd_eval.pools import Pools, pool_reach, score, select_rows
from vrsd_kit.lexical import pool_relevance
from vrsd_kit.rerank import rerank
from vrsd_kit.settings import build_settings
from vrsd_langchain.candidates import DocumentView

SENTENCES = [
    "Caffeine has a half-life of about five hours in healthy adults.",
    "Alcohol fragments the second half of the night's sleep.",
    "Tim Burton directed Ed Wood, a film about a director of cheap films.",
    "Ed Wood was an American filmmaker known for low-budget science fiction.",
    "Blue light from screens delays the release of melatonin in the evening.",
    "A warm bath two hours before bed helps the body cool down later.",
]
QUESTIONS = ["Who directed the film about Ed Wood?", "Does coffee in the afternoon hurt sleep?"]


@pytest.fixture(scope="module")
def pools() -> Pools:
    """Two pools of 9: the sentences, two copies with another first word, one near-copy
    vector; random vectors near each question."""
    rng = np.random.default_rng(5)
    texts = [*SENTENCES, "Indeed " + SENTENCES[2], "Indeed " + SENTENCES[0],
             SENTENCES[3] + " He died in 1978."]
    queries, vectors, signals, pool_texts = [], [], [], []
    for question in QUESTIONS:
        q = rng.normal(size=16)
        C = q + rng.normal(scale=1.2, size=(len(texts), 16))
        C[6] = C[2] + rng.normal(scale=0.05, size=16)  # a copy whose vector differs a little
        queries.append(q)
        vectors.append(C)
        signals.append(pool_relevance(question, texts, q, C))
        pool_texts.append(list(texts))
    return Pools(np.array(queries), np.tile(np.arange(len(texts)) + 100, (2, 1)),
                 np.array(vectors), None, None, signals, pool_texts)


def adapter_rows(pools: Pools, b: int, **settings: object) -> list[int]:
    docs = [Document(page_content=t, metadata={"row": int(r)})
            for t, r in zip(pools.texts[b], pools.rows[b], strict=True)]
    out = rerank(DocumentView(), docs, query=QUESTIONS[b], query_vector=pools.queries[b],
                 vectors=pools.vectors[b], settings=build_settings(settings))
    return [d.metadata["row"] for d in out]


@pytest.mark.parametrize("k", [2, 4, 7, 9])
@pytest.mark.parametrize(("row", "lexical"), [("default", True), ("default-vectors", False)])
def test_default_rows_pick_what_the_rerank_body_picks(pools, k, row, lexical):
    got = select_rows(pools, WORDS_ROWS[row], k)
    for b in range(len(QUESTIONS)):
        assert got[b].tolist() == adapter_rows(pools, b, k=k, lexical=lexical)


def test_the_judge_closes_a_copy_in_the_rows(pools):
    """With every candidate asked for, the default leaves out the copies the judge closes
    (the rows equal the rerank body's, which keeps no copy of a pick)."""
    got = select_rows(pools, WORDS_ROWS["default"], 9)
    assert all(len(rows) < 9 for rows in got)


def test_a_budget_reads_each_questions_own_counts(pools):
    counts = np.array([[len(t.split()) for t in texts] for texts in pools.texts])
    counts[1] *= 2
    got = select_rows(pools, MethodSpec("similarity", "similarity"), 9, max_tokens=30,
                      token_counts=counts)
    for b in range(len(QUESTIONS)):
        assert counts[b][got[b] - 100].sum() <= 30
        words = lambda text, b=b: len(text.split()) * (1 + b)  # noqa: E731
        assert got[b].tolist() == adapter_rows(pools, b, k=9, method="similarity",
                                               max_tokens=30, token_counter=words)


def test_score_counts_evidence_in_paragraphs():
    owner = np.array([0, 0, 1, 2, 2])
    assert score([0, 1], owner, [0, 2]) == (0.5, False)
    assert score([1, 3], owner, [0, 2]) == (1.0, True)


def test_the_reach_is_what_every_pool_holds_whole(pools):
    """Question 0's pool holds one of its two units, question 1's both: recall (0.5 + 1) / 2,
    one question of two with all its evidence; and no selection of a pool finds more."""
    owner = np.full(200, 9)
    owner[100:109] = np.arange(9)  # each of the nine candidates its own unit
    gold = [[2, 50], [0, 3]]
    assert pool_reach(pools, owner, gold) == (0.75, 0.5)
    assert pool_reach(replace(pools, rows=pools.rows[:0]), owner, []) == (0.0, 0.0)
    for k in (2, 4, 9):
        for b, rows in enumerate(select_rows(pools, WORDS_ROWS["default"], k)):
            assert score(rows, owner, gold[b])[0] <= score(pools.rows[b], owner, gold[b])[0]
