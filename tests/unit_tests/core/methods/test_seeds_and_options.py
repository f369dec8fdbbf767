"""What every seeded strategy shares: seeds, batches, options, edge cases, no mutation."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import METHOD_INFO, method_defaults, select, select_batch

SEEDED = ["threshold", "top_m", "top_p", "cluster"]
# Options that make each method non-degenerate on random data (real randomness).
LIVELY = {
    "threshold": {"m": 20, "threshold": 0.5},
    "top_m": {"m": 20, "temperature": 1.0},
    "top_p": {"p": 0.95, "temperature": 1.0},
    "cluster": {},
}


def _data(seed: int = 0, n: int = 30, d: int = 8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d), rng.normal(size=(n, d))


def _same(a, b) -> None:
    assert a.indices.tolist() == b.indices.tolist()
    assert_scores_close(a.gains, b.gains)
    assert a.info == approx_scores(b.info)


def test_registered_with_documented_defaults():
    assert set(SEEDED) <= set(METHOD_INFO)
    assert method_defaults("threshold") == {
        "m": None, "threshold": 0.9, "weighted": False, "seed": None}
    assert method_defaults("top_m") == {"m": None, "temperature": 0.1, "noise": 0.0, "seed": None}
    assert method_defaults("top_p") == {"p": 0.9, "temperature": 0.1, "seed": None}
    assert method_defaults("cluster") == {"n_iter": 100, "seed": 0}


@pytest.mark.parametrize("method", SEEDED)
def test_same_seed_same_result(method):
    q, X = _data()
    for seed in (0, 7, 2**40):
        _same(select(q, X, 5, method=method, seed=seed, **LIVELY[method]),
              select(q, X, 5, method=method, seed=seed, **LIVELY[method]))
    # Equal generator states give equal results; the generator advances.
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    _same(select(q, X, 5, method=method, seed=g1, **LIVELY[method]),
          select(q, X, 5, method=method, seed=g2, **LIVELY[method]))
    fresh = np.random.default_rng(3).bit_generator.state
    assert g1.bit_generator.state == g2.bit_generator.state != fresh


@pytest.mark.parametrize("method", SEEDED)
def test_different_seeds_different_results(method):
    q, X = _data()
    results = {tuple(select(q, X, 5, method=method, seed=s, **LIVELY[method]).indices)
               for s in range(20)}
    assert len(results) >= 3


@pytest.mark.parametrize("method", SEEDED)
def test_unseeded_run_reports_its_seed(method):
    q, X = _data()
    sel = select(q, X, 5, method=method, seed=None, **LIVELY[method])
    again = select(q, X, 5, method=method, seed=sel.info["seed"], **LIVELY[method])
    assert again.indices.tolist() == sel.indices.tolist()


@pytest.mark.parametrize("method", SEEDED)
@pytest.mark.parametrize("seed", [0, 123])
def test_batch_equals_single_calls(method, seed):
    rng = np.random.default_rng(seed)
    B, n, d = 5, 25, 6
    Q, X = rng.normal(size=(B, d)), rng.normal(size=(B, n, d))
    mask = np.ones((B, n), dtype=bool)
    mask[1, ::3] = False  # padding anywhere
    mask[3, 4:] = False  # a short candidate list
    mask[4, :] = False  # no candidates at all
    sels = select_batch(Q, X, 5, method=method, mask=mask, seed=seed, **LIVELY[method])
    for b in range(B):
        keep = np.flatnonzero(mask[b])
        one = select(Q[b], X[b, keep], 5, method=method, seed=seed, **LIVELY[method])
        assert keep[one.indices].tolist() == sels[b].indices.tolist()
        assert_scores_close(sels[b].gains, one.gains)
        assert sels[b].info == approx_scores(one.info)
    # A Generator seed: the batch equals single calls each given an equal generator.
    sels = select_batch(Q, X, 5, method=method, mask=mask, seed=np.random.default_rng(9),
                        **LIVELY[method])
    for b in range(B):
        keep = np.flatnonzero(mask[b])
        one = select(Q[b], X[b, keep], 5, method=method, seed=np.random.default_rng(9),
                     **LIVELY[method])
        assert keep[one.indices].tolist() == sels[b].indices.tolist()


@pytest.mark.parametrize("method", SEEDED)
def test_inputs_are_not_mutated(method):
    rng = np.random.default_rng(1)
    Q, X = rng.normal(size=(3, 6)), rng.normal(size=(3, 12, 6))
    rel, mask = rng.uniform(size=(3, 12)), rng.uniform(size=(3, 12)) > 0.2
    kept = [a.copy() for a in (Q, X, rel, mask)]
    select_batch(Q, X, 4, method=method, mask=mask, relevance=rel, seed=1)
    select(Q[0], X[0], 4, method=method, relevance=rel[0], seed=1)
    for before, after in zip(kept, (Q, X, rel, mask), strict=True):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("method", SEEDED)
def test_edge_sizes(method):
    q, X = _data(n=7)
    assert len(select(q, X, 0, method=method, seed=0)) == 0
    assert len(select(q, X, -3, method=method, seed=0)) == 0
    assert len(select(q, np.zeros((0, 8)), 3, method=method, seed=0)) == 0
    one = select(q, X[:1], 3, method=method, seed=0)
    assert one.indices.tolist() == [0]
    # float32 in, same picks as float64 on well-separated data
    f32 = select(q.astype(np.float32), X.astype(np.float32), 3, method=method, seed=4)
    assert len(f32) == len(select(q, X, 3, method=method, seed=4))


@pytest.mark.parametrize("method", ["top_m", "top_p", "cluster"])
def test_all_candidates_when_k_covers_them(method):
    q, X = _data(n=7)
    sel = select(q, X, 10, method=method, seed=0, **({"p": 1.0} if method == "top_p" else {}))
    assert sorted(sel.indices.tolist()) == list(range(7))


BAD = [
    ("threshold", {"m": 0}, "m"),
    ("threshold", {"m": 2.5}, "m"),
    ("threshold", {"m": True}, "m"),
    ("threshold", {"threshold": 1.5}, "threshold"),
    ("threshold", {"threshold": -1.01}, "threshold"),
    ("threshold", {"threshold": float("nan")}, "threshold"),
    ("threshold", {"threshold": "0.5"}, "threshold"),
    ("threshold", {"weighted": "yes"}, "weighted"),
    ("threshold", {"weighted": 1}, "weighted"),
    ("threshold", {"seed": -1}, "seed"),
    ("threshold", {"seed": 1.5}, "seed"),
    ("top_m", {"m": -2}, "m"),
    ("top_m", {"temperature": -0.1}, "temperature"),
    ("top_m", {"temperature": float("nan")}, "temperature"),
    ("top_m", {"noise": -1.0}, "noise"),
    ("top_m", {"noise": float("inf")}, "noise"),
    ("top_m", {"seed": "abc"}, "seed"),
    ("top_m", {"seed": np.random.RandomState(0)}, "seed"),
    ("top_p", {"p": 0.0}, "p"),
    ("top_p", {"p": 1.01}, "p"),
    ("top_p", {"p": None}, "p"),
    ("top_p", {"temperature": -1}, "temperature"),
    ("top_p", {"seed": True}, "seed"),
    ("cluster", {"n_iter": -1}, "n_iter"),
    ("cluster", {"n_iter": 1.0}, "n_iter"),
    ("cluster", {"seed": [1, 2]}, "seed"),
    ("top_m", {"lambda_mult": 0.5}, "lambda_mult"),  # another method's option
]


@pytest.mark.parametrize(("method", "options", "name"), BAD)
def test_bad_options_raise_naming_the_option(method, options, name):
    q, X = _data(n=7)
    with pytest.raises(ValueError, match=f"^{name}: "):
        select(q, X, 3, method=method, **options)


def test_threshold_range_is_wider_without_normalisation():
    q, X = _data(n=7)
    sel = select(q, X, 3, method="threshold", threshold=50.0, normalize=False, seed=0)
    assert len(sel) == 3
    with pytest.raises(ValueError, match="^threshold: "):
        select(q, X, 3, method="threshold", threshold=float("inf"), normalize=False)
