"""``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein 1998).

score_j = lambda_mult * rel_j - (1 - lambda_mult) * max_{s in S} sim(c_j, c_s)

LangChain's meaning of ``lambda_mult``: 1 is relevance only, 0 is diversity
only. The penalty is the maximum similarity to *all* selected items (kept as
a running maximum, one matrix-vector product per pick), not only to the last
pick. The first pick is the most relevant candidate.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared, argmax_first, check_unit
from ._common import Picked, pick_counts, split_rows


def mmr(prep: Prepared, k: int, *, lambda_mult: float = 0.5) -> list[Picked]:
    """MMR; ``gains`` are the MMR scores at pick time (lambda_mult * rel for the first)."""
    lam = check_unit(lambda_mult, "lambda_mult")
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    avail = prep.valid.copy()
    max_sim = np.zeros((B, n))
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        score = prep.rel.copy() if t == 0 else lam * prep.rel - (1.0 - lam) * max_sim
        score[~avail] = -np.inf
        p = argmax_first(score)
        picks[:, t] = p
        gains[:, t] = lam * prep.rel[rows, p] if t == 0 else score[rows, p]
        avail[rows, p] = False
        if t < K - 1:
            sims = prep.sims_to(p)
            max_sim = sims if t == 0 else np.maximum(max_sim, sims)
    return split_rows(picks, gains, counts)
