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


def first_of_best(scores: np.ndarray, rtol: float = DEFAULT_RTOL
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``scores``, the lowest index whose score ties the row's best (within
    ``rtol``: the store's rank decides between equals), and each row's tie threshold.
    A row holding NaN has a NaN threshold and returns index 0."""
    threshold = tie_threshold(scores.max(axis=-1), rtol)
    return np.argmax(scores >= threshold[..., None], axis=-1), threshold


def argmax_first(scores: np.ndarray, rtol: float = DEFAULT_RTOL) -> np.ndarray:
    """Per row, the lowest index whose score ties the row's best (within ``rtol``)."""
    return first_of_best(scores, rtol)[0]


def cosine_from_parts(num: Any, den2: Any, q_norm: Any = 1.0) -> np.ndarray:
    """cos = num / (|q| sqrt(den2)); a sum vector of (near) zero length scores 0."""
    ok = den2 > TINY
    return np.where(ok, num / (np.sqrt(np.where(ok, den2, 1.0)) * q_norm), 0.0)
