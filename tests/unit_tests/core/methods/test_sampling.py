"""``top_m`` and ``top_p`` together (``_sampling``): properties of every draw."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_core import select


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
