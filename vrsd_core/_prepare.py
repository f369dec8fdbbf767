"""The caller's inputs checked and put in pool units: the form every method works on.

* **Checks** (``as_float_array``, ``check_int``, ``did_you_mean``, ...), shared by
  ``prepare``, the quality prior and the method options. Each raises ``ValueError``
  naming the argument; none of them writes its input.
* **The prepared form** (``prepare``, ``Prepared``), its tie rule (``argmax_first``:
  scores within ``Prepared.tie_rtol`` of the best tie, and the lowest candidate index,
  the store's own rank, wins), and the geometry the profiles give
  (``with_word_profiles``). All methods see the same thing: a stack of B queries, each
  with n candidate rows (some masked out), plus the relevance of every candidate. The
  caller's arrays are never written: normalisation is a per-row scale on the products
  the methods compute (``Geometry``), not a normalised copy of the candidates (the
  profiles' geometry is a joined copy, ``with_word_profiles``).
* **Relevance in the pool's units** (``pool_units``, ``standardised``): several
  relevance signals fused without a weight.
* **Links between candidates** (``Links``, the default's ``links`` option, checked by
  ``checked_links`` into ``LinkArrays``; the greedy loop reads them through
  ``vrsd_core.methods.complement.Lift``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, overload

import numpy as np
from numpy.typing import NDArray

from ._constraints import token_table
from ._groups import feasible_counts, group_codes

# --- Checks ---------------------------------------------------------------------------

NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_float_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float32/float64 array (float32 stays float32), or ValueError."""
    if type(value) is np.ndarray and value.dtype in NATIVE_FLOATS:  # as it is
        return value
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name}: cannot be read as a numeric array ({exc})") from None
    if arr.dtype == object:
        raise ValueError(f"{name}: ragged or non-numeric values (dtype=object)")
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype.kind == "f":
        if arr.dtype not in (np.float32, np.float64):
            arr = arr.astype(np.float64)
    else:
        raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    return arr


def check_k(k: Any) -> int:
    """``k`` as an int: integers and integral floats (3.0) pass; bools do not."""
    if type(k) is int and -sys.maxsize <= k <= sys.maxsize:  # the common case, at once
        return k
    if isinstance(k, bool | np.bool_):
        raise ValueError(f"k: expected an integer, got {k!r}")
    if not isinstance(k, numbers.Integral):
        if not (isinstance(k, numbers.Real) and float(k).is_integer()):
            raise ValueError(f"k: expected an integer, got {k!r}")
    # A k past any candidate count (10**30, 1e300) means "all": clamp it so the
    # methods' numpy arithmetic on k cannot overflow.
    return max(min(int(k), sys.maxsize), -sys.maxsize)


def did_you_mean(name: str, valid: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean X?"`` for the name in ``valid`` closest to ``name`` (difflib's
    ratio at least ``cutoff``), else ``""``: the one spelling of that hint."""
    close = difflib.get_close_matches(str(name), sorted(map(str, valid)), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]}?" if close else ""


def check_keywords(given: Iterable[Any], valid: Iterable[str], owner: str) -> None:
    """ValueError for the first name in ``given`` that is not in ``valid``, naming it,
    ``owner`` and the closest valid name (else all of them): a misspelt keyword
    (``fetchk=4``) is refused instead of silently ignored."""
    valid = set(valid)
    unknown = sorted(str(name) for name in given if name not in valid)
    if unknown:
        hint = did_you_mean(unknown[0], valid) or f"; its keywords: {', '.join(sorted(valid))}"
        raise ValueError(f"{unknown[0]}: unknown keyword for {owner}{hint}")


def check_unit(value: Any, name: str, *, closed_right: bool = True) -> float:
    """A float in [0, 1] (or [0, 1) when ``closed_right`` is False)."""
    if type(value) is float and 0.0 <= value < 1.0:  # the common case, at once
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number in [0, 1], got {value!r}")
    v = float(value)
    upper_ok = v <= 1.0 if closed_right else v < 1.0
    if not (v >= 0.0 and upper_ok):
        bound = "[0, 1]" if closed_right else "[0, 1)"
        raise ValueError(f"{name}: must be in {bound}, got {value!r}")
    return v


@overload
def check_int(value: Any, name: str, *, low: int, allow_none: Literal[False] = False) -> int: ...
@overload
def check_int(value: Any, name: str, *, low: int, allow_none: bool) -> int | None: ...
def check_int(value: Any, name: str, *, low: int, allow_none: bool = False) -> int | None:
    """An integer >= ``low`` (or None when allowed), else ValueError naming it."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name}: expected an integer >= {low}{extra}, got {value!r}")
    return int(value)


def check_real(
    value: Any, name: str, *, low: float, high: float = math.inf,
    low_open: bool = False, allow_inf: bool = False,
) -> float:
    """A real number in [low, high] ((low, high] if ``low_open``), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    above = v > low if low_open else v >= low
    if not (above and v <= high):
        left = "(" if low_open else "["
        right = "]" if math.isfinite(high) or allow_inf else ")"
        raise ValueError(f"{name}: must be in {left}{low:g}, {high:g}{right}, got {value!r}")
    return v


def check_finite(arr: np.ndarray, name: str, where: np.ndarray | None = None) -> None:
    bad = ~np.isfinite(arr)
    if where is not None:
        bad &= where[..., None] if bad.ndim == where.ndim + 1 else where
    if bad.any():
        raise ValueError(f"{name}: contains NaN or infinite values")


def check_length_range(
    sq: np.ndarray, valid: np.ndarray, name: str, dtype: Any, n: int, batched: bool
) -> None:
    """Refuse finite candidate rows too long or too short for the working dtype.

    The methods multiply unnormalised rows (normalisation is a per-row scale on
    the products) and sum up to n of them, so a squared length must keep
    n^2 * |x|^2 finite and |x|^2 a normal number; past that the products are
    inf/NaN or subnormal noise and the picks would be silently wrong.
    """
    info = np.finfo(dtype)
    high = float(info.max) / (4.0 * max(n, 1) ** 2)
    low = float(info.tiny) / float(info.eps)
    bad = valid & ~((sq >= low) & (sq <= high))
    if bad.any():
        b, i = np.argwhere(bad)[0]
        where = f"row {i}" if not batched else f"set {b}, row {i}"
        size = "too short" if sq[b, i] < low else "too long"
        raise ValueError(
            f"{name}: {where} is {size} for {np.dtype(dtype).name} arithmetic "
            f"(squared length {sq[b, i]:.3g}, allowed {low:.3g} to {high:.3g}); "
            "rescale the vectors"
        )


# --- The prepared form ----------------------------------------------------------------

# Scores within this relative distance of the best count as a tie, and ties go
# to the lower candidate index (the store's own rank). Scores and every running
# quantity of the greedy methods (s.q, |s|^2, s.c_j, MMR's running maximum,
# DPP's Cholesky rows) are float64 whatever the input; only the per-pick
# matrix-vector products of float32 input are computed in float32 (BLAS), then
# widened. The tolerance follows the *input* dtype (``Prepared.tie_rtol``):
# - float64: 1e-10, far above the products' rounding (~1e-16 * sqrt(d)).
# - float32: 1e-6: two identical float32 rows get products that differ in the
#   last bits (BLAS sums rows in different blockings), and the store's rank must
#   still decide between such twins; float32 picks equal a float64 run on the
#   same values unless two gains are within 1e-6 relative.
TIE_RTOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-10}


DEFAULT_RTOL = TIE_RTOL[np.dtype(np.float64)]  # the tie tolerance of float64 input

# The lowest finite float64: a tie threshold never goes below it, so a score of -inf
# (a candidate already picked or closed) never ties a best score near -1.8e308, whose
# threshold would overflow to -inf.
LOWEST = float(np.finfo(np.float64).min)


def tie_margin(best: Any, rtol: float) -> Any:
    """How close to ``best`` a score ties it: rtol * max(1, |best|). The project's one tie
    rule: ``argmax_first`` picks with it, and a search that keeps a best value
    (``beats``) replaces it only beyond it."""
    return rtol * np.maximum(1.0, np.abs(best))


def tie_threshold(best: Any, rtol: float) -> Any:
    """The lowest score that ties ``best`` (best - ``tie_margin``), kept finite; a NaN
    best gives a NaN threshold (nothing ties it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(best - tie_margin(best, rtol), LOWEST)


def beats(value: float, best: float, rtol: float = DEFAULT_RTOL) -> bool:
    """``value`` is above ``best`` by more than a tie: an earlier best keeps its place."""
    return bool(value > best + tie_margin(best, rtol))


def first_of_best(scores: np.ndarray, rtol: float = DEFAULT_RTOL, best: Any = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``scores``, the lowest index whose score ties the row's best (within
    ``rtol``: the store's rank decides between equals), and each row's tie threshold.
    A row holding NaN has a NaN threshold and returns index 0. ``best``: each row's
    largest score, when the caller has it already."""
    threshold = tie_threshold(scores.max(axis=-1) if best is None else best, rtol)
    return (scores >= threshold[..., None]).argmax(axis=-1), threshold


def argmax_first(scores: np.ndarray, rtol: float = DEFAULT_RTOL, best: Any = None
                 ) -> np.ndarray:
    """Per row, the lowest index whose score ties the row's best (within ``rtol``);
    ``best``: each row's largest score, when the caller has it already."""
    return first_of_best(scores, rtol, best)[0]


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
    fast = row_dots(X)  # the caller silences overflow warnings: they are checked here
    # The range check_length_range accepts, with room for the fast sum's rounding.
    tiny, eps, big = _LIMITS[dtype]
    low = 4.0 * tiny / eps
    high = big / (16.0 * n * n)
    if all_real:  # the common case: two reductions (NaN fails both comparisons)
        if float(fast.min(initial=np.inf)) >= low and float(fast.max(initial=0.0)) <= high:
            return fast.astype(np.float64, copy=False), True
    elif ((fast >= low) & (fast <= high) | ~valid).all():
        return fast.astype(np.float64, copy=False), True
    check_finite(X, "candidates", valid)
    return np.einsum("bnd,bnd->bn", X, X, dtype=np.float64), False


# numpy >= 2's vecdot: per-row products without einsum's parsing (None before 2.0)
_VECDOT = getattr(np, "vecdot", None)


def _row_dots_with(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(B, n): X[b, i] . v[b]. One query: BLAS's matrix-vector product; a batch: a
    broadcast vecdot. The two round differently in the
    last bits, so every product of a query of B = 1 takes the same one."""
    if X.shape[0] == 1:
        return (X[0] @ v[0])[None, :]  # type: ignore[no-any-return]
    if _VECDOT is not None:
        return _VECDOT(X, v[:, None, :])  # type: ignore[no-any-return]
    return np.matmul(X, v[:, :, None])[:, :, 0]


@functools.lru_cache(maxsize=64)
def _constant(shape: tuple[int, ...], value: Any, dtype: Any = np.float64) -> np.ndarray:
    """A read-only array of one value, shared between calls (the all-True mask and the
    unit lengths of every pool of a size: nothing writes them, and a write would raise)."""
    out = np.full(shape, value, dtype=dtype)
    out.flags.writeable = False
    return out


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)

_LIMITS = {
    np.dtype(t): (float(np.finfo(t).tiny), float(np.finfo(t).eps), float(np.finfo(t).max))
    for t in (np.float32, np.float64)
}


def row_dots(X: np.ndarray) -> np.ndarray:
    """Per-row x . x in X's dtype (numpy >= 2 has the fast vecdot)."""
    if _VECDOT is not None:
        return _VECDOT(X, X)  # type: ignore[no-any-return]
    return np.einsum("...d,...d->...", X, X)


@dataclass(slots=True)
class Geometry:
    """Vectors whose inner products a method reads, kept as given: ``vectors`` (B, n, e)
    read only, ``scale[b, i]`` 1/|v_bi| when normalising (else 1), so that
    ``scale * (vectors @ v)`` is the cosine geometry without a normalised copy.

    A ``Prepared`` problem carries two: ``candidates`` (the caller's vectors, always)
    and ``similarity`` (what the similarity between candidates reads: the candidates'
    own geometry, or the vectors with their profiles, ``with_word_profiles``).
    """

    vectors: np.ndarray  # (B, n, e)
    scale: np.ndarray  # (B, n)
    self_similarity: np.ndarray  # (B, n): each working vector's squared length, S_ii
    normalize: bool

    def to(self, picks: np.ndarray, factor: float = 1.0) -> np.ndarray:
        """(B, n) float64: factor * similarity of every candidate with candidate picks[b].

        The one n x e matrix-vector product a pick is allowed; the pick's own scale
        (and the factor) ride in its e-vector."""
        rows = np.arange(self.vectors.shape[0])
        pick_vectors = self.vectors[rows, picks]
        if self.normalize or factor != 1.0:
            pick_scale = factor * self.scale[rows, picks] if self.normalize \
                else np.full(len(rows), factor)
            pick_vectors = pick_vectors * pick_scale.astype(self.vectors.dtype)[:, None]
        products = _row_dots_with(self.vectors, pick_vectors)
        if self.normalize:
            return products * self.scale  # type: ignore[no-any-return]
        return products.astype(np.float64, copy=False)

    def columns(self, b: int, factor: float = 1.0) -> Callable[[int], np.ndarray]:
        """j -> (n,) float64: ``factor`` times the similarity of query b's candidates with
        its candidate j (the one n x e matrix-vector product a pick is allowed, widened to
        float64 before the factor), for a loop that takes one column per pick: query b's
        working vectors (``working``) made once."""
        vectors = self.working(b)
        if factor == 1.0:
            return lambda j: (vectors @ vectors[j]).astype(np.float64)
        return lambda j: np.multiply(vectors @ vectors[j], factor, dtype=np.float64)

    def gram(self, b: int, idx: np.ndarray) -> np.ndarray:
        """Similarities among candidates ``idx`` of query b (small |idx|)."""
        sub = self.vectors[b, idx]
        g = sub @ sub.T
        if self.normalize:
            s = self.scale[b, idx]
            g = g * s[:, None] * s[None, :]
        return g.astype(np.float64, copy=False)

    def working(self, b: int) -> np.ndarray:
        """Query b's working vectors (unit length when normalising), (n, e) of the vectors'
        dtype, to read: a new array when normalising, else the vectors themselves."""
        vectors = self.vectors[b]
        if self.normalize:
            return vectors * self.scale[b][:, None].astype(vectors.dtype)  # type: ignore[no-any-return]
        return vectors

    def rows(self, cut: slice) -> Geometry:
        return Geometry(self.vectors[cut], self.scale[cut], self.self_similarity[cut],
                        self.normalize)


@dataclass(slots=True, kw_only=True)
class Prepared:
    """B queries with n candidates each, checked and ready for a method.

    ``X`` is the caller's candidate array (read only). ``scale[b, i]`` is
    1/|x_bi| when normalising, else 1, so ``scale * (X @ v)`` is the cosine
    geometry without a normalised copy of X. ``candidates`` is that geometry;
    ``similarity`` is what the methods' similarity between candidates reads (the
    candidates unless ``profiles`` were given: ``with_word_profiles``).
    """

    X: np.ndarray  # (B, n, d)
    q: np.ndarray  # (B, d), unit length when normalising
    valid: np.ndarray  # (B, n) bool
    scale: np.ndarray  # (B, n)
    sq_norm: np.ndarray  # (B, n): squared length of each working vector
    q_norm: np.ndarray  # (B,): length of the working query
    qsim: np.ndarray | None  # (B, n) working-vector inner product with the query (query_dots)
    rel: np.ndarray  # (B, n): one relevance score per candidate (0 at padding)
    normalize: bool
    all_real: bool = False  # True when no row is padding (valid.all(), known for free)
    # The per-source cap (see _groups.py): group code per candidate, picks per group.
    group: np.ndarray | None = None  # (B, n) int64 codes, or None without groups
    cap: int | None = None  # max_per_group; None = no cap (also when no groups)
    feasible: np.ndarray | None = None  # (B,) most picks the cap allows (None: no cap)
    # The token budget (see _constraints.py): token count per candidate, the budget.
    tokens: np.ndarray | None = None  # (B, n) int64, 0 at padding; None without a budget
    budget: int | None = None  # max_tokens
    similarity: Geometry  # what the similarity between candidates reads
    candidates: Geometry = field(init=False)  # X, scale and sq_norm together
    tie_rtol: float = field(init=False)
    """Relative tie tolerance for scores computed from this input's dtype."""
    constrained: bool = field(init=False)
    """A per-group cap or a token budget limits which candidates can be picked."""

    def __post_init__(self) -> None:
        self.candidates = Geometry(self.X, self.scale, self.sq_norm, self.normalize)
        self.tie_rtol = TIE_RTOL[self.X.dtype]
        self.constrained = self.cap is not None or self.budget is not None

    def query_dots(self) -> np.ndarray:
        """(B, n): each working vector's inner product with its query, 0 at padding; read
        by the methods that score the vectors against the query (an outside relevance
        replaces it for the others), computed when first read."""
        if self.qsim is None:
            qsim = _query_products(self.X, self.q, self.scale, self.normalize)
            self.qsim = qsim if self.all_real else np.where(self.valid, qsim, 0.0)
        return self.qsim

    @property
    def batch(self) -> int:
        return int(self.X.shape[0])

    @property
    def n(self) -> int:
        return int(self.X.shape[1])

    def rows(self, start: int, stop: int) -> Prepared:
        """Queries start..stop-1 as their own ``Prepared`` (views, no copies)."""
        cut = slice(start, stop)
        return Prepared(
            X=self.X[cut], q=self.q[cut], valid=self.valid[cut], scale=self.scale[cut],
            sq_norm=self.sq_norm[cut], q_norm=self.q_norm[cut],
            qsim=None if self.qsim is None else self.qsim[cut],
            rel=self.rel[cut], normalize=self.normalize, all_real=self.all_real,
            group=None if self.group is None else self.group[cut], cap=self.cap,
            feasible=None if self.feasible is None else self.feasible[cut],
            tokens=None if self.tokens is None else self.tokens[cut], budget=self.budget,
            similarity=self.similarity.rows(cut),
        )


class Given(NamedTuple):
    """What the caller gives beside the vectors, as ``select`` takes it (checked by
    ``prepare``): an outside relevance, group labels with the cap, token counts with the
    budget."""

    relevance: Any = None
    groups: Any = None
    max_per_group: Any = None
    token_counts: Any = None
    max_tokens: Any = None


NOTHING_GIVEN = Given()


def prepare(queries: Any, candidates: Any, *, batched: bool, mask: Any = None,
            normalize: bool = True, given: Given = NOTHING_GIVEN) -> Prepared:
    """Check inputs and build the ``Prepared`` view (B = 1 for a single query)."""
    if not batched and mask is None and normalize and all(v is None for v in given):
        plain = _plain_one(queries, candidates)
        if plain is not None:
            return plain
    relevance, groups, max_per_group = given.relevance, given.groups, given.max_per_group
    token_counts, max_tokens = given.token_counts, given.max_tokens
    cap = check_int(max_per_group, "max_per_group", low=1, allow_none=True)
    q, X, qname = _as_stacks(queries, candidates, batched)
    B, n, _ = X.shape
    valid = _valid_mask(mask, (B, n))
    all_real = mask is None or bool(valid.all())
    X, q_squares, sq = _checked_lengths(q, X, valid, all_real, qname, batched)
    if normalize:
        q, q_norm, scale, sq_norm = _unit_scale(q, q_squares, sq, valid, all_real)
    else:
        q_norm, scale, sq_norm = np.sqrt(q_squares), np.ones((B, n)), sq
    qsim = None  # an outside relevance replaces the products with the query: none computed
    if relevance is None:
        qsim = _query_products(X, q, scale, normalize)
        qsim = rel = qsim if all_real else np.where(valid, qsim, 0.0)
    else:
        rel = _relevance(relevance, (B, n), valid, batched)
    codes, cap, feasible = _group_cap(groups, cap, (B, n), valid, batched)
    tokens, budget = None, None
    if token_counts is not None or max_tokens is not None:
        budget = check_int(max_tokens, "max_tokens", low=0, allow_none=True)
        tokens, budget = token_table(token_counts, budget, (B, n), valid, batched)
    return Prepared(
        X=X, q=q, valid=valid, scale=scale, sq_norm=sq_norm, q_norm=q_norm, qsim=qsim,
        rel=rel, normalize=normalize, all_real=all_real,
        group=codes, cap=cap, feasible=feasible, tokens=tokens, budget=budget,
        similarity=Geometry(X, scale, sq_norm, normalize),
    )


def _plain_one(query: Any, candidates: Any) -> Prepared | None:
    """``prepare``'s common case: one query and its candidates, arrays of one float dtype
    (the candidates C-ordered), every length in range, the cosine geometry, nothing given
    beside them. The general path's own steps, without its conversions and the checks
    this case cannot need; None for any other input, which the general path checks."""
    if type(query) is not np.ndarray or type(candidates) is not np.ndarray:
        return None
    dtype = candidates.dtype
    if (dtype not in NATIVE_FLOATS or query.dtype != dtype or query.ndim != 1
            or candidates.ndim != 2 or not candidates.flags.c_contiguous):
        return None
    n, d = candidates.shape
    if not (n and d and d == query.shape[0]):
        return None
    q, X, valid = query[None], candidates[None], _constant((1, n), True, bool)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        q_squares = _query_squares(q)
        sq, in_range = _squared_lengths(X, valid, dtype, n, True)
    if not (in_range and 0.0 < q_squares[0] < math.inf):
        return None
    q, q_norm, scale, sq_norm = _unit_scale(q, q_squares, sq, valid, True)
    rel = _query_products(X, q, scale, True)
    return Prepared(X=X, q=q, valid=valid, scale=scale, sq_norm=sq_norm, q_norm=q_norm,
                    qsim=rel, rel=rel, normalize=True, all_real=True,
                    similarity=Geometry(X, scale, sq_norm, True))


def _query_squares(q: np.ndarray) -> list[float]:
    """Each query's squared length, in float64, as Python floats (NaN/inf when the query
    holds one or its length is past float64). One query: BLAS's dot, as its products
    (``_row_dots_with``) take BLAS's matrix-vector product."""
    q64 = q.astype(np.float64, copy=False)
    if q.shape[0] == 1:
        return [float(q64[0].dot(q64[0]))]
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
) -> tuple[np.ndarray, list[float], np.ndarray]:
    """(X, each query's squared length, squared row lengths), refusing NaN/inf, zero
    vectors and lengths out of float range; NaN/inf padding rows are zeroed in a private
    copy of X."""
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
    return X, q_sq_list, sq


def _unit_scale(
    q: np.ndarray, q_squares: list[float], sq: np.ndarray, valid: np.ndarray, all_real: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cosine geometry without a normalised copy of X: the unit query (``q_squares`` its
    squared lengths), its length 1, each row's scale 1/|x| (0 at padding) and the working
    rows' squared length."""
    B, n = sq.shape
    if all_real:  # every length is known to be > 0
        scale = 1.0 / np.sqrt(sq)
        sq_norm = _constant((B, n), 1.0)
    else:
        scale = np.where(valid, 1.0 / np.sqrt(np.where(sq > 0, sq, 1.0)), 0.0)
        sq_norm = valid.astype(np.float64)
    inverse = [1.0 / math.sqrt(square) for square in q_squares]  # rounded to q's dtype
    q = q * np.array(inverse, dtype=q.dtype)[:, None]
    return q, _constant((B,), 1.0), scale, sq_norm


def _query_products(X: np.ndarray, q: np.ndarray, scale: np.ndarray, normalize: bool
                    ) -> np.ndarray:
    """(B, n) float64 working inner products of every candidate with its query."""
    B, n, _ = X.shape
    if not n:
        return np.zeros((B, 0))
    raw = _row_dots_with(X, q)
    return raw * scale if normalize else raw.astype(np.float64)


def _relevance(relevance: Any, shape: tuple[int, int], valid: np.ndarray, batched: bool
               ) -> np.ndarray:
    """The caller's relevance, one score per candidate, as (B, n) float64, 0 at padding,
    checked finite where real. Several signals (one row each) are refused: they are
    fused first, explicitly, by ``vrsd_core.pool_units``."""
    r = as_float_array(relevance, "relevance").astype(np.float64)
    want = shape if batched else shape[1:]
    if r.shape != want:
        rows = (" with one row per signal: fuse the signals first with "
                "vrsd_core.pool_units(signals)") if r.ndim == len(want) + 1 else ""
        raise ValueError(f"relevance: expected shape {want} (one score per candidate), got "
                         f"{r.shape}{rows}")
    r = r.reshape(shape)
    check_finite(r, "relevance", valid)
    return np.where(valid, r, 0.0)


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


def with_word_profiles(prep: Prepared, profiles: Any, *, batched: bool) -> Prepared:
    """``prep`` whose ``similarity`` reads the candidates' profiles too: a second
    description of each candidate, for the methods whose similarity between candidates
    reads it (``MethodInfo.takes_profiles``: the default, ``complement``).

    ``profiles`` is (n, f) in ``select``, (B, n, f) in ``select_batch``: any real
    features, one row per candidate (the adapters pass the profile of each candidate's
    words, ``vrsd_kit.lexical.word_profiles``). The similarity geometry is the vectors
    [x, p / |p|] / sqrt(2) (``prep.candidates`` stays the vectors), whose inner products
    are

        S_ij = (cos(x_i, x_j) + cos(p_i, p_j)) / 2

    (without ``normalize``: the vectors' inner product in place of their cosine; an
    all-zero profile row shares nothing, so its own S_ii is 1/2). Only the similarity
    between candidates reads it: the relevance, and everything the Selection reports but
    ``gains`` (``relevance``, the sum-vector ``objective``), stays on the vectors.
    ``params`` shows ``profiles`` as ``"given"``."""
    given = as_float_array(profiles, "profiles")
    B, n = prep.batch, prep.n
    want = (B, n) if batched else (n,)
    if given.ndim != len(want) + 1 or given.shape[:-1] != want:
        shape = f"({', '.join(map(str, want))}, f)"
        raise ValueError(f"profiles: expected shape {shape} (one row per candidate), got "
                         f"{given.shape}")
    P = given.astype(np.float64).reshape(B, n, given.shape[-1])
    check_finite(P, "profiles", prep.valid)
    lengths = np.sqrt(np.einsum("bnf,bnf->bn", P, P))
    unit_profiles = np.divide(P, lengths[..., None], out=np.zeros_like(P),
                              where=lengths[..., None] > 0)
    dtype, d = prep.X.dtype, prep.X.shape[2]
    half = 1.0 / math.sqrt(2.0)
    joined = np.empty((B, n, d + P.shape[2]), dtype)  # written in place: no joined copies
    np.multiply(prep.X, (prep.scale[..., None] * half).astype(dtype) if prep.normalize
                else dtype.type(half), out=joined[..., :d])
    joined[..., d:] = unit_profiles * half  # rounded to the vectors' dtype
    similarity = Geometry(joined, np.ones((B, n)), (prep.sq_norm + (lengths > 0)) / 2.0,
                          normalize=False)
    return dataclasses.replace(prep, similarity=similarity)


# --- Relevance in the pool's units --------------------------------------------------

def pool_units(signals: Any) -> NDArray[np.float64]:
    """(s, n) signals, one row each, as (n,) relevance in pool units; (B, s, n) as (B, n),
    each pool standardised on its own. NaN is allowed only where a whole column is NaN
    (a batch's padding), which stays NaN.

    ``pool_units(signals)`` takes one row per signal (e.g. each candidate's cosine to the
    query and its BM25 score in the pool) and returns one score per candidate::

        pool_units_i = z( sum_s z(signal_s)_i ),   z(x) = (x - mean(x)) / std(x) over the pool

    Each signal counts one standard deviation of its own spread in this pool, so no signal
    needs a weight; the sum is standardised again, so that one unit is one standard
    deviation of relevance whatever the number of signals or how much they agree. A signal
    that does not vary over the pool contributes 0. Pass the result as ``select(...,
    relevance=...)``: ``select`` takes one score per candidate, and refuses several rows.

    >>> import numpy as np
    >>> fused = pool_units([[0.9, 0.5, 0.1], [0.0, 3.0, 0.0]])
    >>> fused.shape, bool(abs(fused.mean()) < 1e-12)
    ((3,), True)

    Raises:
        ValueError: naming ``signals`` for another shape or a non-finite value.
    """
    r = as_float_array(signals, "signals").astype(np.float64)
    if r.ndim not in (2, 3) or r.shape[-2] < 1:
        raise ValueError(f"signals: expected shape (s, n) or (B, s, n), one row per signal, "
                         f"got {r.shape}")
    batched = r.ndim == 3
    pools = r if batched else r[None]
    # (B, n): False for a candidate no signal describes (a batch's padding)
    valid = np.asarray(~np.isnan(pools).all(axis=1))
    check_finite(pools, "signals", np.broadcast_to(valid[:, None, :], pools.shape))
    mask = None if valid.all() else valid
    fused = np.zeros(valid.shape)
    for signal in range(pools.shape[1]):
        fused = fused + standardised(np.where(valid, pools[:, signal], 0.0), mask)
    out = standardised(fused, mask)
    out = np.where(valid, out, np.nan)
    return out if batched else out[0]


def standardised(x: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """z-scores of ``x`` (B, n) within each row's real candidates: (x - mean) / std over
    the row, 0 at padding and everywhere in a row whose values do not vary (std at most
    1e-12 of max(1, |mean|)); ``valid`` None: every candidate is real. Values whose sum
    or spread passes the float range are read in units of the row's largest one (a
    z-score does not change with the scale)."""
    with np.errstate(over="ignore", invalid="ignore"):
        z = _z_scores(x, valid)
    if z is None:
        real = x if valid is None else np.where(valid, x, 0.0)
        largest = np.abs(real).max(axis=-1, keepdims=True)
        z = _z_scores(x / np.where(largest > 0, largest, 1.0), valid)
    return z  # type: ignore[return-value]


def _z_scores(x: np.ndarray, valid: np.ndarray | None) -> np.ndarray | None:
    """``standardised``'s z-scores, None when a row's sum or spread is past float range."""
    if valid is None and (x.ndim == 1 or x.shape[0] == 1):  # one row: Python floats
        count1 = max(x.shape[-1], 1)
        mean1 = float(x.sum()) / count1
        deviation = x - mean1
        spread1 = math.sqrt(row_dots(deviation).item() / count1)
        if not math.isfinite(spread1):
            return None
        if spread1 > 1e-12 * max(1.0, abs(mean1)):
            return deviation / spread1  # type: ignore[no-any-return]
        return np.zeros_like(x)
    if valid is None:
        count: Any = max(x.shape[-1], 1)
        mean = x.sum(axis=-1, keepdims=True) / count
        deviation = x - mean
    else:
        count = np.maximum(valid.sum(axis=-1, keepdims=True), 1)
        mean = np.where(valid, x, 0.0).sum(axis=-1, keepdims=True) / count
        deviation = np.where(valid, x - mean, 0.0)
    spread = np.sqrt(row_dots(deviation)[..., None] / count)
    if not np.isfinite(spread).all():  # an infinite mean makes the deviations infinite too
        return None
    varies = spread > 1e-12 * np.maximum(1.0, np.abs(mean))
    if varies.all():
        return deviation / spread  # type: ignore[no-any-return]
    return np.where(varies, deviation / np.where(varies, spread, 1.0), 0.0)


# --- Links between candidates (the data and its check) -------------------------------

ROUNDING = 1e-6  # a cosine this far outside [0, 1] is rounding, not an error


@dataclass(frozen=True)
class Links:
    """One pool's links between its candidates (``select``: arrays (n, n) and a number;
    ``select_batch``: (B, n, n) and (B,)), the default's ``links`` option.

    Attributes:
        cosine: [i, j] how alike candidates i's and j's words outside the question are,
            in [0, 1] (``vrsd_kit.lexical``: the cosine of their tf * idf over those
            words); the diagonal is not read.
        beyond_chance: [i, j] True when the words i and j share are more than chance
            (only such pairs may lift a candidate).
        spread: the standard deviation of the relevance signals' sum before it was put
            in pool units (``vrsd_core.pool_units``' last divisor; 1 for one signal):
            a lift counts as much as one signal's standard deviation.
    """

    cosine: Any
    beyond_chance: Any
    spread: Any = 1.0


@dataclass(frozen=True, slots=True)
class LinkArrays:
    """``Links`` checked, as (B, n, n) float64, (B, n, n) bool and (B,) float64."""

    cosine: np.ndarray
    beyond_chance: np.ndarray
    spread: np.ndarray

    def rows(self, cut: slice) -> LinkArrays:
        return LinkArrays(self.cosine[cut], self.beyond_chance[cut], self.spread[cut])


def checked_links(links: Any, batch: int, n: int, valid: np.ndarray, *, batched: bool
                  ) -> LinkArrays:
    """``links`` (a ``Links``) as ``LinkArrays`` for B = ``batch`` queries of n candidates,
    or a ValueError naming ``links``. Nothing given is written."""
    if not isinstance(links, Links):
        raise ValueError(f"links: expected vrsd_core.Links(cosine, beyond_chance, spread), "
                         f"got {type(links).__name__}")
    pair_shape = (batch, n, n) if batched else (n, n)
    cosine = as_float_array(links.cosine, "links.cosine").astype(np.float64)
    if cosine.shape != pair_shape:
        raise ValueError(f"links.cosine: expected shape {pair_shape} (one value per pair of "
                         f"candidates), got {cosine.shape}")
    cosine = cosine.reshape(batch, n, n)
    pairs = valid[:, :, None] & valid[:, None, :]
    check_finite(cosine, "links.cosine", pairs)
    if ((cosine < -ROUNDING) | (cosine > 1.0 + ROUNDING))[pairs].any():
        raise ValueError("links.cosine: expected values in [0, 1]")
    cosine = np.clip(cosine, 0.0, 1.0)  # a cosine of 1 + rounding is 1
    gate = np.asarray(links.beyond_chance)
    if gate.dtype != np.bool_ or gate.shape != pair_shape:
        raise ValueError(f"links.beyond_chance: expected booleans of shape {pair_shape}, got "
                         f"{gate.dtype} of shape {gate.shape}")
    spread = as_float_array(links.spread, "links.spread").astype(np.float64)
    if spread.shape != ((batch,) if batched else ()):
        raise ValueError(f"links.spread: expected {'shape (B,)' if batched else 'a number'}, "
                         f"got shape {spread.shape}")
    spread = spread.reshape(batch)
    check_finite(spread, "links.spread")
    if (spread < 0).any():
        raise ValueError("links.spread: expected a standard deviation (>= 0)")
    return LinkArrays(cosine, gate.reshape(batch, n, n), spread)


def checked_closes(closes: Any, batch: int, n: int, *, batched: bool) -> np.ndarray:
    """``closes`` (the default's copies: [c, p] True closes c once p is picked) as (B, n, n)
    booleans, or a ValueError naming ``closes``. Nothing given is written."""
    shape = (batch, n, n) if batched else (n, n)
    given = np.asarray(closes)
    if given.dtype != np.bool_ or given.shape != shape:
        raise ValueError(f"closes: expected booleans of shape {shape} (one per pair of "
                         f"candidates), got {given.dtype} of shape {given.shape}")
    return given.reshape(batch, n, n)
