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

from .._checks import check_unit
from .._kernels import argmax_first, argmax_first_1d, first_tie
from .._prepare import Prepared
from ._common import (
    Picked,
    cholesky_step,
    pick_counts,
    single_count,
    split_rows,
    start_constraints,
    step_active,
    taken_counts,
)

# A marginal gain below this fraction of the largest diagonal is numerical zero.
_RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = check_unit(theta, "theta", closed_right=False)
    alpha = th / (2.0 * (1.0 - th))
    if prep.single:
        return [_dpp_single(prep, single_count(prep, k), alpha)]
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
    cons = start_constraints(prep)
    avail = prep.valid.copy() if cons is None else cons.open.copy()
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
        p = argmax_first(score, prep.tie_rtol)
        active = step_active(t, counts, cons)
        picks[:, t] = p
        gains[:, t] = np.where(exhausted, 0.0, d2[rows, p])
        filled += exhausted & active
        avail[rows, p] = False
        if cons is not None and (blocked := cons.add(p, active)) is not None:
            avail[blocked] = False  # a full group's, or too long for the tokens left
        if t < K - 1 and not exhausted.all():
            kernel_row = w * w[rows, p][:, None] * prep.sims_to(p)
            d2 = cholesky_step(factors, d2, t, p, kernel_row, floor)
    result = split_rows(picks, gains, taken_counts(counts, cons))
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
    return result


def _dpp_single(prep: Prepared, K: int, alpha: float) -> Picked:
    """The same greedy for one query with every candidate real, on 1-D arrays.

    The kernel row of pick p is ``(w * scale) * (X @ (w_p scale_p x_p))``: the
    pick's weight and scale ride in its d-vector. Picked items get d^2 = -inf
    (and relevance -inf for the fill), so no mask is applied.
    """
    n = prep.n
    if K == 0:
        return Picked(np.zeros(0, dtype=np.int64), np.zeros(0), {"filled_by_relevance": 0})
    rel = prep.rel[0]
    w = np.exp(alpha * (rel - rel.max()))
    row_scale = w * prep.scale[0] if prep.normalize else w
    d2 = w * w * prep.sq_norm[0]
    floor = _RANK_EPS[prep.X.dtype] * float(d2.max(initial=0.0))
    by_rel = rel.copy()
    factors = np.zeros((K, n))
    tmp = np.empty(n)
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    filled = 0
    exhausted = False
    cap = start_constraints(prep)  # a group cap only: a budget takes the batched path
    for t in range(K):
        if not exhausted:
            top = int(d2.argmax())
            exhausted = float(d2[top]) <= floor
        if exhausted:
            p = argmax_first_1d(by_rel, prep.tie_rtol)
            filled += 1
        else:
            p = first_tie(d2, top, prep.tie_rtol)
            gains[t] = d2[p]
        picks[t] = p
        by_rel[p] = -np.inf
        if t < K - 1 and not exhausted:
            d_p = np.sqrt(max(float(d2[p]), floor))
            e = factors[t]
            prep.products_into(p, float(w[p]), e, row_scale)
            if t:
                e -= factors[:t, p] @ factors[:t]
            e /= d_p
            np.multiply(e, e, out=tmp)
            d2 -= tmp
        d2[p] = -np.inf
        if cap is not None and (blocked := cap.add_one(0, p)) is not None:
            d2[blocked] = by_rel[blocked] = -np.inf  # a full group's candidates are out
    return Picked(picks, gains, {"filled_by_relevance": filled})
