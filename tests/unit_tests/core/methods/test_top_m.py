"""``top_m``: the limits and the distributions of the draw from the top m."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from tests.helpers.approx import assert_scores_close
from tests.helpers.draws import DRAWS, P_REJECT, first_picks, query_and_pool
from vrsd_core import select


def _softmax(x: np.ndarray, t: float) -> np.ndarray:
    e = np.exp((x - x.max()) / t)
    return e / e.sum()



@pytest.mark.parametrize("case", range(60))
def test_top_m_zero_temperature_is_top_k(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(1, 40))
    q, X = rng.normal(size=5), rng.normal(size=(n, 5))
    k = int(rng.integers(1, n + 1))
    m = int(rng.integers(k, n + 1))
    top_k = select(q, X, k, method="similarity").indices.tolist()
    for temperature in (0.0, 1e-12, 1e-300, 5e-324):
        sel = select(q, X, k, method="top_m", m=m, temperature=temperature, seed=case)
        assert sel.indices.tolist() == top_k
        assert sel.info["short_by"] == 0


def test_top_m_huge_temperature_is_uniform_over_the_top_m():
    q, X = query_and_pool(1)
    m, k = 8, 3
    top = select(q, X, m, method="similarity").indices
    for temperature in (1e6, float("inf")):
        first = first_picks(q, X, k, "top_m", m=m, temperature=temperature)
        assert set(first.tolist()) <= set(top.tolist())
        counts = np.array([(first == i).sum() for i in top])
        assert chisquare(counts).pvalue > P_REJECT
    # Every item of the pool is in a k-sample with probability k/m: a 5-sigma band.
    inclusion = np.zeros(X.shape[0])
    for s in range(DRAWS):
        inclusion[select(q, X, k, method="top_m", m=m, temperature=1e6, seed=s).indices] += 1
    expect, sd = DRAWS * k / m, np.sqrt(DRAWS * (k / m) * (1 - k / m))
    assert np.all(np.abs(inclusion[top] - expect) < 5 * sd)
    assert inclusion.sum() == inclusion[top].sum() == DRAWS * k
    # Power: at a low temperature the same statistic rejects uniformity.
    first = first_picks(q, X, k, "top_m", m=m, temperature=0.05)
    assert chisquare(np.array([(first == i).sum() for i in top])).pvalue < 1e-10


def test_top_m_draws_follow_the_softmax():
    q, X = query_and_pool(2)
    m, t = 6, 0.2
    top = select(q, X, m, method="similarity")
    probs = _softmax(top.relevance, t)
    first = first_picks(q, X, 3, "top_m", m=m, temperature=t)
    counts = np.array([(first == i).sum() for i in top.indices])
    assert chisquare(counts, probs * DRAWS).pvalue > P_REJECT
    # gains are the probability at each draw: p_first, then p_j / (1 - p_first), ...
    sel = select(q, X, 3, method="top_m", m=m, temperature=t, seed=0)
    p = dict(zip(top.indices.tolist(), probs, strict=True))
    picked = [p[i] for i in sel.indices.tolist()]
    want = [picked[0], picked[1] / (1 - picked[0]), picked[2] / (1 - picked[0] - picked[1])]
    assert_scores_close(sel.gains, want)


def test_top_m_noise_zero_is_no_noise_and_small_noise_is_continuous():
    q, X = query_and_pool(3)
    for s in range(50):
        base = select(q, X, 4, method="top_m", m=10, temperature=0.1, seed=s)
        zero = select(q, X, 4, method="top_m", m=10, temperature=0.1, noise=0.0, seed=s)
        tiny = select(q, X, 4, method="top_m", m=10, temperature=0.1, noise=1e-12, seed=s)
        assert base.indices.tolist() == zero.indices.tolist() == tiny.indices.tolist()
        assert_scores_close(base.gains, zero.gains)


def test_top_m_noise_perturbs_the_draw():
    q, X = query_and_pool(4)
    top = select(q, X, 10, method="similarity").indices
    # Temperature 0 alone is always top-k; noise makes other members of the pool win.
    results = {
        tuple(select(q, X, 3, method="top_m", m=10, temperature=0.0, noise=0.5, seed=s).indices)
        for s in range(60)
    }
    assert len(results) > 5
    assert all(set(r) <= set(top.tolist()) for r in results)


def test_top_m_pool_smaller_than_k():
    q, X = query_and_pool(5)
    sel = select(q, X, 6, method="top_m", m=4, seed=0)
    assert sorted(sel.indices.tolist()) == sorted(select(q, X, 4, method="similarity").indices)
    assert sel.info == {"m": 4, "seed": 0, "short_by": 2}


def test_top_m_default_pool_is_twice_k():
    q, X = query_and_pool(6)
    sel = select(q, X, 3, method="top_m", temperature=float("inf"), seed=0)
    assert sel.info["m"] == 6
    assert select(q, X, 15, method="top_m", seed=0).info["m"] == 20  # capped at n
