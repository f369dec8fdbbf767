"""``top_p``: the nucleus and the distributions of its draw."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from tests.helpers.approx import approx_scores
from tests.helpers.draws import DRAWS, P_REJECT, first_picks, query_and_pool
from vrsd_core import select


def test_top_p_one_samples_from_all():
    q, X = query_and_pool(7, n=10)
    first = first_picks(q, X, 1, "top_p", p=1.0, temperature=float("inf"))
    counts = np.bincount(first, minlength=10)
    assert counts.min() > 0
    assert chisquare(counts).pvalue > P_REJECT
    sel = select(q, X, 10, method="top_p", p=1.0, seed=0)
    assert sel.info["nucleus"] == 10 and sel.info["short_by"] == 0
    assert sorted(sel.indices.tolist()) == list(range(10))
    # Even when a tiny temperature leaves no mass outside the best item.
    sel = select(q, X, 10, method="top_p", p=1.0, temperature=1e-300, seed=0)
    assert sel.indices.tolist() == select(q, X, 10, method="similarity").indices.tolist()


@pytest.mark.parametrize(
    ("p", "size"), [(0.3, 1), (0.5, 1), (0.51, 2), (0.75, 2), (0.85, 3), (0.97, 4), (1.0, 4)]
)
def test_top_p_nucleus_is_the_smallest_prefix_reaching_p(p, size):
    # relevance = log probabilities and temperature 1: softmax gives them back.
    probs = np.array([0.15, 0.5, 0.05, 0.3])
    q, X = np.ones(2), np.random.default_rng(0).normal(size=(4, 2))
    sel = select(q, X, 4, method="top_p", p=p, temperature=1.0, relevance=np.log(probs), seed=1)
    assert sel.info["nucleus"] == size
    assert sel.info["short_by"] == 4 - size
    ranking = [1, 3, 0, 2]
    assert sorted(sel.indices.tolist()) == sorted(ranking[:size])


def test_top_p_draws_follow_the_renormalised_nucleus():
    probs = np.array([0.15, 0.5, 0.05, 0.3])
    q, X = np.ones(2), np.random.default_rng(0).normal(size=(4, 2))
    rel = np.log(probs)
    first = np.array([
        select(q, X, 2, method="top_p", p=0.9, temperature=1.0, relevance=rel, seed=s).indices[0]
        for s in range(DRAWS)
    ])
    counts = np.bincount(first, minlength=4)
    assert counts[2] == 0  # outside the nucleus {1, 3, 0}
    want = probs[[0, 1, 3]] / probs[[0, 1, 3]].sum() * DRAWS
    assert chisquare(counts[[0, 1, 3]], want).pvalue > P_REJECT
    sel = select(q, X, 2, method="top_p", p=0.9, temperature=1.0, relevance=rel, seed=0)
    assert sel.gains[0] == approx_scores(probs[sel.indices[0]] / 0.95)


def test_top_p_zero_temperature_keeps_only_the_best():
    q, X = query_and_pool(8)
    sel = select(q, X, 5, method="top_p", p=0.99, temperature=0.0, seed=0)
    assert sel.indices.tolist() == select(q, X, 1, method="similarity").indices.tolist()
    assert sel.info["nucleus"] == 1 and sel.info["short_by"] == 4
