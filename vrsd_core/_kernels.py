"""Small numeric kernels the methods share: tie-aware argmax and guarded cosines.

Ties: scores within a relative ``TIE_RTOL`` of the best count as equal, and the
lowest candidate index (the store's own rank) wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Scores within this relative distance of the best count as a tie, and ties go
# to the lower candidate index (the store's own rank). Scores and every running
# quantity of the greedy methods (s.q, |s|^2, s.c_j, MMR's running maximum,
# DPP's Cholesky rows) are float64 whatever the input; only the per-pick
# matrix-vector products of float32 input are computed in float32 (BLAS), then
# widened. The tolerance follows the *input* dtype (``Prepared.tie_rtol``):
# - float64: 1e-10, far above the products' rounding (~1e-16 * sqrt(d)).
# - float32: 1e-6. It cannot drop to 1e-10: two identical float32 rows get
#   products that differ in the last bits (BLAS sums rows in different
#   blockings), measured up to 6e-8 at d = 384..768 and 3.6e-7 at d = 4096 for
#   unit vectors, and the store's rank must still decide between such twins.
#   1e-6 keeps a 3x margin over that at d = 4096, and float32 picks equal a
#   float64 run on the same values unless two gains are within 1e-6 relative.
TIE_RTOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-10}

# A sum vector shorter than this (squared) has no direction: its cosine is 0.
TINY = 1e-12


DEFAULT_RTOL = TIE_RTOL[np.dtype(np.float64)]

# The lowest finite float64: a tie threshold never goes below it, so a score of -inf
# (a candidate already picked or closed) never ties a best score near -1.8e308, whose
# threshold would overflow to -inf.
LOWEST = float(np.finfo(np.float64).min)


def tie_threshold(best: float, rtol: float) -> float:
    """The lowest score that ties ``best``: best - rtol * max(1, |best|), kept finite."""
    return max(best - rtol * max(1.0, abs(best)), LOWEST)


def argmax_first(scores: np.ndarray, rtol: float = DEFAULT_RTOL) -> np.ndarray:
    """Per row, the lowest index whose score ties the row's best (within ``rtol``)."""
    best = scores.max(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        thr = np.maximum(best - rtol * np.maximum(1.0, np.abs(best)), LOWEST)
    return np.argmax(scores >= thr, axis=-1)


def argmax_first_rows(
    scores: np.ndarray, rtol: float = DEFAULT_RTOL
) -> tuple[np.ndarray, np.ndarray]:
    """``argmax_first`` per row of a float64 (B, n) table that may hold NaN,
    and each row's tie threshold (best - tolerance; NaN for a row with a NaN).

    A row with a NaN returns its first NaN (np.argmax's rule), so the caller can
    see that the row's scores are broken rather than get an arbitrary index.
    """
    p = scores.argmax(axis=1)
    best = scores[np.arange(scores.shape[0]), p]
    with np.errstate(over="ignore"):
        thr = np.maximum(best - rtol * np.maximum(1.0, np.abs(best)), LOWEST)
    first = np.argmax(scores >= thr[:, None], axis=1)
    return np.where(np.isnan(best), p, first), thr


def argmax_first_1d(scores: np.ndarray, rtol: float = DEFAULT_RTOL) -> int:
    """``argmax_first`` for one float64 row, in three numpy calls (the per-pick hot path).

    np.argmax already returns the first exact maximum, so only indices before
    it can hold a tie within the tolerance.
    """
    return first_tie(scores, int(scores.argmax()), rtol)


def first_tie(scores: np.ndarray, p: int, rtol: float = DEFAULT_RTOL) -> int:
    """The lowest index whose score ties ``scores[p]``, p being the first exact maximum."""
    if p:
        thr = tie_threshold(float(scores[p]), rtol)
        if scores[int(scores[:p].argmax())] >= thr:  # rare: some earlier score ties
            return int((scores[:p] >= thr).argmax())
    return p


def cosine_from_parts(num: Any, den2: Any, q_norm: Any = 1.0) -> np.ndarray:
    """cos = num / (|q| sqrt(den2)); a sum vector of (near) zero length scores 0."""
    ok = den2 > TINY
    return np.where(ok, num / (np.sqrt(np.where(ok, den2, 1.0)) * q_norm), 0.0)
