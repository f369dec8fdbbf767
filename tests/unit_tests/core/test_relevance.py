"""``vrsd_core.pool_units``: several relevance signals fused in the pool's units, against
hand-built pools and a direct reference; what ``select`` does with the fused relevance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from vrsd_core import pool_units, select, select_batch


def reference(signals, real=None):
    """The fusion written out for one pool, float64, plain numpy: each real candidate's
    z-score per signal (0 for a signal that does not vary), summed, z-scored again;
    NaN at padding."""
    signals = np.asarray(signals, float)
    n = signals.shape[1]
    real = np.ones(n, bool) if real is None else np.asarray(real)

    def z(x):
        x = x[real]
        mean, std = x.mean(), x.std()
        out = np.full(n, np.nan)
        out[real] = (x - mean) / std if std > 1e-12 * max(1.0, abs(mean)) else 0.0
        return out

    return z(sum(z(row) for row in signals))


def test_hand_built_pool():
    cos = np.array([0.9, 0.8, 0.7, 0.2])
    lex = np.array([0.0, 5.0, 0.0, 1.0])

    def z(x):
        return (x - x.mean()) / x.std()

    np.testing.assert_allclose(pool_units([cos, lex]), z(z(cos) + z(lex)), rtol=1e-12)
    # one signal: its z-scores
    np.testing.assert_allclose(pool_units([cos]), z(cos), rtol=1e-12)
    # a signal that does not vary adds nothing
    np.testing.assert_allclose(pool_units([cos, np.zeros(4)]), z(cos), rtol=1e-12)
    # no weight to choose: an affine map of either signal changes nothing
    np.testing.assert_allclose(pool_units([3 * cos - 1, 10 * lex]), pool_units([cos, lex]),
                               rtol=1e-12, atol=1e-12)
    # nothing varies: every candidate 0
    np.testing.assert_array_equal(pool_units([np.ones(3), np.full(3, 2.0)]), np.zeros(3))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), s=st.integers(1, 3), n=st.integers(1, 20))
def test_matches_the_reference(data, s, n):
    values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    signals = data.draw(arrays(np.float64, (s, n), elements=values))
    fused = pool_units(signals)
    assert fused.shape == (n,)
    np.testing.assert_allclose(fused, reference(signals), rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), B=st.integers(1, 4), s=st.integers(1, 3), n=st.integers(2, 12))
def test_a_batch_fuses_each_pool_alone_and_keeps_padding(data, B, s, n):
    values = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
    signals = data.draw(arrays(np.float64, (B, s, n), elements=values))
    real = data.draw(arrays(bool, (B, n)))
    real[:, 0] = True
    padded = np.where(real[:, None, :], signals, np.nan)
    fused = pool_units(padded)
    assert fused.shape == (B, n)
    for b in range(B):
        np.testing.assert_allclose(fused[b], reference(signals[b], real[b]), rtol=1e-9,
                                   atol=1e-9)
        assert np.isnan(fused[b][~real[b]]).all()


@pytest.mark.parametrize("bad", [np.ones(3), np.ones((2, 3, 4, 1)), np.ones((0, 3)),
                                 [[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], [[1, np.inf]]])
def test_bad_signals_name_the_argument(bad):
    with pytest.raises(ValueError, match="^signals: "):
        pool_units(bad)


def test_select_takes_the_fused_relevance_as_one_score_per_candidate():
    rng = np.random.default_rng(2)
    q, C = rng.normal(size=5), rng.normal(size=(8, 5))
    signals = rng.normal(size=(2, 8))
    fused = pool_units(signals)
    sel = select(q, C, 8, method="similarity", relevance=fused)
    assert sel.indices.tolist() == np.argsort(-fused, kind="stable").tolist()
    np.testing.assert_allclose(sel.relevance, fused[sel.indices])
    batch = select_batch(q[None], C[None], 4, relevance=pool_units(signals[None]))[0]
    assert batch.indices.tolist() == select(q, C, 4, relevance=fused).indices.tolist()


def test_the_callers_signals_are_not_changed():
    signals = np.array([[0.3, 0.1, 0.2], [1.0, 0.0, 2.0]])
    before = signals.copy()
    pool_units(signals)
    np.testing.assert_array_equal(signals, before)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_values_near_the_float_range_keep_their_z_scores():
    """A signal whose sum or spread passes float64's range (values near 1.8e308) has the
    z-scores of the same values scaled down, without a warning; before, its overflowed
    mean made every score 0 and the default read every candidate as equally relevant."""
    small = np.array([1.0, 1.0, -1.0, 0.25])
    huge = small * 1e308
    np.testing.assert_allclose(pool_units([huge]), pool_units([small]), rtol=1e-12)
    np.testing.assert_allclose(pool_units([huge, small]), pool_units([small, small]),
                               rtol=1e-12)
    # the default reads relevance in pool units: four orthogonal candidates, equally near
    # the query, are taken in the order of their relevance, whatever its scale
    q, C = np.ones(4), np.eye(4)
    for relevance in (np.array([0.5, 1.0, -1.0, 0.25]), np.array([0.5, 1.0, -1.0, 0.25]) * 1e308):
        assert select(q, C, 3, relevance=relevance).indices.tolist() == [1, 0, 3]
