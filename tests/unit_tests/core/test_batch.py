"""select_batch equals B single calls, with and without a mask."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import select, select_batch

VARIANTS = [
    ("similarity", {}),
    ("vrsd", {}),
    ("vrsd", {"refine": "swap"}),
    ("vrsd_exact", {}),
    ("mmr", {"lambda_mult": 0.3}),
    ("mmr", {"lambda_mult": 1.0}),
    ("dpp", {"theta": 0.5}),
    ("dpp", {"theta": 0.0}),
    ("complement", {}),
]
RELEVANCE_METHODS = {"similarity", "mmr", "dpp", "complement"}


def assert_same(batch_sel, single_sel, where: str, positions: np.ndarray | None = None):
    idx = single_sel.indices if positions is None else positions[single_sel.indices]
    assert batch_sel.indices.tolist() == idx.tolist(), where
    assert_scores_close(batch_sel.gains, single_sel.gains,
                               err_msg=where)
    assert_scores_close(batch_sel.relevance, single_sel.relevance, err_msg=where)
    assert batch_sel.objective == approx_scores(single_sel.objective)
    assert batch_sel.method == single_sel.method and batch_sel.params == single_sel.params
    assert set(batch_sel.info) == set(single_sel.info), where
    for key, val in single_sel.info.items():
        if key in ("top_k", "held_back") and positions is not None:  # complement's
            val = [int(positions[j]) for j in val]
        if isinstance(val, float):
            assert batch_sel.info[key] == approx_scores(val), where
        else:
            assert batch_sel.info[key] == val, where


def random_batch(rng: np.random.Generator, *, lattice: bool):
    B, n, d = int(rng.integers(1, 7)), int(rng.integers(1, 13)), int(rng.integers(1, 7))
    if lattice:
        X = rng.integers(-2, 3, size=(B, n, d)).astype(np.float64)
        Q = rng.integers(-2, 3, size=(B, d)).astype(np.float64)
    else:
        X = rng.standard_normal((B, n, d))
        Q = rng.standard_normal((B, d))
    X[~np.any(X != 0, axis=2), 0] = 1.0
    Q[~np.any(Q != 0, axis=1), 0] = 1.0
    return Q, X, int(rng.integers(0, n + 2))


@pytest.mark.parametrize("method,opts", VARIANTS)
def test_batch_equals_single_calls(method, opts):
    rng = np.random.default_rng(zlib.crc32(repr((method, opts)).encode()))
    for trial in range(30):
        Q, X, k = random_batch(rng, lattice=trial % 2 == 1)
        rel = None
        if method in RELEVANCE_METHODS and trial % 3 == 0:
            rel = np.round(rng.uniform(-1, 1, X.shape[:2]), 1)
        batch = select_batch(Q, X, k, method=method, relevance=rel, **opts)
        assert len(batch) == len(Q)
        for b in range(len(Q)):
            single = select(Q[b], X[b], k, method=method,
                            relevance=None if rel is None else rel[b], **opts)
            assert_same(batch[b], single, f"trial {trial}, query {b}")


@pytest.mark.parametrize("method,opts", VARIANTS)
def test_masked_batch_equals_single_calls_on_the_real_rows(method, opts):
    """Each query has its own number of real candidates; padding sits anywhere (first,
    middle, last), holds zero vectors or garbage, and never appears in the result.
    Indices refer to positions in candidates[b]."""
    rng = np.random.default_rng(zlib.crc32(repr((method, opts, 'mask')).encode()))
    for trial in range(30):
        Q, X, k = random_batch(rng, lattice=trial % 2 == 1)
        B, n, _ = X.shape
        mask = rng.random((B, n)) < 0.7
        if trial % 5 == 0:
            mask[0] = False  # a query with no real candidate at all
        X[~mask & (rng.random((B, n)) < 0.5)] = 0.0  # zero vectors in padding are fine
        X[~mask & (rng.random((B, n)) < 0.2)] = np.nan  # so is anything else
        rel = None
        if method in RELEVANCE_METHODS and trial % 3 == 0:
            rel = np.round(rng.uniform(-1, 1, (B, n)), 1)
            rel[~mask] = np.nan
        X_before = X.copy()
        batch = select_batch(Q, X, k, method=method, mask=mask, relevance=rel, **opts)
        np.testing.assert_array_equal(X, X_before)
        for b in range(B):
            real = np.flatnonzero(mask[b])
            single = select(Q[b], X[b, real], k, method=method,
                            relevance=None if rel is None else rel[b, real], **opts)
            assert_same(batch[b], single, f"trial {trial}, query {b}", positions=real)
            assert len(batch[b]) == min(max(k, 0), len(real))


def test_integer_mask_is_accepted():
    rng = np.random.default_rng(0)
    Q, X = rng.standard_normal((2, 4)), rng.standard_normal((2, 5, 4))
    as_bool = select_batch(Q, X, 3, mask=np.array([[1, 1, 0, 1, 1], [0, 1, 1, 1, 1]], bool))
    as_int = select_batch(Q, X, 3, mask=[[1, 1, 0, 1, 1], [0, 1, 1, 1, 1]])
    for a, b in zip(as_bool, as_int, strict=True):
        assert a.indices.tolist() == b.indices.tolist()


def test_batch_of_embedding_sized_float32_arrays():
    """A realistic batch: float32, d=384, the store's top-50 per query."""
    rng = np.random.default_rng(1)
    Q = rng.standard_normal((8, 384)).astype(np.float32)
    X = rng.standard_normal((8, 50, 384)).astype(np.float32)
    for method in ("vrsd", "mmr", "dpp"):
        batch = select_batch(Q, X, 10, method=method)
        for b in range(8):
            single = select(Q[b], X[b], 10, method=method)
            assert batch[b].indices.tolist() == single.indices.tolist()


def test_empty_batches():
    assert select_batch(np.zeros((0, 3)), np.zeros((0, 4, 3)), 2) == []
    out = select_batch(np.ones((2, 3)), np.zeros((2, 0, 3)), 2)
    assert [len(s) for s in out] == [0, 0]


@pytest.mark.parametrize("method,opts", VARIANTS)
def test_chunked_batches_equal_single_calls(method, opts, monkeypatch):
    """Large batches run in chunks of queries (to keep candidates in cache); with a
    chunk budget of 1 byte every query is its own chunk, masks included."""
    import vrsd_core.methods._common as common

    monkeypatch.setattr(common, "CHUNK_BYTES", 1)
    rng = np.random.default_rng(zlib.crc32(repr((method, opts, "chunks")).encode()))
    B, n, d = 5, 9, 4
    Q, X = rng.standard_normal((B, d)), rng.standard_normal((B, n, d))
    mask = rng.random((B, n)) < 0.8
    batch = select_batch(Q, X, 4, method=method, mask=mask, **opts)
    for b in range(B):
        real = np.flatnonzero(mask[b])
        single = select(Q[b], X[b, real], 4, method=method, **opts)
        assert_same(batch[b], single, f"query {b}", positions=real)
