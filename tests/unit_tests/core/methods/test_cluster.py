"""``cluster``: k-means representatives, the most relevant of each."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.draws import unit
from vrsd_core import select


@pytest.mark.parametrize("case", range(12))
def test_cluster_one_representative_per_blob_the_most_relevant(case, helpers):
    rng = np.random.default_rng(case)
    n_blobs, per = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    X, labels = helpers.blobs(rng, n_blobs, per, d=16, spread=0.02)
    q = rng.normal(size=16)
    rel = unit(X) @ unit(q)
    for seed in (0, 1, 2):
        sel = select(q, X, n_blobs, method="cluster", seed=seed)
        assert sorted(labels[sel.indices].tolist()) == list(range(n_blobs))
        for i in sel.indices:
            assert rel[i] == rel[labels == labels[i]].max()
        assert np.all(np.diff(sel.relevance) <= 0)  # ordered by relevance
        assert sel.gains.tolist() == pytest.approx([float(per)] * n_blobs)  # cluster sizes
        assert sel.info["converged"]


def test_cluster_k_at_least_n_returns_all_by_relevance():
    rng = np.random.default_rng(0)
    q, X = rng.normal(size=4), rng.normal(size=(5, 4))
    sel = select(q, X, 9, method="cluster")
    assert sel.indices.tolist() == select(q, X, 5, method="similarity").indices.tolist()


def test_cluster_with_duplicates_still_returns_k_distinct_items():
    X = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 2)
    q = np.array([1.0, 0.2])
    sel = select(q, X, 4, method="cluster", seed=3)
    assert len(set(sel.indices.tolist())) == 4
    assert sel.gains.sum() == pytest.approx(6)
    assert {0, 4} <= set(sel.indices.tolist())  # both directions represented


def test_cluster_sizes_cover_all_candidates_and_n_iter_zero_works():
    rng = np.random.default_rng(5)
    q, X = rng.normal(size=8), rng.normal(size=(40, 8))
    for n_iter in (0, 1, 100):
        sel = select(q, X, 6, method="cluster", n_iter=n_iter)
        assert sel.gains.sum() == pytest.approx(40) and len(sel) == 6
        assert sel.info["iterations"] <= n_iter
    assert select(q, X, 6, method="cluster", n_iter=0).info["converged"] is False


def test_cluster_partition_is_a_lloyd_fixed_point():
    # The partition behind the picks: every candidate is nearest (squared Euclidean,
    # unit vectors) to the mean of its own cluster, and the sizes are the gains.
    from vrsd_core.methods.cluster import _kmeans

    rng = np.random.default_rng(9)
    q, X = rng.normal(size=6), rng.normal(size=(50, 6))
    U = unit(X)
    rel = U @ unit(q)
    assign, _, converged = _kmeans(U, rel, 5, 100, np.random.default_rng(0))
    assert converged
    means = np.array([U[assign == c].mean(axis=0) for c in range(5)])
    dist = ((U[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    assert np.array_equal(dist.argmin(axis=1), assign)
    sel = select(q, X, 5, method="cluster", seed=0)
    assert sorted(sel.gains.tolist()) == sorted(np.bincount(assign).astype(float).tolist())
    for i, size in zip(sel.indices, sel.gains, strict=True):
        members = assign == assign[i]
        assert members.sum() == size and rel[i] == rel[members].max()
