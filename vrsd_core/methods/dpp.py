"""``dpp``: greedy MAP inference for a k-DPP (Chen, Zhang & Zhou, NeurIPS 2018).

Kernel L = diag(w) S diag(w), S the candidates' cosine (inner-product) matrix
and w_i = exp(alpha * rel_i) with alpha = theta / (2 (1 - theta)), so that
log det L_Y = theta/(1-theta) * sum_{i in Y} rel_i + log det S_Y: ``theta``
trades relevance (1) against diversity (0). Each step adds the item with the
largest marginal gain d_j^2 = det(L_{Y+j}) / det(L_Y), kept by an incremental
Cholesky update: one matrix-vector product per pick (the loop ``complement``
shares: ``_greedy_map``).

When every remaining gain is numerically zero (k exceeds the kernel's rank,
e.g. k > d, or only duplicates remain), the remaining picks are filled by
relevance, with gain 0, and ``info["filled_by_relevance"]`` counts them.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_unit
from .._prepare import Prepared
from ._common import Picked
from ._greedy_map import greedy_map


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = check_unit(theta, "theta", closed_right=False)
    alpha = th / (2.0 * (1.0 - th))
    # Shift by each row's best relevance: scales det L by a constant, so the
    # argmax is unchanged, and exp cannot overflow.
    if prep.all_real:
        top = prep.rel.max(axis=1, initial=-np.inf, keepdims=True)
        return greedy_map(prep)(prep, k, np.exp(alpha * (prep.rel - top)))[0]
    top = np.where(prep.valid, prep.rel, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.where(prep.valid, np.exp(alpha * (prep.rel - top)), 0.0)
    return greedy_map(prep)(prep, k, w)[0]
