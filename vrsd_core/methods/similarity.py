"""``similarity``: plain top-k by relevance (the baseline every store returns)."""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared, argmax_first
from ._common import Picked, pick_counts, split_rows, start_constraints, step_active, taken_counts


def similarity(prep: Prepared, k: int) -> list[Picked]:
    """Top-k by relevance; ties (within the core's tie tolerance) keep the store's order.

    One ``argmax_first`` per pick, under the cap and the budget if any: a plain sort
    would treat scores equal up to rounding (the same cosine summed in another order)
    as distinct and break such ties toward whichever came out larger.
    """
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    rows = np.arange(prep.batch)
    cons = start_constraints(prep)
    scores = np.where(prep.valid if cons is None else cons.open, prep.rel, -np.inf)
    picks = np.zeros((prep.batch, K), dtype=np.int64)
    for t in range(K):
        pick = argmax_first(scores, prep.tie_rtol)
        picks[:, t] = pick
        scores[rows, pick] = -np.inf
        if cons is not None and (blocked := cons.add(pick, step_active(t, counts, cons))) \
                is not None:
            scores[blocked] = -np.inf  # a full group's, or too long for the tokens left
    gains = np.take_along_axis(prep.rel, picks, axis=1)
    return split_rows(picks, gains, taken_counts(counts, cons))
