"""``dpp``: greedy MAP inference for a k-DPP (Chen, Zhang & Zhou, NeurIPS 2018).

Kernel L = diag(w) S diag(w), S the candidates' cosine (inner-product) matrix
and w_i = exp(alpha * rel_i) with alpha = theta / (2 (1 - theta)), so that
log det L_Y = theta/(1-theta) * sum_{i in Y} rel_i + log det S_Y: ``theta``
trades relevance (1) against diversity (0). Each step adds the item with the
largest marginal gain d_j^2 = det(L_{Y+j}) / det(L_Y), kept by an incremental
Cholesky update: one matrix-vector product per pick.

When every remaining gain is numerically zero (k exceeds the kernel's rank,
e.g. k > d, or only duplicates remain), the remaining picks are filled by
relevance, with gain 0, and ``info["filled_by_relevance"]`` counts them.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared, argmax_first, check_unit
from ._common import Picked, pick_counts, split_rows

# A marginal gain below this fraction of the largest diagonal is numerical zero.
_RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = check_unit(theta, "theta", closed_right=False)
    alpha = th / (2.0 * (1.0 - th))
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    # Shift by each row's best relevance: scales det L by a constant, so the
    # argmax is unchanged, and exp cannot overflow.
    top = np.where(prep.valid, prep.rel, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.where(prep.valid, np.exp(alpha * (prep.rel - top)), 0.0)
    d2 = w * w * prep.sq_norm
    floor = _RANK_EPS[prep.X.dtype] * d2.max(axis=1, initial=0.0)
    factors = np.zeros((B, K, n))
    avail = prep.valid.copy()
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    by_rel = np.where(prep.valid, prep.rel, -np.inf)
    for t in range(K):
        best_gain = np.where(avail, d2, -np.inf).max(axis=1, initial=-np.inf)
        exhausted |= best_gain <= floor
        score = np.where(exhausted[:, None], by_rel, d2)
        score[~avail] = -np.inf
        p = argmax_first(score)
        active = t < counts
        picks[:, t] = p
        gains[:, t] = np.where(exhausted, 0.0, d2[rows, p])
        filled += exhausted & active
        avail[rows, p] = False
        if t < K - 1 and not exhausted.all():
            d_p = np.sqrt(np.maximum(d2[rows, p], floor))
            d_p[d_p == 0] = 1.0  # a query without real candidates: nothing to divide
            kernel_row = w * w[rows, p][:, None] * prep.sims_to(p)
            proj = np.einsum("bt,btn->bn", factors[rows, :t, p], factors[:, :t, :])
            e = (kernel_row - proj) / d_p[:, None]
            factors[:, t, :] = e
            d2 = d2 - e * e
    result = split_rows(picks, gains, counts)
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
    return result
