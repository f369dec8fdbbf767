"""``similarity``: plain top-k by relevance (the baseline every store returns)."""

from __future__ import annotations

import itertools

import numpy as np

from .._prepare import Prepared
from ._common import Picked, Room, first_best, per_query, pick_counts


def similarity(prep: Prepared, k: int) -> list[Picked]:
    """Top-k by relevance: a stable sort. Where two of the top k + 1 scores are within
    the tie margin (the same cosine summed in another order differs in its last bits),
    or under a cap or a budget, the picks are taken one by one by the tie rule
    (``first_best``), so that ties keep the store's order."""
    counts = pick_counts(prep, k)

    def run(one: Prepared, b: int) -> Picked:
        count = int(counts[b])
        scores = one.rel[0] if one.all_real else np.where(one.valid[0], one.rel[0], -np.inf)
        order = np.argsort(-scores, kind="stable")[: count + 1]
        top = scores[order]
        if one.constrained or _neighbours_tie(top, one.tie_rtol):
            return _one_by_one(one, scores, count)
        return Picked(order[:count], top[:count])

    return per_query(prep, run)


def _neighbours_tie(top: np.ndarray, rtol: float) -> bool:
    """Whether a score of ``top`` (sorted, best first, finite but maybe the last) is within
    the tie margin (``_prepare.tie_margin``) of the one after it; scores past 1e300 in
    size (whose margin would overflow) count as tied."""
    values = top.tolist()  # a few Python floats: the same float64 arithmetic, no array calls
    if len(values) < 2:
        return False
    if not (values[0] < 1e300 and values[-2] > -1e300):
        return True
    return any(after >= score - rtol * max(1.0, abs(score))
               for score, after in itertools.pairwise(values))


def _one_by_one(one: Prepared, scores: np.ndarray, count: int) -> Picked:
    """Top ``count`` by ``scores``, picked one at a time by the tie rule, among the
    candidates the cap and the budget leave open."""
    room = Room(one)
    left = np.where(room.open, scores, -np.inf)
    picks: list[int] = []
    while len(picks) < count and room.open.any():
        pick = first_best(left, one.tie_rtol)
        picks.append(pick)
        left[pick] = -np.inf
        if (closed := room.take(pick)) is not None:
            left[closed] = -np.inf
    indices = np.array(picks, dtype=np.int64)
    return Picked(indices, scores[indices])
