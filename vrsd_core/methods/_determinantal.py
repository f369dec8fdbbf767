"""Greedy MAP of a determinantal kernel: the loop ``complement`` and ``dpp`` share.

The kernel is L = diag(w) S diag(w): S the similarity between candidates
(``Prepared.similarity``: their cosines, or with profiles the mean of the vectors' and
the profiles' cosines) and w the quality weights each method chooses. Each step adds
the open candidate j with the largest determinant ratio

    d_j^2 = det(L_{Y+j}) / det(L_Y) = L_jj - |c_j|^2,

c_j the candidate's row of the incremental Cholesky factor of L_Y (Chen, Zhang & Zhou,
NeurIPS 2018). Adding pick p writes one factor row,

    e_j = (L_jp - <c_j, c_p>) / d_p,    d_j^2 <- d_j^2 - e_j^2,

so a pick costs one matrix-vector product (L's row p) and O(k n) arithmetic. When every
ratio left is numerically zero (below ``RANK_EPS`` of the largest quality: k above the
kernel's rank, or only copies left), the rest is filled by relevance, with gain 0,
counted in ``info["filled_by_relevance"]``. Ties go to the lower index.
"""

from __future__ import annotations

import numpy as np

from .._kernels import argmax_first
from .._prepare import Prepared
from ._common import Picked, pick_counts, split_rows, start_constraints, step_active, taken_counts

# A determinant ratio below this fraction of the largest quality is numerical zero.
RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def greedy_map(prep: Prepared, k: int, quality: np.ndarray) -> tuple[list[Picked], np.ndarray]:
    """The greedy picks for quality weights ``quality`` (B, n; 0 at padding): per query a
    ``Picked`` (gains the determinant ratios, 0 for fills), and the (B, n) candidates
    still open after the run (real, not picked, not closed by a cap or budget).

    A candidate that is closed (padding, picked, or shut out by a cap or budget) has
    residual variance and relevance -inf, so neither score can choose it."""
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    similarity = prep.similarity
    # d_j^2 before any pick: L_jj = w_j^2 S_jj
    residual_variance = quality * quality * similarity.self_similarity
    numerical_zero = RANK_EPS[prep.X.dtype] * residual_variance.max(axis=1, initial=0.0)
    cons = start_constraints(prep)
    open_at_start = prep.valid if cons is None else cons.open
    residual_variance = np.where(open_at_start, residual_variance, -np.inf)
    relevance = np.where(open_at_start, prep.rel, -np.inf)  # what fills rank by
    cholesky_rows = np.zeros((B, K, n))
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        exhausted |= residual_variance.max(axis=1, initial=-np.inf) <= numerical_zero
        score = np.where(exhausted[:, None], relevance, residual_variance)
        pick = argmax_first(score, prep.tie_rtol)
        active = step_active(t, counts, cons)
        pick_variance = residual_variance[rows, pick]
        picks[:, t] = pick
        gains[:, t] = np.where(exhausted, 0.0, pick_variance)
        filled += exhausted & active
        residual_variance[rows, pick] = relevance[rows, pick] = -np.inf
        if cons is not None and (blocked := cons.add(pick, active)) is not None:
            # a full group's, or too long for the tokens left
            residual_variance[blocked] = relevance[blocked] = -np.inf
        if t == K - 1 or exhausted.all():
            continue
        kernel_row = quality * quality[rows, pick][:, None] * similarity.to(pick)  # L[:, p]
        pick_length = np.sqrt(np.maximum(pick_variance, numerical_zero))
        pick_length[pick_length == 0] = 1.0  # a query without real candidates
        shared = np.einsum("bt,btn->bn", cholesky_rows[rows, :t, pick], cholesky_rows[:, :t, :])
        update_component = (kernel_row - shared) / pick_length[:, None]
        cholesky_rows[:, t] = update_component
        residual_variance -= update_component * update_component
    result = split_rows(picks, gains, taken_counts(counts, cons))
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
    return result, relevance > -np.inf
