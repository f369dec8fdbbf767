"""Hostile input to ``vrsd_core.select`` / ``select_batch`` (hypothesis-driven).

Every call must end in a valid Selection (the documented result: distinct
indices in range, min(max(k, 0), n) of them, finite gains, relevance equal to
the true cosine) or a ValueError naming the argument, and never modify what
the caller passed. The case table is in HOSTILE_CASES.md beside this file.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reliability_checks import assert_unchanged, call_checked, snapshot

from vrsd_core import METHOD_INFO, Selection, method_defaults, select, select_batch

CORE_ARGS = ("query", "queries", "candidates", "k", "method", "relevance", "mask")
OPTION_ARGS = ("lambda_mult", "theta", "refine", "max_swaps", "max_subsets")
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Every float64 value, including NaN, +-inf, subnormals and +-1.8e308.
any_float = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
# Finite values whose squares stay finite and normal in float64 (|x| in [1e-150, 1e150]).
sane_float = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-150, max_value=1e150),
    st.floats(min_value=-1e150, max_value=-1e-150),
)
dtypes = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.bool_])
methods = st.sampled_from(sorted(METHOD_INFO))


def true_cosines(query: np.ndarray, cands: np.ndarray) -> np.ndarray:
    """Cosine of each row with the query, scaled first so no square overflows."""
    q = query.astype(np.float64)
    c = cands.astype(np.float64)
    q = q / np.abs(q).max()
    c = c / np.abs(c).max(axis=1, keepdims=True)
    return (c @ q) / (np.linalg.norm(c, axis=1) * np.linalg.norm(q))


def check_selection(sel: Selection, query: np.ndarray, cands: np.ndarray, k: int,
                    *, normalize: bool = True, relevance_given: bool = False) -> None:
    """The documented result of a successful call."""
    n = cands.shape[0]
    # threshold may run out of acceptable candidates and says so in info.
    want = min(max(k, 0), n) - int(sel.info.get("short_by", 0))
    assert isinstance(sel, Selection)
    assert len(sel) == want, f"{len(sel)} picks, expected min(max(k, 0), n) = {want}"
    idx = sel.indices
    assert idx.dtype.kind == "i"
    assert len(set(idx.tolist())) == len(idx), f"repeated indices {idx.tolist()}"
    assert ((idx >= 0) & (idx < n)).all()
    assert sel.gains.shape == idx.shape and sel.relevance.shape == idx.shape
    assert np.isfinite(sel.gains).all(), f"non-finite gains {sel.gains}"
    assert np.isfinite(sel.relevance).all(), f"non-finite relevance {sel.relevance}"
    assert np.isfinite(sel.objective)
    if want and normalize and not relevance_given:
        tol = 1e-3 if np.result_type(query, cands) != np.float64 else 1e-6
        np.testing.assert_allclose(
            sel.relevance, true_cosines(query, cands)[idx], atol=tol,
            err_msg="reported relevance is not the cosine to the query",
        )
        assert -1 - tol <= sel.objective <= 1 + tol


def _as(value: float, dtype) -> float:
    """``value`` rounded to ``dtype`` (inf when it overflows), as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.asarray(value, dtype=dtype))


@st.composite
def query_and_candidates(draw, elements=sane_float):
    """A query and candidate array of one dtype, mostly well-shaped, sometimes not."""
    dtype = draw(dtypes)
    d = draw(st.integers(1, 6))
    n = draw(st.integers(0, 12))
    elems = elements if np.dtype(dtype).kind == "f" else None
    if np.dtype(dtype).kind == "f" and elements is sane_float and dtype != np.float64:
        lim = 1e-3 if dtype == np.float16 else 1e-15
        elems = st.one_of(st.just(0.0), st.floats(lim, 1 / lim), st.floats(-1 / lim, -lim))
    qshape = draw(st.sampled_from([(d,), (d,), (d,), (d + 1,), (1, d), ()]))
    cshape = draw(st.sampled_from([(n, d), (n, d), (n, d), (n, d + 1), (n,), (1, n, d)]))

    def arr(shape):
        if elems is None:
            return draw(hnp.arrays(dtype, shape))
        return draw(hnp.arrays(dtype, shape, elements=elems.map(lambda v: _as(v, dtype))))

    return arr(qshape), arr(cshape)


@SETTINGS
@given(data=query_and_candidates(), k=st.integers(-3, 15), method=methods)
def test_select_arrays_valid_or_named_error(data, k, method):
    query, cands = data
    before = snapshot((query, cands))
    sel, err = call_checked(lambda: select(query, cands, k, method=method), CORE_ARGS)
    assert_unchanged(before, (query, cands), "select arguments")
    if err is None:
        check_selection(sel, query, cands, k)


@SETTINGS
@given(data=query_and_candidates(elements=any_float), k=st.integers(-1, 8), method=methods)
def test_select_nan_inf_extremes_never_deep(data, k, method):
    """NaN, inf, subnormal and +-1.8e308 entries: a ValueError or a valid result."""
    query, cands = data
    before = snapshot((query, cands))
    with np.errstate(all="ignore"):
        sel, err = call_checked(lambda: select(query, cands, k, method=method), CORE_ARGS)
    assert_unchanged(before, (query, cands), "select arguments")
    if err is None:
        check_selection(sel, query, cands, k)


@pytest.mark.parametrize("method", sorted(METHOD_INFO))
@pytest.mark.parametrize("scale", [1e200, 1e-200], ids=["huge", "tiny"])
def test_select_extreme_but_finite_magnitudes(method, scale):
    """Finite vectors whose squares overflow/underflow float64: cosine is still defined."""
    rng = np.random.default_rng(7)
    cands = rng.normal(size=(8, 4)) * scale
    query = rng.normal(size=4)
    with np.errstate(all="ignore"):
        sel, err = call_checked(lambda: select(query, cands, 3, method=method), CORE_ARGS)
    if err is None:
        check_selection(sel, query, cands, 3)


hostile_k = st.one_of(
    st.integers(-(10**40), 10**40),
    st.integers(-3, 30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([np.int64(3), np.int32(-2), np.float32(2.0), np.uint8(5), 2.0, True,
                     None, "3", b"3", [3], np.array(3), 3 + 0j]),
)


@SETTINGS
@given(k=hostile_k, method=methods)
def test_select_k_any_value(k, method):
    rng = np.random.default_rng(0)
    cands = rng.normal(size=(10, 5))
    query = rng.normal(size=5)
    sel, err = call_checked(lambda: select(query, cands, k, method=method), ("k",))
    if err is None:
        assert isinstance(k, int | float | np.integer | np.floating) and not isinstance(k, bool)
        check_selection(sel, query, cands, int(k))


hostile_option = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.sampled_from([None, "0.5", True, [0.5], "swap", "bogus", 0, 1, 0.5]),
)


@SETTINGS
@given(
    option=st.sampled_from([("mmr", "lambda_mult"), ("dpp", "theta"), ("vrsd", "refine"),
                            ("vrsd", "max_swaps"), ("vrsd_exact", "max_subsets"),
                            ("similarity", "lambda_mult"), ("vrsd", "theta")]),
    value=hostile_option,
)
def test_method_options_any_value(option, value):
    method, name = option
    rng = np.random.default_rng(1)
    cands = rng.normal(size=(9, 4))
    query = rng.normal(size=4)
    opts = {name: value}
    if name == "max_swaps":
        opts["refine"] = "swap"
    sel, err = call_checked(lambda: select(query, cands, 4, method=method, **opts),
                            (name, "refine"))
    if err is None:
        check_selection(sel, query, cands, 4)


@SETTINGS
@given(
    relevance=hnp.arrays(np.float64, st.sampled_from([(10,), (9,), (10, 1), ()]),
                         elements=any_float),
    method=st.sampled_from(["similarity", "mmr", "dpp", "vrsd"]),
)
def test_relevance_any_array(relevance, method):
    rng = np.random.default_rng(2)
    cands = rng.normal(size=(10, 4))
    query = rng.normal(size=4)
    before = snapshot(relevance)
    with np.errstate(all="ignore"):
        sel, err = call_checked(
            lambda: select(query, cands, 4, method=method, relevance=relevance), CORE_ARGS
        )
    assert_unchanged(before, relevance, "relevance")
    if err is None:
        check_selection(sel, query, cands, 4, relevance_given=True)


@SETTINGS
@given(
    b=st.integers(0, 3), n=st.integers(0, 8), d=st.integers(1, 4),
    mask_kind=st.sampled_from(["none", "random", "all_false", "ints", "twos", "wrong_shape",
                               "floats"]),
    k=st.integers(-2, 10), method=methods, seed=st.integers(0, 2**16),
)
def test_select_batch_masks_and_shapes(b, n, d, mask_kind, k, method, seed):
    rng = np.random.default_rng(seed)
    queries = rng.normal(size=(b, d))
    cands = rng.normal(size=(b, n, d))
    mask = {
        "none": None,
        "random": rng.random((b, n)) < 0.6,
        "all_false": np.zeros((b, n), dtype=bool),
        "ints": (rng.random((b, n)) < 0.6).astype(np.int64),
        "twos": np.full((b, n), 2),
        "wrong_shape": np.ones((b, n + 1), dtype=bool),
        "floats": rng.random((b, n)),
    }[mask_kind]
    before = snapshot((queries, cands, mask))
    sels, err = call_checked(
        lambda: select_batch(queries, cands, k, method=method, mask=mask), CORE_ARGS
    )
    assert_unchanged(before, (queries, cands, mask), "select_batch arguments")
    bad_mask = mask_kind in {"wrong_shape", "floats"} or (mask_kind == "twos" and b * n > 0)
    assert (err is not None) == bad_mask, f"mask {mask_kind}: {err}"
    if err is not None:
        assert str(err).startswith("mask:")
        return
    assert len(sels) == b
    valid = np.ones((b, n), bool) if mask is None else np.asarray(mask).astype(bool)
    for row in range(b):
        keep = np.flatnonzero(valid[row])
        sel = sels[row]
        assert set(sel.indices.tolist()) <= set(keep.tolist()), "picked a masked-out row"
        if "seed" in method_defaults(method):
            continue  # sampling over n vs len(keep) rows draws differently
        # The same as one select() over the real candidates of this row.
        single = select(queries[row], cands[row, keep], k, method=method)
        np.testing.assert_array_equal(sel.indices, keep[single.indices])


@pytest.mark.parametrize("method", sorted(METHOD_INFO))
@pytest.mark.parametrize("k", [1, 3, 6, 50])
def test_duplicate_candidates(method, k):
    """All candidates identical, or the same vector repeated among others."""
    rng = np.random.default_rng(3)
    query = rng.normal(size=5)
    same = np.tile(rng.normal(size=5), (6, 1))
    mixed = np.vstack([same[:3], rng.normal(size=(3, 5)), same[:2]])
    for cands in (same, mixed):
        sel = select(query, cands, k, method=method)
        check_selection(sel, query, cands, k)
        if method in {"similarity", "mmr"} and np.allclose(cands, cands[0]):
            # Ties break toward the lower index (the store's own rank).
            np.testing.assert_array_equal(sel.indices, np.arange(min(k, len(cands))))


@pytest.mark.parametrize("method", sorted(METHOD_INFO))
def test_readonly_strided_and_fortran_inputs(method):
    """Read-only, non-contiguous, Fortran-ordered and float32 views give the same picks."""
    rng = np.random.default_rng(4)
    base = rng.normal(size=(24, 8))
    query = rng.normal(size=8)
    opts = {"seed": 0} if "seed" in method_defaults(method) else {}
    plain = select(query, base[::2].copy(), 4, method=method, **opts)
    ro = base[::2]
    ro.flags.writeable = False
    q_ro = query.copy()
    q_ro.flags.writeable = False
    for cands, q in ((ro, q_ro), (np.asfortranarray(base[::2]), query),
                     (base.T.copy().T[::2], query), (base[::2].tolist(), query.tolist())):
        sel = select(q, cands, 4, method=method, **opts)
        np.testing.assert_array_equal(sel.indices, plain.indices)
    assert not ro.flags.writeable and not q_ro.flags.writeable


@pytest.mark.parametrize("method", sorted(METHOD_INFO))
def test_ragged_and_non_numeric_candidates(method):
    query = [1.0, 0.0, 0.0]
    for bad in ([[1.0, 0.0, 0.0], [1.0, 0.0]], [["a", "b", "c"]], [[None, 1.0, 0.0]],
                {"a": 1}, object(), "text"):
        with pytest.raises(ValueError, match=r"^candidates"):
            select(query, bad, 2, method=method)
    with pytest.raises(ValueError, match=r"^method"):
        select(query, [[1.0, 0.0, 0.0]], 1, method=method.upper())
