"""Relevance in the pool's units: several relevance signals fused without a weight.

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
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._checks import as_float_array, check_finite
from ._prepare import row_dots


def pool_units(signals: Any) -> NDArray[np.float64]:
    """(s, n) signals, one row each, as (n,) relevance in pool units; (B, s, n) as (B, n),
    each pool standardised on its own. NaN is allowed only where a whole column is NaN
    (a batch's padding), which stays NaN.

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
    1e-12 of max(1, |mean|)); ``valid`` None: every candidate is real."""
    if valid is None:
        count: Any = max(x.shape[-1], 1)
        mean = x.sum(axis=-1, keepdims=True) / count
        deviation = x - mean
    else:
        count = np.maximum(valid.sum(axis=-1, keepdims=True), 1)
        mean = np.where(valid, x, 0.0).sum(axis=-1, keepdims=True) / count
        deviation = np.where(valid, x - mean, 0.0)
    spread = np.sqrt(row_dots(deviation)[..., None] / count)
    varies = spread > 1e-12 * np.maximum(1.0, np.abs(mean))
    return np.where(varies, deviation / np.where(varies, spread, 1.0), 0.0)
