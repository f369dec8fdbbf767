"""``top_m`` and ``top_p``: the limits, the distributions, the nucleus."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import select

DRAWS = 2400
# A p-value below this means "not this distribution". With fixed seeds a test
# either always passes or always fails; each uniformity test also shows that
# the same statistic rejects a clearly non-uniform case, so it has power.
P_REJECT = 1e-4


def _data(seed: int, n: int = 20, d: int = 8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d), rng.normal(size=(n, d))


def _first_picks(q, X, k, method, **options) -> np.ndarray:
    return np.array(
        [select(q, X, k, method=method, seed=s, **options).indices[0] for s in range(DRAWS)]
    )


def _softmax(x: np.ndarray, t: float) -> np.ndarray:
    e = np.exp((x - x.max()) / t)
    return e / e.sum()


# --------------------------------------------------------------------------- top_m


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
    q, X = _data(1)
    m, k = 8, 3
    top = select(q, X, m, method="similarity").indices
    for temperature in (1e6, float("inf")):
        first = _first_picks(q, X, k, "top_m", m=m, temperature=temperature)
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
    first = _first_picks(q, X, k, "top_m", m=m, temperature=0.05)
    assert chisquare(np.array([(first == i).sum() for i in top])).pvalue < 1e-10


def test_top_m_draws_follow_the_softmax():
    q, X = _data(2)
    m, t = 6, 0.2
    top = select(q, X, m, method="similarity")
    probs = _softmax(top.relevance, t)
    first = _first_picks(q, X, 3, "top_m", m=m, temperature=t)
    counts = np.array([(first == i).sum() for i in top.indices])
    assert chisquare(counts, probs * DRAWS).pvalue > P_REJECT
    # gains are the probability at each draw: p_first, then p_j / (1 - p_first), ...
    sel = select(q, X, 3, method="top_m", m=m, temperature=t, seed=0)
    p = dict(zip(top.indices.tolist(), probs, strict=True))
    picked = [p[i] for i in sel.indices.tolist()]
    want = [picked[0], picked[1] / (1 - picked[0]), picked[2] / (1 - picked[0] - picked[1])]
    assert_scores_close(sel.gains, want)


def test_top_m_noise_zero_is_no_noise_and_small_noise_is_continuous():
    q, X = _data(3)
    for s in range(50):
        base = select(q, X, 4, method="top_m", m=10, temperature=0.1, seed=s)
        zero = select(q, X, 4, method="top_m", m=10, temperature=0.1, noise=0.0, seed=s)
        tiny = select(q, X, 4, method="top_m", m=10, temperature=0.1, noise=1e-12, seed=s)
        assert base.indices.tolist() == zero.indices.tolist() == tiny.indices.tolist()
        assert_scores_close(base.gains, zero.gains)


def test_top_m_noise_perturbs_the_draw():
    q, X = _data(4)
    top = select(q, X, 10, method="similarity").indices
    # Temperature 0 alone is always top-k; noise makes other members of the pool win.
    results = {
        tuple(select(q, X, 3, method="top_m", m=10, temperature=0.0, noise=0.5, seed=s).indices)
        for s in range(60)
    }
    assert len(results) > 5
    assert all(set(r) <= set(top.tolist()) for r in results)


def test_top_m_pool_smaller_than_k():
    q, X = _data(5)
    sel = select(q, X, 6, method="top_m", m=4, seed=0)
    assert sorted(sel.indices.tolist()) == sorted(select(q, X, 4, method="similarity").indices)
    assert sel.info == {"m": 4, "seed": 0, "short_by": 2}


def test_top_m_default_pool_is_twice_k():
    q, X = _data(6)
    sel = select(q, X, 3, method="top_m", temperature=float("inf"), seed=0)
    assert sel.info["m"] == 6
    assert select(q, X, 15, method="top_m", seed=0).info["m"] == 20  # capped at n


# --------------------------------------------------------------------------- top_p


def test_top_p_one_samples_from_all():
    q, X = _data(7, n=10)
    first = _first_picks(q, X, 1, "top_p", p=1.0, temperature=float("inf"))
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
    q, X = _data(8)
    sel = select(q, X, 5, method="top_p", p=0.99, temperature=0.0, seed=0)
    assert sel.indices.tolist() == select(q, X, 1, method="similarity").indices.tolist()
    assert sel.info["nucleus"] == 1 and sel.info["short_by"] == 4


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    k=st.integers(1, 12),
    m=st.one_of(st.none(), st.integers(1, 30)),
    temperature=st.one_of(st.just(0.0), st.floats(1e-6, 1e3), st.just(float("inf"))),
    noise=st.one_of(st.just(0.0), st.floats(1e-6, 2.0)),
    p=st.floats(0.01, 1.0),
)
def test_sampling_properties(seed, n, k, m, temperature, noise, p):
    rng = np.random.default_rng(seed)
    q, X = rng.normal(size=4), rng.normal(size=(n, 4))
    ranked = select(q, X, n, method="similarity").indices
    a = select(q, X, k, method="top_m", m=m, temperature=temperature, noise=noise, seed=seed)
    pool = ranked[: min(n, 2 * k if m is None else m)]
    assert set(a.indices.tolist()) <= set(pool.tolist())
    assert len(set(a.indices.tolist())) == len(a) == min(k, len(pool))
    assert a.info["short_by"] == min(k, n) - len(a)
    assert np.all((a.gains >= 0) & (a.gains <= 1 + 1e-12))
    b = select(q, X, k, method="top_p", p=p, temperature=temperature, seed=seed)
    nucleus = ranked[: b.info["nucleus"]]
    assert set(b.indices.tolist()) <= set(nucleus.tolist())
    assert len(set(b.indices.tolist())) == len(b) == min(k, len(nucleus))
    assert np.all((b.gains >= 0) & (b.gains <= 1 + 1e-12))
    # The nucleus is the smallest prefix reaching p (softmax of the cosines).
    if 0 < temperature < float("inf") and p < 1:
        rel = select(q, X, n, method="similarity").relevance
        z = np.exp((rel - rel.max()) / temperature)
        cum = np.cumsum(z / z.sum())
        size = b.info["nucleus"]
        assert cum[size - 1] >= p - 1e-9
        assert size == 1 or cum[size - 2] < p + 1e-9
