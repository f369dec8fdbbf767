"""``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein 1998).

score_j = lambda_mult * rel_j - (1 - lambda_mult) * max_{s in S} sim(c_j, c_s)

LangChain's meaning of ``lambda_mult``: 1 is relevance only, 0 is diversity
only. The penalty is the maximum similarity to *all* selected items (kept as
a running maximum, one matrix-vector product per pick), not only to the last
pick. The first pick is the most relevant candidate.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared, argmax_first
from ..options import OptionSpec
from ._common import Picked, pick_counts, split_rows, start_constraints, step_active, taken_counts

LAMBDA_MULT = OptionSpec("lambda_mult", "unit", 0.5,
                         "1 = relevance only, 0 = diversity only (LangChain's meaning)")
OPTIONS = (LAMBDA_MULT,)


def mmr(prep: Prepared, k: int, *, lambda_mult: float = 0.5) -> list[Picked]:
    """MMR; ``gains`` are the MMR scores at pick time (lambda_mult * rel for the first)."""
    lam = LAMBDA_MULT.check(lambda_mult)
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    cons = start_constraints(prep)
    open_ = prep.valid.copy() if cons is None else cons.open.copy()
    max_similarity = np.zeros((B, n))  # to the picks so far
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        if t == 0:
            score = prep.rel.copy()
        else:
            score = lam * prep.rel - (1.0 - lam) * max_similarity
        score[~open_] = -np.inf
        pick = argmax_first(score, prep.tie_rtol)
        picks[:, t] = pick
        gains[:, t] = lam * prep.rel[rows, pick] if t == 0 else score[rows, pick]
        open_[rows, pick] = False
        active = step_active(t, counts, cons)
        if cons is not None and (blocked := cons.add(pick, active)) is not None:
            open_[blocked] = False  # a full group's, or too long for the tokens left
        if t < K - 1:
            similarity = prep.similarity.to(pick)
            max_similarity = similarity if t == 0 else np.maximum(max_similarity, similarity)
    return split_rows(picks, gains, taken_counts(counts, cons))
