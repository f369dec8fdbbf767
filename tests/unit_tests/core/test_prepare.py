"""``prepare``: one query is a batch of one (the same arrays as the batched call on that
query), the relevance is one score per candidate, and the shared constants are read
only."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_core import select, select_batch
from vrsd_core._prepare import Geometry, Given, Prepared, prepare


def batched(q, C, relevance=None, normalize=True) -> Prepared:
    """The batched form on the same single query."""
    return prepare(np.asarray(q)[None], np.asarray(C)[None], batched=True, normalize=normalize,
                   given=Given(None if relevance is None else np.asarray(relevance)[None]))


def assert_same(one: Prepared, batch: Prepared, *, exact: bool = False) -> None:
    """Every field alike: arrays of one dtype and shape, equal to 1e-12 (``exact``: to the
    bit)."""
    for f in dataclasses.fields(Prepared):
        a, b = getattr(one, f.name), getattr(batch, f.name)
        if isinstance(a, Geometry):
            a, b = (a.vectors, a.scale, a.self_similarity), (b.vectors, b.scale, b.self_similarity)
        else:
            a, b = (a,), (b,)
        for x, y in zip(a, b, strict=True):
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and x.shape == y.shape, f.name
                if exact:
                    np.testing.assert_array_equal(x, y, err_msg=f.name)
                else:
                    np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, err_msg=f.name)
            else:
                assert x == y, f.name


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 30), d=st.integers(1, 16), seed=st.integers(0, 2**31 - 1),
    dtype=st.sampled_from([np.float32, np.float64]), normalize=st.booleans(),
    given_relevance=st.booleans(), scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_one_query_is_a_batch_of_one(n, d, seed, dtype, normalize, given_relevance, scale):
    rng = np.random.default_rng(seed)
    q = (rng.normal(size=d) * scale).astype(dtype)
    C = (rng.normal(size=(n, d)) * scale).astype(dtype)
    C[np.abs(C).sum(axis=1) == 0, 0] = 1  # no zero rows
    if not np.abs(q).sum():
        q[0] = 1
    rel = rng.normal(size=n) if given_relevance else None
    assert_same(prepare(q, C, batched=False, normalize=normalize, given=Given(rel)),
                batched(q, C, rel, normalize))


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_several_relevance_rows_are_refused_with_the_fusion_to_call(rows):
    q, C = np.ones(3), np.eye(3) + 0.1
    with pytest.raises(ValueError, match=r"^relevance: .*vrsd_core\.pool_units"):
        select(q, C, 2, relevance=np.ones((rows, 3)))
    with pytest.raises(ValueError, match=r"^relevance: .*vrsd_core\.pool_units"):
        select_batch(q[None], C[None], 2, relevance=np.ones((1, rows, 3)))


def test_the_shared_constants_cannot_be_written():
    prep = prepare(np.ones((1, 4)), np.eye(4)[None], batched=True)
    for name in ("valid", "sq_norm", "q_norm"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(prep, name)[0] = 0
    # and a second call sees them unchanged
    assert select(np.ones(4), np.eye(4), 2).indices.tolist() == [0, 1]


def test_the_similarity_is_the_candidates_own_geometry_without_profiles():
    prep = prepare(np.ones(3), np.eye(3) + 0.5, batched=False)
    picks = np.array([1])
    np.testing.assert_allclose(prep.similarity.to(picks), prep.candidates.to(picks))
    unit = (np.eye(3) + 0.5) / np.linalg.norm(np.eye(3) + 0.5, axis=1, keepdims=True)
    np.testing.assert_allclose(prep.candidates.to(picks)[0], unit @ unit[1], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 30), d=st.integers(1, 16), seed=st.integers(0, 2**31 - 1),
    dtype=st.sampled_from([np.float32, np.float64]), scale=st.sampled_from([1e-3, 1.0, 1e3]),
    copies=st.booleans(),
)
def test_the_common_case_is_the_general_path_to_the_bit(n, d, seed, dtype, scale, copies):
    """One query, arrays of one float dtype, nothing else given: ``prepare`` takes a short
    path (``_plain_one``) whose every array is the general path's, bit for bit (a mask of
    all True takes the general path on the same input)."""
    rng = np.random.default_rng(seed)
    q = (rng.normal(size=d) * scale).astype(dtype)
    C = (rng.normal(size=(n, d)) * scale).astype(dtype)
    C[np.abs(C).sum(axis=1) == 0, 0] = 1
    if copies and n > 1:
        C[-1] = C[0]
    if not np.abs(q).sum():
        q[0] = 1
    assert_same(prepare(q, C, batched=False),
                prepare(q, C, batched=False, mask=np.ones((1, n), dtype=bool)), exact=True)


@pytest.mark.parametrize("q,C,message", [
    (np.ones(3, np.float32), np.ones((2, 3)), None),  # mixed dtypes: float64 work
    (np.ones(3), np.ones((3, 2)).T, None),  # not C-ordered
    (np.ones(3), [[2.0, 2.0, 2.0]], None),  # a list
    (np.zeros(3), np.ones((2, 3)), r"^query: zero vector"),
    (np.ones(3), np.array([[1.0, np.nan, 0.0]]), r"^candidates: contains NaN"),
    (np.ones(3), np.zeros((2, 3)), r"^candidates: row 0 is a zero vector"),
    (np.ones(3), np.ones((2, 4)), r"^candidates: dimension 4 does not match"),
])
def test_what_the_common_case_does_not_cover_takes_the_general_path(q, C, message):
    if message is None:
        np.testing.assert_allclose(prepare(q, C, batched=False).rel, 1.0, rtol=1e-6)
    else:
        with pytest.raises(ValueError, match=message):
            prepare(q, C, batched=False)
