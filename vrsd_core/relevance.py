"""Relevance in the pool's units: several relevance signals fused without a weight.

``pool_units(signals)`` takes one row per signal (e.g. each candidate's cosine to the
query and its BM25 score in the pool) and returns one score per candidate::

    pool_units_i = z( sum_s z(signal_s)_i ),   z(x) = (x - mean(x)) / std(x) over the pool

Each signal counts one standard deviation of its own spread in this pool, so no signal
needs a weight; the sum is standardised again, so that one unit is one standard
deviation of relevance whatever the number of signals or how much they agree. A signal
that does not vary over the pool contributes 0. Pass the result as ``select(...,
relevance=...)``.

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
from ._prepare import standardised


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
    padding = np.isnan(pools).all(axis=1)  # (B, n): a candidate no signal describes
    valid = ~padding
    check_finite(pools, "signals", np.broadcast_to(valid[:, None, :], pools.shape))
    mask = None if valid.all() else valid
    fused = sum(standardised(np.where(valid, pools[:, s], 0.0), mask)
                for s in range(pools.shape[1]))
    out = standardised(np.asarray(fused, dtype=np.float64), mask)
    out = np.where(valid, out, np.nan)
    return out if batched else out[0]
