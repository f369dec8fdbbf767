"""Pseudo-relevance feedback (``vrsd_eval.prf``, RM3) on hand-built pools: the words it
adds, their weights, and what the expanded query finds that the question's words miss."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_eval.prf import expanded_bm25, rm3_query, with_feedback
from vrsd_kit.lexical import bm25

QUESTION = "who directed ed wood"
# 19 passages that share "the", "by" and "river" (in more than a tenth of the pool: no
# feedback word) and one word of their own each; none holds a question word
FILLER = [f"the {word} met by the river" for word in (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
    "rho sigma tau").split()]


def test_one_feedback_passage_gives_its_rare_words_and_the_question_keeps_its_weight():
    texts = ["Ed Wood directed by Tim Burton Burton", *FILLER]  # 20: a word in <= 2 passes
    got = rm3_query(QUESTION, texts, fb_docs=1)
    # the feedback passage's words but "by" (in all 20), each its count over 6
    # ("burton" 2/6, the others 1/6); half of it, plus half the question's (1/4 each)
    expected = {"who": 0.125, "directed": 0.125 + 1 / 12, "ed": 0.125 + 1 / 12,
                "wood": 0.125 + 1 / 12, "tim": 1 / 12, "burton": 1 / 6}
    assert got.keys() == expected.keys()
    for word, weight in expected.items():
        assert got[word] == pytest.approx(weight, abs=1e-12), word
    assert sum(got.values()) == pytest.approx(1.0, abs=1e-12)


def test_fb_terms_keeps_the_most_frequent_words_the_first_written_on_a_tie():
    texts = ["Ed Wood directed by Tim Burton Burton", *FILLER]
    got = rm3_query(QUESTION, texts, fb_docs=1, fb_terms=2)
    # the passage pruned to "burton" (2) and "ed" (1, written first of the ties): 2/3, 1/3
    assert got == pytest.approx({"who": 0.125, "directed": 0.125, "ed": 0.125 + 1 / 6,
                                 "wood": 0.125, "burton": 1 / 3}, abs=1e-12)


def test_three_feedback_passages_weigh_by_their_score_and_bring_the_bridge_in():
    texts = [
        "Ed Wood film directed by Tim Burton",
        "Ed Wood the director of Glenda",
        "Ed Wood stars Johnny Depp",
        "Tim Burton married Helena Bonham Carter",  # the bridge: no question word
        *FILLER[:16],
    ]
    scores = bm25(QUESTION, texts)
    top = np.argsort(-scores, kind="stable")[:3].tolist()
    assert sorted(top) == [0, 1, 2] and scores[3] == pytest.approx(0.0, abs=1e-12)
    # each feedback passage's words in at most 2 of the 20 ("ed", "wood", "by", "the" are
    # in more): ten words in all, so none is pruned
    kept = {0: ["film", "directed", "tim", "burton"], 1: ["director", "of", "glenda"],
            2: ["stars", "johnny", "depp"]}
    model: dict[str, float] = {}
    for passage, words in kept.items():
        for word in words:
            model[word] = model.get(word, 0.0) + scores[passage] / len(words)
    total = sum(model.values())
    expected = {word: 0.5 * weight / total for word, weight in model.items()}
    for word in QUESTION.split():  # the question's words keep their half
        expected[word] = expected.get(word, 0.0) + 0.5 / 4
    got = rm3_query(QUESTION, texts)  # the defaults: 3 passages, 10 words, 0.5
    assert got.keys() == expected.keys()
    for word, weight in expected.items():
        assert got[word] == pytest.approx(weight, abs=1e-12), word
    # the expanded query reaches the bridge passage the question's words miss
    expanded = expanded_bm25(QUESTION, texts)
    assert expanded[3] > 0 and expanded[3] > expanded[4:].max()


def test_a_pool_without_question_words_keeps_the_question():
    assert rm3_query(QUESTION, FILLER) == pytest.approx({w: 0.25 for w in QUESTION.split()})
    assert rm3_query(QUESTION, []) == pytest.approx({w: 0.25 for w in QUESTION.split()})


def test_a_weighted_query_is_bm25_with_each_term_times_its_weight():
    texts = ["Ed Wood directed by Tim Burton", *FILLER]
    # the question's own counts as weights: the same scores as the question
    assert np.allclose(bm25({w: 1.0 for w in QUESTION.split()}, texts), bm25(QUESTION, texts))
    by_word = {w: bm25(w, texts) for w in ("ed", "burton")}
    assert np.allclose(bm25({"ed": 0.3, "burton": 2.0}, texts),
                       0.3 * by_word["ed"] + 2.0 * by_word["burton"])


@pytest.mark.parametrize(("argument", "value"), [
    ("fb_docs", 0), ("fb_terms", 0), ("original_weight", 1.5), ("max_df_ratio", -0.1)])
def test_bad_constants_are_refused_by_name(argument, value):
    with pytest.raises(ValueError, match=argument):
        rm3_query(QUESTION, FILLER, **{argument: value})


def test_with_feedback_replaces_the_lexical_signal_only():
    from vrsd_eval.pools import Pools
    from vrsd_kit.lexical import PoolRelevance

    texts = [["Ed Wood is a film directed by Tim Burton", "Tim Burton married Helena",
              *FILLER[:8]]]
    n = len(texts[0])
    found = PoolRelevance(np.linspace(0, 1, n), bm25(QUESTION, texts[0]), np.ones((n, 2)))
    pools = Pools(queries=np.ones((1, 3)), rows=np.arange(n)[None], vectors=np.ones((1, n, 3)),
                  store=None, embeddings=None, signals=[found], texts=texts)
    before = pools.words.copy()
    fed = with_feedback(pools, [QUESTION])
    assert np.array_equal(pools.words, before)  # nothing the caller passed is changed
    assert np.array_equal(fed.words[0, 0], before[0, 0])
    assert np.allclose(fed.words[0, 1], expanded_bm25(QUESTION, texts[0]))
    assert fed.signals[0].profiles is found.profiles
    with pytest.raises(ValueError, match="questions"):
        with_feedback(pools, [QUESTION, QUESTION])
