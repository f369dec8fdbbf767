"""``similarity``: top-k by relevance, a stable sort with the tie rule where scores tie.

Against the plain reference (``conftest.py``'s ``ref``: Gaussian, clustered, duplicate,
lattice and mirrored cases, k from 0 to n + 2), and against the tie rule's one-by-one
loop on pools full of duplicates and near-ties.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.reference import matches_reference
from vrsd_core import select

CASES_PER_METHOD = 240


def test_similarity_matches_reference(ref, cases_for):
    for i, case in enumerate(cases_for(101, CASES_PER_METHOD, with_relevance=True)):
        matches_reference(ref, case, i, "similarity")


def _one_by_one(scores, k, rtol=1e-10):
    """Top-k by the tie rule, one pick at a time: the best, the lowest index among ties."""
    left, picks = np.array(scores, dtype=np.float64), []
    for _ in range(min(k, len(left))):
        best = left.max()
        pick = int(np.flatnonzero(left >= best - rtol * max(1.0, abs(best)))[0])
        picks.append(pick)
        left[pick] = -np.inf
    return picks


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(0, 32))
def test_the_sort_picks_what_the_tie_rule_picks(seed, n, k):
    """Pools full of duplicates and scores a rounding apart: the sort keeps the store's
    order exactly where the tie rule does."""
    rng = np.random.default_rng(seed)
    rel = rng.choice(rng.normal(size=max(1, n // 3)), size=n)  # duplicates
    near = rng.random(n) < 0.3
    rel[near] += rng.choice([0.0, 1e-13, -1e-13, 1e-9], size=int(near.sum()))  # near ties
    C = rng.normal(size=(n, 4))
    got = select(rng.normal(size=4), C, k, method="similarity", relevance=rel)
    assert got.indices.tolist() == _one_by_one(rel, k)


def test_ties_within_the_margin_go_to_the_store_order():
    rel = np.array([0.5, 0.9 - 1e-12, 0.9, 0.9 + 1e-12, 0.1])
    C = np.eye(5)
    assert select(np.ones(5), C, 3, method="similarity", relevance=rel
                  ).indices.tolist() == [1, 2, 3]
