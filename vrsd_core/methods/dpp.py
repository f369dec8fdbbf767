"""``dpp``: greedy MAP of a k-DPP whose weights read the relevance *as given*, with a
trade-off ``theta`` (Chen, Zhang & Zhou, NeurIPS 2018, their formulation).

How it differs from the default, ``complement`` (the same determinantal loop,
``_determinantal``): ``complement`` weighs each candidate by its relevance in the pool's
units (standardised over the pool), so the balance of relevance against diversity is
the same whatever the embedding model's cosine range or the scale of an outside
relevance; ``dpp`` weighs the raw relevance (a cosine, unless ``relevance=`` is given),
so the same ``theta`` means a different balance on another model. Use it to reproduce
Chen et al.'s k-DPP or to tune ``theta`` on one model and one relevance scale; use
``complement`` otherwise.

Kernel L = diag(w) S diag(w), S the candidates' cosine (inner-product) matrix
and w_i = exp(alpha * rel_i) with alpha = theta / (2 (1 - theta)), so that
log det L_Y = theta/(1-theta) * sum_{i in Y} rel_i + log det S_Y: ``theta``
trades relevance (1) against diversity (0). Each step adds the item with the
largest marginal gain d_j^2 = det(L_{Y+j}) / det(L_Y), kept by an incremental
Cholesky update: one matrix-vector product per pick (the loop ``complement``
shares: ``_determinantal``).

When every remaining gain is numerically zero (k exceeds the kernel's rank,
e.g. k > d, or only duplicates remain), the remaining picks are filled by
relevance, with gain 0, and ``info["filled_by_relevance"]`` counts them.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared
from ..options import OptionSpec
from ._common import Picked
from ._determinantal import greedy_map

THETA = OptionSpec("theta", "unit", 0.5, "relevance (near 1) against diversity (0), on the "
                   "relevance's own scale", high_open=True)
OPTIONS = (THETA,)


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = THETA.check(theta)
    alpha = th / (2.0 * (1.0 - th))
    # Shift by each row's best relevance: scales det L by a constant, so the
    # argmax is unchanged, and exp cannot overflow.
    best = np.where(prep.valid, prep.rel, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
    best = np.where(np.isfinite(best), best, 0.0)
    quality = np.where(prep.valid, np.exp(alpha * (prep.rel - best)), 0.0)
    return greedy_map(prep, k, quality)[0]
