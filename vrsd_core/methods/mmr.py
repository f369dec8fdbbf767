"""``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein 1998).

score_j = lambda_mult * rel_j - (1 - lambda_mult) * max_{s in S} sim(c_j, c_s)

LangChain's meaning of ``lambda_mult``: 1 is relevance only, 0 is diversity
only. The penalty is the maximum similarity to *all* selected items (kept as
a running maximum, one matrix-vector product per pick), not only to the last
pick. The first pick is the most relevant candidate.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_unit
from .._kernels import argmax_first, argmax_first_1d
from .._prepare import Prepared
from ._common import (
    Picked,
    pick_counts,
    single_count,
    split_rows,
    start_constraints,
    step_active,
    taken_counts,
)


def mmr(prep: Prepared, k: int, *, lambda_mult: float = 0.5) -> list[Picked]:
    """MMR; ``gains`` are the MMR scores at pick time (lambda_mult * rel for the first)."""
    lam = check_unit(lambda_mult, "lambda_mult")
    if prep.single:
        return [_mmr_single(prep, single_count(prep, k), lam)]
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    cons = start_constraints(prep)
    avail = prep.valid.copy() if cons is None else cons.open.copy()
    max_sim = np.zeros((B, n))
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        score = prep.rel.copy() if t == 0 else lam * prep.rel - (1.0 - lam) * max_sim
        score[~avail] = -np.inf
        p = argmax_first(score, prep.tie_rtol)
        picks[:, t] = p
        gains[:, t] = lam * prep.rel[rows, p] if t == 0 else score[rows, p]
        avail[rows, p] = False
        if cons is not None and (blocked := cons.add(p, step_active(t, counts, cons))) is not None:
            avail[blocked] = False  # a full group's, or too long for the tokens left
        if t < K - 1:
            sims = prep.sims_to(p)
            max_sim = sims if t == 0 else np.maximum(max_sim, sims)
    return split_rows(picks, gains, taken_counts(counts, cons))


def _mmr_single(prep: Prepared, K: int, lam: float) -> Picked:
    """MMR for one query with every candidate real, on 1-D arrays.

    Keeps ``(1 - lambda) * max_sim`` directly (a positive factor commutes with
    the maximum), folds it into the per-row scale, masks picks through
    ``lambda * rel = -inf``, and writes into preallocated buffers.
    """
    n = prep.n
    rtol = prep.tie_rtol
    rel = prep.rel[0]
    lam_rel = lam * rel  # -inf once picked
    penalty_scale = (1.0 - lam) * (prep.scale[0] if prep.normalize else np.ones(n))
    penalty = np.zeros(n)  # (1 - lambda) * max similarity to the picks so far
    sims, score = np.empty(n), np.empty(n)
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    cap = start_constraints(prep)  # a group cap only: a budget takes the batched path
    for t in range(K):
        if t == 0:
            p = argmax_first_1d(rel, rtol)
            gain = lam * float(rel[p])
        else:
            np.subtract(lam_rel, penalty, out=score)
            p = argmax_first_1d(score, rtol)
            gain = float(score[p])
        picks[t], gains[t] = p, gain
        lam_rel[p] = -np.inf
        if cap is not None and (blocked := cap.add_one(0, p)) is not None:
            lam_rel[blocked] = -np.inf  # a full group's candidates are out
        if t < K - 1:
            prep.products_into(p, 1.0, sims, penalty_scale)
            if t == 0:
                penalty[:] = sims
            else:
                np.maximum(penalty, sims, out=penalty)
    return Picked(picks, gains)
