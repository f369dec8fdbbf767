"""``complement``: the project's recommended selection for retrieval-augmented generation.

1. **Anchor**: the most relevant candidate.
2. **Complement**: the candidate j whose sum with the anchor points most nearly at
   the query, max cos(c_anchor + c_j, q): VRSD's own second step (Gao, Deng &
   Zhang). It covers the part of the query the anchor leaves out, which is
   what a multi-hop question's second passage does. It is taken only if the
   pair is closer to the query than the anchor alone (the sum's cosine rises);
   otherwise the step falls back to relevance.
3. **Then relevance order.** Beyond one complement, VRSD keeps raising cos(sum, q)
   with weakly related passages that balance the sum; relevance order is what
   keeps the evidence when k grows.

Throughout, a candidate that is a restatement of an earlier pick is skipped:
one whose cosine to a pick exceeds cos^2(theta_1 / 2) = (1 + r_1) / 2, where r_1 =
cos(theta_1) is the best candidate's cosine to the query. Two passages that much
closer to each other than the query is to its best match say the same thing
(overlapping chunks, copies, paraphrases). The threshold is measured in the
query's own angle, so it means the same for embedding models whose cosines sit
in different ranges. When only restatements are left, they are taken (k results
whenever there are k candidates).

Cost: one matrix-vector product per pick (the pick against every candidate), and
O(n) arithmetic for the scores; ties go to the lower index (the store's order).
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int, check_real
from .._kernels import argmax_first, argmax_first_1d, cosine_from_parts
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


def complement(
    prep: Prepared,
    k: int,
    *,
    duplicate_cos: float | None = None,
    complement_steps: int = 1,
) -> list[Picked]:
    """Anchor, gated sum-vector complement(s), then relevance; restatements skipped.

    Args:
        duplicate_cos: a candidate whose cosine to an earlier pick is above this is
            a restatement, skipped while others remain. None (default): (1 + r_1)/2
            per query, r_1 the best candidate's cosine to the query; a number in
            (-1, 1] fixes it (1: no candidate is ever a restatement).
        complement_steps: how many picks after the anchor may be complement steps
            (default 1; 0 = relevance order with the restatement guard).

    ``gains``: the anchor's and relevance picks' relevance; a taken complement
    step's cos(sum of the set so far, query). ``info``: ``duplicate_cos`` (the
    threshold used; None for a query without candidates) and ``complement_at``
    (positions where a complement was taken).
    """
    fixed = None if duplicate_cos is None else check_real(
        duplicate_cos, "duplicate_cos", low=-1.0, high=1.0, low_open=True)
    steps = check_int(complement_steps, "complement_steps", low=0)
    assert steps is not None
    if prep.single and prep.cap is None:
        return [_complement_single(prep, single_count(prep, k), fixed, steps)]
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    rel = np.where(prep.valid, prep.rel, -np.inf)
    best = rel.max(axis=1, initial=-np.inf) if n else np.full(B, -np.inf)
    threshold = np.full(B, fixed) if fixed is not None else (1.0 + best) / 2.0
    cons = start_constraints(prep)
    avail = prep.valid.copy() if cons is None else cons.open.copy()
    restated = np.zeros((B, n), dtype=bool)
    # The sum s of the picks, kept as in vrsd: s.q, |s|^2 and D_j = |c_j|^2 + 2 s.c_j.
    D = prep.sq_norm.copy()
    s_dot_q = np.zeros(B)
    s_sq = np.zeros(B)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    taken = np.zeros((B, K), dtype=bool)
    # the working query is unit length when normalising; else divide by its length
    q_len = np.ones(B) if prep.normalize else prep.q_norm
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(K):
            eligible = avail & ~restated
            eligible |= avail & ~eligible.any(axis=1, keepdims=True)  # only restatements left
            by_rel = np.where(eligible, rel, -np.inf)
            p = argmax_first(by_rel, prep.tie_rtol)
            gain = by_rel[rows, p]
            if 1 <= t <= steps:
                # cos(s + c_j, q) for every candidate: VRSD's step score
                # (a sum of (near) zero length scores 0, as in vrsd: cosine_from_parts)
                pair = cosine_from_parts(
                    s_dot_q[:, None] + prep.qsim, D + s_sq[:, None], q_len[:, None])
                pair = np.where(eligible, pair, -np.inf)
                v = argmax_first(pair, prep.tie_rtol)
                now = cosine_from_parts(s_dot_q, s_sq, q_len)  # cos(s, q) before this pick
                take = pair[rows, v] > now
                p = np.where(take, v, p)
                gain = np.where(take, pair[rows, v], gain)
                taken[:, t] = take
            active = step_active(t, counts, cons)
            picks[:, t] = p
            gains[:, t] = gain
            s_sq += np.where(active, D[rows, p], 0.0)
            s_dot_q += np.where(active, prep.qsim[rows, p], 0.0)
            avail[rows, p] = False
            if cons is not None and (blocked := cons.add(p, active)) is not None:
                avail &= ~blocked  # a full group's, or too long for the tokens left
            if t < K - 1:
                sims = prep.sims_to(p)
                D += 2.0 * sims
                restated |= sims > threshold[:, None]
    counts = taken_counts(counts, cons)
    out = split_rows(picks, gains, counts)
    has_candidates = (prep.valid.sum(axis=1) > 0).tolist()
    for b, picked in enumerate(out):
        # None for a query without candidates, as on the single-query path
        picked.info["duplicate_cos"] = float(threshold[b]) if has_candidates[b] else None
        picked.info["complement_at"] = np.flatnonzero(taken[b, : counts[b]]).tolist()
    return out


def _complement_single(prep: Prepared, K: int, fixed: float | None, steps: int) -> Picked:
    """The same selection for one query with every candidate real, on 1-D arrays.

    Two score rows replace the masks: ``open_rel`` (relevance, -inf once picked)
    and ``fresh_rel`` (also -inf once a restatement of a pick); a step takes the
    best of ``fresh_rel`` while it has a finite entry, else of ``open_rel``.
    """
    n = prep.n
    if n == 0:
        return Picked(np.zeros(0, dtype=np.int64), np.zeros(0),
                      {"duplicate_cos": None, "complement_at": []})
    open_rel = prep.rel[0].astype(np.float64, copy=True)
    threshold = fixed if fixed is not None else (1.0 + float(open_rel.max())) / 2.0
    if K == 0:  # k <= 0: the threshold is reported as on the batch path
        return Picked(np.zeros(0, dtype=np.int64), np.zeros(0),
                      {"duplicate_cos": threshold, "complement_at": []})
    rtol = prep.tie_rtol
    qsim = prep.qsim[0]
    q_len = 1.0 if prep.normalize else float(prep.q_norm[0])
    fresh_rel = open_rel.copy()
    fresh = n  # candidates neither picked nor restated
    D = prep.sq_norm[0].copy()  # |c_j|^2 + 2 s.c_j
    sims = np.empty(n)
    scale = prep.scale[0] if prep.normalize else None
    s_dot_q = s_sq = 0.0
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    taken: list[int] = []
    for t in range(K):
        pool = fresh_rel if fresh else open_rel
        p = argmax_first_1d(pool, rtol)
        gain = float(pool[p])
        if 1 <= t <= steps:
            # cos(s + c_j, q) over the same pool: VRSD's step score
            pair = cosine_from_parts(s_dot_q + qsim, D + s_sq, q_len)
            pair[pool == -np.inf] = -np.inf
            v = argmax_first_1d(pair, rtol)
            if pair[v] > cosine_from_parts(s_dot_q, s_sq, q_len):
                p, gain = v, float(pair[v])
                taken.append(t)
        picks[t], gains[t] = p, gain
        s_sq += float(D[p])
        s_dot_q += float(qsim[p])
        if fresh_rel[p] != -np.inf:
            fresh -= 1
        open_rel[p] = fresh_rel[p] = -np.inf
        if t < K - 1:
            prep.products_into(p, 1.0, sims, scale)
            D += 2.0 * sims
            restated = (sims > threshold) & (fresh_rel != -np.inf)
            fresh -= int(np.count_nonzero(restated))
            fresh_rel[restated] = -np.inf
    return Picked(picks, gains, {"duplicate_cos": threshold, "complement_at": taken})
