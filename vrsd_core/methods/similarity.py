"""``similarity``: plain top-k by relevance (the baseline every store returns)."""

from __future__ import annotations

import numpy as np

from .._kernels import argmax_first
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


def similarity(prep: Prepared, k: int) -> list[Picked]:
    """Top-k by relevance; ties (within the core's tie tolerance) keep the store's order.

    The rule is the greedy one, one ``argmax_first`` per pick: a plain sort treats
    scores equal up to rounding (the same cosine summed in another order) as distinct
    and would break such ties toward whichever came out larger. A sort gives the same
    picks when each of a query's top k is more than the tolerance above the next score,
    the common case, which one argpartition and one sort of k + 1 scores decide; a
    query with such a near-tie, a cap or a budget takes the greedy rule.
    """
    if prep.constrained:
        return _greedy(prep, pick_counts(prep, k))
    rtol = prep.tie_rtol
    if prep.single:
        count = single_count(prep, k)
        found = _sorted_top(prep.rel[0], count, rtol)
        return [Picked(*found)] if found is not None else _greedy(prep, np.array([count]))
    scores = prep.rel if prep.all_real else np.where(prep.valid, prep.rel, -np.inf)
    out = []
    for b, count in enumerate(pick_counts(prep, k).tolist()):
        found = _sorted_top(scores[b], count, rtol)
        out.append(Picked(*found) if found is not None
                   else _greedy(prep.rows(b, b + 1), np.array([count]))[0])
    return out


# Up to this many scores one stable sort of all of them is faster than argpartition
# followed by a sort of the K + 1 best (measured with numpy 2.4: 3.2 against 5.0 µs at
# n = 50, level near n = 500).
FULL_SORT_BELOW = 512


def _sorted_top(scores: np.ndarray, K: int, rtol: float
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """The K best of one query's scores by a sort, in order, and their scores (float64);
    or None if two of them (or the K-th and the next) are within the tie tolerance."""
    # A sort's order among equal scores does not matter: a tie among the K + 1 best
    # sends the query to the greedy rule, and otherwise their order is unique.
    n = len(scores)
    if n < FULL_SORT_BELOW or K + 1 >= n:
        top = scores.argsort()[: n - K - 2 if n > K + 1 else None: -1]
    else:
        top = np.argpartition(scores, n - K - 1)[n - K - 1:]
        top = top[scores.take(top).argsort()[::-1]]
    # argmax_first's test, a score at or above best - rtol * max(1, |best|) ties best, on
    # the K + 1 sorted scores in Python floats (no overflow warning, no numpy call each)
    best = scores.take(top)
    values = best.tolist()
    for a, b in zip(values, values[1:], strict=False):
        if a - b <= rtol * (a if a > 1.0 else -a if a < -1.0 else 1.0):
            return None
    return top[:K], best[:K]


def _greedy(prep: Prepared, counts: np.ndarray) -> list[Picked]:
    """One ``argmax_first`` per pick, under the cap and the budget if any."""
    K = int(counts.max(initial=0))
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
