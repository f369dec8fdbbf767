"""``prepare``'s two forms: the one-query form (no mask, cap or budget: what ``select``
runs on nearly every call) builds the same arrays as the general form, and hands
anything unusual to it, which raises the error naming the argument."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_core import select
from vrsd_core._prepare import Prepared, _prepare_one, prepare


def general(q, C, relevance=None, normalize=True) -> Prepared:
    """The general form on the same single query (a batch of one, sliced the same way)."""
    return prepare(np.asarray(q)[None], np.asarray(C)[None], batched=True,
                   relevance=None if relevance is None else np.asarray(relevance)[None],
                   normalize=normalize)


def assert_same(fast: Prepared, slow: Prepared) -> None:
    for f in dataclasses.fields(Prepared):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, f.name
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f.name)
        else:
            assert a == b, f.name


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 30), d=st.integers(1, 16), seed=st.integers(0, 2**31 - 1),
    dtype=st.sampled_from([np.float32, np.float64]), normalize=st.booleans(),
    signals=st.sampled_from([None, 1, 2]),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_the_one_query_form_builds_the_general_forms_arrays(n, d, seed, dtype, normalize,
                                                              signals, scale):
    rng = np.random.default_rng(seed)
    q = (rng.normal(size=d) * scale).astype(dtype)
    C = (rng.normal(size=(n, d)) * scale).astype(dtype)
    C[np.abs(C).sum(axis=1) == 0, 0] = 1  # no zero rows
    if not np.abs(q).sum():
        q[0] = 1
    rel = None if signals is None else rng.normal(size=(n,) if signals == 1 else (signals, n))
    fast = _prepare_one(q, C, rel, normalize)
    assert fast is not None
    assert_same(fast, general(q, C, rel, normalize))
    assert_same(prepare(q, C, batched=False, relevance=rel, normalize=normalize), fast)


@pytest.mark.parametrize("query, candidates", [
    (np.ones(3), np.array([[1.0, 0, 0], [0, 0, 0]])),  # a zero row
    (np.ones(3), np.array([[1.0, np.nan, 0]])),  # NaN
    (np.zeros(3), np.ones((2, 3))),  # a zero query
    (np.ones(3), np.ones((2, 4))),  # dimensions differ
    (np.ones(3), np.ones((0, 3))),  # no candidates
    (np.ones(3), np.full((2, 3), 1e200)),  # too long for float64 sums
    (np.ones((1, 3)), np.ones((2, 3))),  # a 2-D query
])
def test_anything_unusual_goes_to_the_general_form(query, candidates):
    assert _prepare_one(query, candidates, None, True) is None


def test_the_shared_constants_cannot_be_written():
    prep = prepare(np.ones(4), np.eye(4), batched=False)
    for name in ("valid", "sq_norm", "q_norm"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(prep, name)[0] = 0
    # and a second call sees them unchanged
    assert select(np.ones(4), np.eye(4), 2).indices.tolist() == [0, 1]
