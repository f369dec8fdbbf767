"""The prepared form every method works on (input checks: ``_checks``; kernels: ``_kernels``).

All methods see the same thing: a stack of B queries, each with n candidate
rows (some masked out), plus the relevance of every candidate. The caller's
arrays are never written: normalisation is applied as a per-row scale on the
n-vectors the methods compute, so no normalised copy of the candidates exists.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._checks import as_float_array, check_finite, check_int, check_length_range
from ._constraints import token_table
from ._groups import feasible_counts, group_codes
from ._kernels import TIE_RTOL


def _squared_lengths(
    X: np.ndarray, valid: np.ndarray, dtype: Any, n: int, all_real: bool
) -> tuple[np.ndarray, bool]:
    """(B, n) float64 squared row lengths; ValueError if a real row holds NaN/inf.

    The flag is True when every real row's length is already known to be
    non-zero and inside the range ``check_length_range`` accepts.

    One pass over X in the working dtype (a float32 dot per row costs about one
    matrix-vector product; float64 accumulation of float32 data costs ten).
    A NaN or inf in a row makes its sum of squares NaN or inf, so finite sums
    prove finite rows. Only when a sum is non-finite or near the dtype's range
    limits is X re-read exactly: the element-wise check, then float64 sums.
    """
    B = X.shape[0]
    if not n:
        return np.zeros((B, 0)), True
    fast = _row_dots(X)  # the caller silences overflow warnings: they are checked here
    # The range check_length_range accepts, with room for the fast sum's rounding.
    tiny, eps, big = _LIMITS[np.dtype(dtype)]
    low = 4.0 * tiny / eps
    high = big / (16.0 * n * n)
    if all_real:  # the common case: two reductions (NaN fails both comparisons)
        if float(fast.min(initial=np.inf)) >= low and float(fast.max(initial=0.0)) <= high:
            return fast.astype(np.float64), True
    elif ((fast >= low) & (fast <= high) | ~valid).all():
        return fast.astype(np.float64), True
    check_finite(X, "candidates", valid)
    return np.einsum("bnd,bnd->bn", X, X, dtype=np.float64), False


# numpy >= 2's vecdot: per-row products without einsum's parsing (None before 2.0)
_VECDOT = getattr(np, "vecdot", None)


def _row_dots_with(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(B, n): X[b, i] . v[b] (a broadcast vecdot is faster than a stacked matmul)."""
    if _VECDOT is not None:
        return _VECDOT(X, v[:, None, :])  # type: ignore[no-any-return]
    return np.matmul(X, v[:, :, None])[:, :, 0]


@functools.lru_cache(maxsize=64)
def _constant(shape: tuple[int, ...], value: Any, dtype: Any = np.float64) -> np.ndarray:
    """A read-only array of one value, shared between calls (the all-True mask and the
    unit lengths of every pool of a size: nothing writes them, and a write would raise)."""
    out = _filled(shape, value, dtype)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=64)
def _units(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One query's all-True (1, n) mask, its unit length (1,) and its candidates' unit
    squared lengths (1, n), shared read-only arrays (one look-up for the three)."""
    return _constant((1, n), True, bool), _constant((1,), 1.0), _constant((1, n), 1.0)


def _filled(shape: tuple[int, ...], value: Any, dtype: Any = np.float64) -> np.ndarray:
    """np.full without its Python-level overhead (a few microseconds a call here)."""
    out = np.empty(shape, dtype=dtype)
    out.fill(value)
    return out


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)
_NATIVE = (_FLOAT32, _FLOAT64)
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce

_LIMITS = {
    np.dtype(t): (float(np.finfo(t).tiny), float(np.finfo(t).eps), float(np.finfo(t).max))
    for t in (np.float32, np.float64)
}


def _row_dots(X: np.ndarray) -> np.ndarray:
    """Per-row x . x in X's dtype (numpy >= 2 has the fast vecdot)."""
    if _VECDOT is not None:
        return _VECDOT(X, X)  # type: ignore[no-any-return]
    return np.einsum("...d,...d->...", X, X)


@dataclass(slots=True)
class Prepared:
    """B queries with n candidates each, checked and ready for a method.

    ``X`` is the caller's candidate array (read only). ``scale[b, i]`` is
    1/|x_bi| when normalising, else 1, so ``scale * (X @ v)`` is the cosine
    geometry without a normalised copy of X.
    """

    X: np.ndarray  # (B, n, d)
    q: np.ndarray  # (B, d), unit length when normalising
    valid: np.ndarray  # (B, n) bool
    scale: np.ndarray  # (B, n)
    sq_norm: np.ndarray  # (B, n): squared length of each working vector
    q_norm: np.ndarray  # (B,): length of the working query
    qsim: np.ndarray  # (B, n): working-vector inner product with the query
    rel: np.ndarray  # (B, n): relevance used by relevance-based methods
    normalize: bool
    all_real: bool = False  # True when no row is padding (valid.all(), known for free)
    # True when ``rel`` is already in pool units: the sum of several signals' z-scores
    # (a relevance given with one row per signal, see ``_relevance``)
    rel_in_pool_units: bool = False
    # The per-source cap (see _groups.py): group code per candidate, picks per group.
    group: np.ndarray | None = None  # (B, n) int64 codes, or None without groups
    cap: int | None = None  # max_per_group; None = no cap (also when no groups)
    feasible: np.ndarray | None = None  # (B,) most picks the cap allows (None: no cap)
    # The token budget (see _constraints.py): token count per candidate, the budget.
    tokens: np.ndarray | None = None  # (B, n) int64, 0 at padding; None without a budget
    budget: int | None = None  # max_tokens
    # Read by every method on every call, so set once here rather than as properties:
    tie_rtol: float = field(init=False)
    """Relative tie tolerance for scores computed from this input's dtype."""
    constrained: bool = field(init=False)
    """A per-group cap or a token budget limits which candidates can be picked."""
    single: bool = field(init=False)
    """One query whose candidates are all real and no token budget: the methods' 1-D
    fast paths apply (they keep a group cap but not a budget, whose picks can run out
    before k; the batched paths handle that)."""

    def __post_init__(self) -> None:
        self.tie_rtol = TIE_RTOL[self.X.dtype]
        self.constrained = self.cap is not None or self.budget is not None
        self.single = self.all_real and self.X.shape[0] == 1 and self.budget is None

    @property
    def batch(self) -> int:
        return int(self.X.shape[0])

    @property
    def n(self) -> int:
        return int(self.X.shape[1])

    def sims_to(self, picks: np.ndarray, factor: float = 1.0) -> np.ndarray:
        """(B, n): factor * working inner product of every candidate with candidate picks[b].

        This is the one n x d matrix-vector product a pick is allowed. The
        pick's own scale (and the factor) ride in its d-vector.
        """
        rows = np.arange(self.batch)
        f = factor * self.scale[rows, picks] if self.normalize else np.full(self.batch, factor)
        v = self.X[rows, picks] * f.astype(self.X.dtype)[:, None]  # (B, d)
        if self.batch == 1:
            out = (self.X[0] @ v[0])[None, :]
        else:
            out = _row_dots_with(self.X, v)
        if self.normalize:
            return out * self.scale
        return out.astype(np.float64)

    def rows(self, start: int, stop: int) -> Prepared:
        """Queries start..stop-1 as their own ``Prepared`` (views, no copies)."""
        cut = slice(start, stop)
        return Prepared(
            X=self.X[cut], q=self.q[cut], valid=self.valid[cut], scale=self.scale[cut],
            sq_norm=self.sq_norm[cut], q_norm=self.q_norm[cut], qsim=self.qsim[cut],
            rel=self.rel[cut], rel_in_pool_units=self.rel_in_pool_units,
            normalize=self.normalize, all_real=self.all_real,
            group=None if self.group is None else self.group[cut], cap=self.cap,
            feasible=None if self.feasible is None else self.feasible[cut],
            tokens=None if self.tokens is None else self.tokens[cut], budget=self.budget,
        )

    def products_into(
        self, j: int, factor: float, out: np.ndarray, row_scale: Any, b: int = 0
    ) -> None:
        """out = row_scale * (X[b] @ (factor * working vector j)), for query b.

        The per-pick product of the single-query paths: the pick's own scale
        (and any factor) rides in the d-vector, ``row_scale`` (the per-row
        scale, possibly times weights; None for 1) is one n-length product.
        """
        X = self.X[b]
        f = factor * float(self.scale[b, j]) if self.normalize else factor
        raw = X @ (X[j] * f)  # a Python float keeps float32 data float32
        if row_scale is None:
            out[:] = raw
        else:
            np.multiply(raw, row_scale, out=out)

    def sims_to_one(self, b: int, j: int) -> np.ndarray:
        """(n,): working inner product of query b's candidates with its candidate j."""
        out = np.empty(self.n)
        self.products_into(j, 1.0, out, self.scale[b] if self.normalize else None, b)
        return out

    def gram(self, b: int, idx: np.ndarray) -> np.ndarray:
        """Working inner products among candidates ``idx`` of query b (small |idx|)."""
        sub = self.X[b, idx]
        g = sub @ sub.T
        if self.normalize:
            s = self.scale[b, idx]
            g = g * s[:, None] * s[None, :]
        return g.astype(np.float64, copy=False)

    def vectors(self, b: int) -> np.ndarray:
        """Working vectors of query b's candidates as a new (n, d) array."""
        if self.normalize:
            return self.X[b] * self.scale[b][:, None]
        return np.array(self.X[b], copy=True)


def prepare(
    queries: Any,
    candidates: Any,
    *,
    mask: Any = None,
    relevance: Any = None,
    normalize: bool = True,
    batched: bool,
    groups: Any = None,
    max_per_group: Any = None,
    token_counts: Any = None,
    max_tokens: Any = None,
) -> Prepared:
    """Check inputs and build the ``Prepared`` view (B=1 for a single query)."""
    if not batched and mask is None and groups is None and max_per_group is None \
            and token_counts is None and max_tokens is None:
        one = _prepare_one(queries, candidates, relevance, normalize)
        if one is not None:
            return one
    cap = check_int(max_per_group, "max_per_group", low=1, allow_none=True)
    q, X, qname = _as_stacks(queries, candidates, batched)
    B, n, _ = X.shape
    valid = _valid_mask(mask, (B, n))
    all_real = mask is None or bool(valid.all())
    X, q_norm, sq = _checked_lengths(q, X, valid, all_real, qname, batched)
    if normalize:
        q, q_norm, scale, sq_norm = _unit_scale(q, q_norm, sq, valid, all_real)
    else:
        scale, sq_norm = np.ones((B, n)), sq
    qsim = _query_products(X, q, scale, normalize)
    if not all_real:
        qsim = np.where(valid, qsim, 0.0)
    rel, in_pool_units = (qsim, False) if relevance is None else _relevance(
        relevance, (B, n), valid, batched)
    codes, cap, feasible = _group_cap(groups, cap, (B, n), valid, batched)
    tokens, budget = token_table(token_counts, max_tokens, (B, n), valid, batched)
    return Prepared(
        X=X, q=q, valid=valid, scale=scale, sq_norm=sq_norm, q_norm=q_norm, qsim=qsim,
        rel=rel, rel_in_pool_units=in_pool_units, normalize=normalize, all_real=all_real,
        group=codes, cap=cap, feasible=feasible, tokens=tokens, budget=budget,
    )


def _prepare_one(query: Any, candidates: Any, relevance: Any, normalize: bool) -> Prepared | None:
    """``prepare`` of the common call, one query over n >= 1 candidates with no mask,
    cap or budget, in a dozen numpy calls instead of about forty: the same arrays as
    the general path (tests/unit_tests/core/test_prepare.py holds them equal), because
    ``select``'s fixed cost is most of a rerank of 50 candidates. None when anything
    is unusual (a shape to refuse, NaN/inf, a zero or out-of-range length): the
    general path then checks it and raises the error naming it."""
    q = query if type(query) is np.ndarray else as_float_array(query, "query")
    X = candidates if type(candidates) is np.ndarray else as_float_array(candidates, "candidates")
    if q.ndim != 1 or X.ndim != 2 or not X.shape[0] or X.shape[1] != q.shape[0] \
            or not q.shape[0] or q.dtype not in _NATIVE or X.dtype not in _NATIVE:
        return None
    if q.dtype != X.dtype:  # float32 only when both are
        q, X = q.astype(np.float64, copy=False), X.astype(np.float64, copy=False)
    if not X.flags.c_contiguous:
        X = np.ascontiguousarray(X)
    dtype = X.dtype
    n = X.shape[0]
    X3 = X[None, :, :]
    # No errstate here (it costs a tenth of the call): a length that overflows is one the
    # general path refuses as too long, so numpy's overflow warning only precedes that
    # ValueError; NaN and inf propagate without a warning.
    q64 = q.astype(np.float64)
    q_sq = float(q64.dot(q64))
    sq = _VECDOT(X3, X3) if _VECDOT is not None else _row_dots(X3)
    tiny, eps, big = _LIMITS[dtype]
    # the ufuncs' own reductions: np.min and np.max add three Python frames each
    if not (float(_MIN(sq, None)) >= 4.0 * tiny / eps
            and float(_MAX(sq, None)) <= big / (16.0 * n * n)
            and 0.0 < q_sq < math.inf):  # NaN fails every comparison
        return None
    # _unit_scale and _query_products for one query, inline (each call is a tenth of this)
    q_len = math.sqrt(q_sq)
    if normalize:
        scale = 1.0 / np.sqrt(sq, dtype=np.float64)
        q = q * (1.0 / q_len)  # a Python float keeps float32 data float32
        qsim = (X @ q) * scale  # (n,) by (1, n): the (1, n) row
        valid, q_norm, sq_norm = _units(n)
    else:
        scale, q_norm, sq_norm = np.ones((1, n)), np.array([q_len]), sq.astype(np.float64)
        qsim = (X @ q)[None, :].astype(np.float64)
        valid = _units(n)[0]
    rel, in_pool_units = (qsim, False) if relevance is None else _relevance(
        relevance, (1, n), valid, False)
    return Prepared(X=X3, q=q[None, :], valid=valid, scale=scale, sq_norm=sq_norm,
                    q_norm=q_norm, qsim=qsim, rel=rel, rel_in_pool_units=in_pool_units,
                    normalize=normalize, all_real=True)


def _query_squares(q: np.ndarray) -> list[float]:
    """Each query's squared length, in float64, as Python floats (NaN/inf when the query
    holds one or its length is past float64)."""
    if q.shape[0] == 1:  # one dot: a few numpy calls fewer than the batched form
        q64 = q[0].astype(np.float64)
        return [float(q64.dot(q64))]
    q64 = q.astype(np.float64)
    return (q64 * q64).sum(axis=1).tolist()  # type: ignore[no-any-return]


def _as_stacks(queries: Any, candidates: Any, batched: bool
               ) -> tuple[np.ndarray, np.ndarray, str]:
    """(B, d) queries and (B, n, d) C-ordered candidates in one working dtype (float32
    only when both are float32), shapes checked; and the queries' argument name."""
    qname = "queries" if batched else "query"
    q = as_float_array(queries, qname)
    X = as_float_array(candidates, "candidates")
    if batched:
        if q.ndim != 2:
            raise ValueError(f"queries: expected a 2-D array (B, d), got shape {q.shape}")
        if X.ndim != 3:
            raise ValueError(
                f"candidates: expected a 3-D array (B, n, d), got shape {X.shape}"
            )
        if X.shape[0] != q.shape[0]:
            raise ValueError(
                f"candidates: {X.shape[0]} candidate sets for {q.shape[0]} queries"
            )
    else:
        if q.ndim != 1:
            raise ValueError(f"query: expected a 1-D vector, got shape {q.shape}")
        if X.ndim == 1 and X.size == 0:
            X = X.reshape(0, q.shape[0])
        if X.ndim != 2:
            raise ValueError(f"candidates: expected a 2-D array (n, d), got shape {X.shape}")
        q = q[None, :]
        X = X[None, :, :]
    _, n, d = X.shape
    if q.shape[1] == 0:
        raise ValueError(f"{qname}: has dimension 0")
    if n and d != q.shape[1]:
        raise ValueError(
            f"candidates: dimension {d} does not match the query dimension {q.shape[1]}"
        )
    dtype = _FLOAT32 if X.dtype == _FLOAT32 and q.dtype == _FLOAT32 else _FLOAT64
    return np.asarray(q, dtype=dtype), np.ascontiguousarray(X, dtype=dtype), qname


def _valid_mask(mask: Any, shape: tuple[int, int]) -> np.ndarray:
    """(B, n) booleans, True for a real candidate (a private copy of ``mask``)."""
    if mask is None:
        return _constant(shape, True, bool)
    m = np.asarray(mask)
    if m.shape != shape:
        raise ValueError(f"mask: expected shape {shape}, got {m.shape}")
    if m.dtype != bool:
        if m.dtype.kind not in "biu" or not np.isin(m, (0, 1)).all():
            raise ValueError("mask: expected booleans (True = a real candidate)")
        m = m.astype(bool)
    return m.copy()


def _checked_lengths(
    q: np.ndarray, X: np.ndarray, valid: np.ndarray, all_real: bool, qname: str, batched: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, |q|, squared row lengths), refusing NaN/inf, zero vectors and lengths out of
    float range; NaN/inf padding rows are zeroed in a private copy of X."""
    B, n, _ = X.shape
    dtype = X.dtype
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        q_sq_list = _query_squares(q)
        if not all(map(math.isfinite, q_sq_list)):  # NaN/inf in q, or a length past float64
            check_finite(q, qname)
        sq, in_range = _squared_lengths(X, valid, dtype, n, all_real)
    if 0.0 in q_sq_list:
        raise ValueError(f"{qname}: zero vector (cosine is undefined)")
    if not in_range and (valid & (sq == 0)).any():
        b, i = np.argwhere(valid & (sq == 0))[0]
        where = f"row {i}" if not batched else f"set {b}, row {i}"
        raise ValueError(f"candidates: {where} is a zero vector (cosine is undefined)")
    if not all(map(math.isfinite, q_sq_list)):  # the query is normalised alone: only overflow
        raise ValueError(f"{qname}: too long for float64 arithmetic; rescale the vector")
    if not in_range:
        check_length_range(sq, valid, "candidates", dtype, n, batched)
    if not all_real and n:
        junk = ~valid & ~np.isfinite(sq)
        if junk.any():  # NaN/inf padding: zero it in a private copy so products stay finite
            X = X.copy()
            X[junk] = 0
    return X, np.sqrt(q_sq_list), sq


def _unit_scale(
    q: np.ndarray, q_norm: np.ndarray, sq: np.ndarray, valid: np.ndarray, all_real: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cosine geometry without a normalised copy of X: the unit query, its length 1,
    each row's scale 1/|x| (0 at padding) and the working rows' squared length."""
    B, n = sq.shape
    if all_real:  # every length is known to be > 0
        scale = 1.0 / np.sqrt(sq)
        sq_norm = _constant((B, n), 1.0)
    else:
        scale = np.where(valid, 1.0 / np.sqrt(np.where(sq > 0, sq, 1.0)), 0.0)
        sq_norm = valid.astype(np.float64)
    if B == 1:  # the same product with a scalar: three numpy calls fewer
        q = q * q.dtype.type(1.0 / float(q_norm[0]))
    else:
        q = q * (1.0 / q_norm).astype(q.dtype)[:, None]
    return q, _constant((B,), 1.0), scale, sq_norm


def _query_products(X: np.ndarray, q: np.ndarray, scale: np.ndarray, normalize: bool
                    ) -> np.ndarray:
    """(B, n) float64 working inner products of every candidate with its query."""
    B, n, _ = X.shape
    if not n:
        return np.zeros((B, 0))
    raw = (X[0] @ q[0])[None, :] if B == 1 else _row_dots_with(X, q)  # 3x a stacked matmul
    return raw * scale if normalize else raw.astype(np.float64)


def _relevance(relevance: Any, shape: tuple[int, int], valid: np.ndarray, batched: bool
               ) -> tuple[np.ndarray, bool]:
    """The caller's relevance as (B, n) float64, 0 at padding, checked finite where real,
    and whether it is in pool units.

    One score per candidate is taken as it is. Several signals, one row each (shape
    (m, n), batched (B, m, n); e.g. the cosine and a lexical score) are fused in pool
    units: each standardised over the pool's real candidates and summed, so each
    signal's standard deviation counts alike and no weight is needed, and the sum
    standardised again, so that one unit is one standard deviation of relevance
    whatever the number of signals or how much they agree."""
    r = as_float_array(relevance, "relevance").astype(np.float64)
    want = shape if batched else shape[1:]
    signals = r.ndim == len(want) + 1 and r.shape[-1:] == want[-1:] and \
        r.shape[:-2] == want[:-1] and r.shape[-2] >= 1
    if r.shape != want and not signals:
        raise ValueError(f"relevance: expected shape {want} (or one row per signal: "
                         f"{(*want[:-1], 'm', want[-1])}), got {r.shape}")
    if not signals:
        r = r.reshape(shape)
        check_finite(r, "relevance", valid)
        return np.where(valid, r, 0.0), False
    r = r.reshape((shape[0], r.shape[-2], shape[1]))
    check_finite(r, "relevance", np.broadcast_to(valid[:, None, :], r.shape))
    fused = sum(standardised(r[:, s], valid) for s in range(r.shape[1]))
    return standardised(np.asarray(fused, dtype=np.float64), valid), True


def standardised(x: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """z-scores of ``x`` (B, n) within each row's real candidates (0 at padding, and
    everywhere in a row whose values do not vary); ``valid`` None: every one is real
    (the same arithmetic, without the masks)."""
    if valid is None and x.shape[0] == 1:  # one pool: the same arithmetic in four calls
        n = max(x.shape[-1], 1)
        mean1 = float(np.add.reduce(x, axis=None)) / n  # x.sum() adds a Python frame
        dev = x - mean1
        std1 = math.sqrt(float(_row_dots(dev)[0]) / n)
        if std1 > 1e-12 * max(1.0, abs(mean1)):
            return dev / std1  # type: ignore[no-any-return]
        return np.zeros_like(x)
    if valid is None:
        count: Any = max(x.shape[-1], 1)
        mean = x.sum(axis=-1, keepdims=True) / count
        dev = x - mean
    else:
        count = np.maximum(valid.sum(axis=-1, keepdims=True), 1)
        mean = np.where(valid, x, 0.0).sum(axis=-1, keepdims=True) / count
        dev = np.where(valid, x - mean, 0.0)
    std = np.sqrt(_row_dots(dev)[..., None] / count)
    # the spread test in Python floats: a few numpy calls fewer for a few pools
    if all(s > 1e-12 * max(1.0, abs(m)) for s, m in zip(std.ravel().tolist(),
                                                        mean.ravel().tolist(), strict=True)):
        return dev / std
    spread = std > 1e-12 * np.maximum(1.0, np.abs(mean))
    return np.where(spread, dev / np.where(spread, std, 1.0), 0.0)


def _group_cap(
    groups: Any, cap: int | None, shape: tuple[int, int], valid: np.ndarray, batched: bool
) -> tuple[np.ndarray | None, int | None, np.ndarray | None]:
    """Group codes, the cap (None without groups) and the most picks it allows."""
    if groups is None:
        if cap is not None:
            raise ValueError("max_per_group: needs groups (one label per candidate)")
        return None, None, None
    codes = group_codes(groups, shape, valid, batched)
    return codes, cap, None if cap is None else feasible_counts(codes, valid, cap)
