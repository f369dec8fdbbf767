"""``similarity``: plain top-k by relevance (the baseline every store returns)."""

from __future__ import annotations

import numpy as np

from .._kernels import argmax_first
from .._prepare import Prepared
from ._common import Picked, pick_counts, split_rows, start_constraints, step_active, taken_counts


def similarity(prep: Prepared, k: int) -> list[Picked]:
    """Top-k by relevance; ties (within the core's tie tolerance) keep the store's order.

    The rule is the greedy one, one ``argmax_first`` per pick: a plain sort treats
    scores equal up to rounding (the same cosine summed in another order) as distinct
    and would break such ties toward whichever came out larger. A sort gives the same
    picks when each of the top k is more than the tolerance above the next score, the
    common case, which one argpartition and one sort of k + 1 scores decide.
    """
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    scores = prep.rel if prep.all_real else np.where(prep.valid, prep.rel, -np.inf)
    if not prep.constrained and K:
        picks = _sorted_top(scores, K, prep.tie_rtol, None if prep.all_real else counts)
        if picks is not None:
            gains = np.take_along_axis(prep.rel, picks, axis=1)
            return split_rows(picks, gains, counts)
    B = prep.batch
    rows = np.arange(B)
    scores = np.where(prep.valid, prep.rel, -np.inf)
    picks = np.zeros((B, K), dtype=np.int64)
    cons = start_constraints(prep)
    if cons is not None:
        scores[~cons.open] = -np.inf  # e.g. longer than the whole budget
    for t in range(K):
        p = argmax_first(scores, prep.tie_rtol)
        picks[:, t] = p
        scores[rows, p] = -np.inf
        if cons is not None and (blocked := cons.add(p, step_active(t, counts, cons))) is not None:
            scores[blocked] = -np.inf  # a full group's, or too long for the tokens left
    gains = np.take_along_axis(prep.rel, picks, axis=1)
    return split_rows(picks, gains, taken_counts(counts, cons))


def _sorted_top(
    scores: np.ndarray, K: int, rtol: float, counts: np.ndarray | None
) -> np.ndarray | None:
    """(B, K) the K best of each row by a sort, or None if two of a row's first
    ``counts`` (or its last and the next) are within the tie tolerance, where only the
    greedy rule decides. ``counts`` None: every row has K picks."""
    B, n = scores.shape
    rows = np.arange(B)[:, None]
    top = (np.argpartition(-scores, K, axis=1)[:, : K + 1] if K < n
           else np.broadcast_to(np.arange(n), (B, n)))
    top_scores = scores[rows, top]
    order = np.argsort(-top_scores, axis=1, kind="stable")
    top, best = top[rows, order], top_scores[rows, order]
    lead, after = best[:, : best.shape[1] - 1], best[:, 1:K + 1]
    # argmax_first's test: a score at or above best - rtol * max(1, |best|) ties best
    tied = after >= lead - rtol * np.maximum(1.0, np.abs(lead))
    if counts is not None:  # a padded row's picks end at its count
        tied &= np.arange(after.shape[1]) < counts[:, None]
    return None if tied.any() else top[:, :K]
