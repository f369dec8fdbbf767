"""Input checks shared by ``prepare``, the quality prior and the method options.

Each raises ``ValueError`` naming the argument; none of them writes its input.
"""

from __future__ import annotations

import difflib
import math
import numbers
import sys
from collections.abc import Iterable
from typing import Any, Literal, overload

import numpy as np

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
