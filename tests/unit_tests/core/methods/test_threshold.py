"""``threshold``: rejection by similarity, the draws over the pool."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from tests.helpers.approx import assert_scores_close
from tests.helpers.draws import DRAWS, P_REJECT, unit
from vrsd_core import select


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    d=st.integers(2, 6),
    k=st.integers(1, 12),
    m=st.one_of(st.none(), st.integers(1, 40)),
    limit=st.floats(-0.5, 1.0),
    weighted=st.booleans(),
)
def test_threshold_keeps_only_dissimilar_items_and_is_maximal(seed, n, d, k, m, limit, weighted):
    rng = np.random.default_rng(seed)
    q, X = rng.normal(size=d), rng.normal(size=(n, d))
    sel = select(q, X, k, method="threshold", m=m, threshold=limit, weighted=weighted, seed=seed)
    idx = sel.indices
    pool = select(q, X, min(n, 2 * k if m is None else m), method="similarity").indices
    assert set(idx.tolist()) <= set(pool.tolist())
    assert len(set(idx.tolist())) == len(idx)
    U = unit(X)
    G = U @ U.T
    pair = G[np.ix_(idx, idx)]
    assert np.all(pair[~np.eye(len(idx), dtype=bool)] < limit)
    # gains: largest similarity to the earlier keeps (0 for the first)
    want = [0.0] + [G[idx[t], idx[:t]].max() for t in range(1, len(idx))]
    assert_scores_close(sel.gains, want)
    assert sel.info["short_by"] == min(k, n) - len(idx)
    if len(idx) < min(k, n):  # it ran out: every other pool item was rejected by a keep
        others = np.setdiff1d(pool, idx)
        assert np.all(G[np.ix_(others, idx)].max(axis=1) >= limit - 1e-12)


def test_threshold_one_per_group_of_near_duplicates():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(10, 4)))[0].T  # 4 orthonormal directions
    X = np.repeat(basis, 5, axis=0) + 0.01 * rng.normal(size=(20, 10))
    q = basis.sum(axis=0)
    for s in range(30):
        sel = select(q, X, 4, method="threshold", m=20, threshold=0.9, seed=s)
        assert sorted((sel.indices // 5).tolist()) == [0, 1, 2, 3]


def test_threshold_may_return_fewer_and_says_so():
    X = np.tile([[1.0, 2.0, 0.5]], (8, 1)) * np.arange(1, 9)[:, None]  # one direction
    sel = select(np.array([1.0, 0.0, 0.0]), X, 3, method="threshold", m=8, seed=0)
    assert len(sel) == 1
    assert sel.info["short_by"] == 2
    assert sel.info["rejected"] == 0  # the draw ran out after the last keep


def test_threshold_uniform_draw_over_the_pool():
    rng = np.random.default_rng(1)
    q, X = rng.normal(size=6), rng.normal(size=(20, 6))
    pool = select(q, X, 8, method="similarity").indices
    first = np.array([
        select(q, X, 2, method="threshold", m=8, seed=s).indices[0] for s in range(DRAWS)
    ])
    assert set(first.tolist()) <= set(pool.tolist())
    assert chisquare(np.array([(first == i).sum() for i in pool])).pvalue > P_REJECT


def test_threshold_weighted_draw_is_proportional_to_relevance():
    q, X = np.ones(5), np.eye(5)  # orthogonal: nothing is ever rejected
    rel = np.array([0.1, 0.4, 0.2, 0.3, 0.0])
    first = np.array([
        select(q, X, 2, method="threshold", m=5, weighted=True, relevance=rel, seed=s).indices[0]
        for s in range(DRAWS)
    ])
    counts = np.bincount(first, minlength=5)
    assert counts[4] == 0
    assert chisquare(counts[:4], rel[:4] / rel.sum() * DRAWS).pvalue > P_REJECT
    # The unweighted draw is not proportional: the same statistic rejects it.
    flat = np.array([
        select(q, X, 2, method="threshold", m=5, relevance=rel, seed=s).indices[0]
        for s in range(DRAWS)
    ])
    flat_counts = np.bincount(flat, minlength=5)
    assert chisquare(flat_counts[:4], rel[:4] / rel.sum() * flat_counts[:4].sum()).pvalue < 1e-10


def test_threshold_weighted_draws_non_positive_relevance_last_in_rank_order():
    q, X = np.ones(6), np.eye(6)
    rel = np.array([-1.0, 0.5, 0.0, 2.0, -0.5, 1.0])
    for s in range(20):
        sel = select(q, X, 6, method="threshold", m=6, weighted=True, relevance=rel, seed=s)
        assert sorted(sel.indices[:3].tolist()) == [1, 3, 5]
        assert sel.indices[3:].tolist() == [2, 4, 0]
