"""``complement``: the project's default for retrieval-augmented generation.

One idea: take the k candidates that are most likely *together* under a
determinantal point process (Kulesza & Taskar; greedy MAP as in Chen, Zhang &
Zhou 2018) whose quality is each candidate's relevance **in its pool's units**.

* **Quality.** z_i is the candidate's relevance standardised within its pool,
  (rel_i - mean) / std over the pool's candidates; given several relevance signals
  (one row each, e.g. the cosine and the words' BM25 the adapters add), z_i is the
  sum of each signal's standardised score, standardised again: each signal counts
  alike, and the relevance keeps its unit however many signals there are. The kernel
  is L = diag(w) S diag(w) with w_i = exp(z_i / 2), S the candidates' cosines. Then
  det L_Y = exp(sum of z over Y) * det S_Y: one standard deviation of relevance is
  worth one e-fold of the volume the set spans, whatever the embedding model's cosine
  range or the scale of an outside ``relevance=`` (a cross-encoder's logits). Each
  greedy step adds the candidate with the largest determinant ratio
  ``w_j^2 (1 - |projection of c_j on the picks|^2)``: relevance times what the
  candidate says that the picks do not. A restatement of a pick adds almost nothing
  and waits; a distinct passage of the same topic does not.
* **Held back.** ``info["top_k"]`` lists what plain top-k (by the same relevance, the
  same number of picks) would have returned, best first; ``info["held_back"]`` maps
  each of those this did not pick to the pick whose vector is closest to it (a
  geometric neighbour, not a claim that it restates it: the adapters, which hold the
  texts, say which restate a kept passage, ``vrsd_kit.explain``). Under a cap or a
  budget, only candidates that were still allowed are listed as held back.

When every remaining determinant ratio is numerically zero (k above the kernel's
rank, or only copies left) the rest is filled by relevance, with gain 0, counted
in ``info["filled_by_relevance"]``. ``gains`` are the determinant ratios.

Cost: one n x d matrix-vector product per pick (the pick against every candidate,
which serves the kernel row and ``held_back``) and O(k n) arithmetic per pick for
the Cholesky rows; ties go to the lower index (the store's order).
"""

from __future__ import annotations

import numpy as np

from .._kernels import TINY, argmax_first, argmax_first_1d, first_tie
from .._prepare import Prepared, standardised
from ._common import (
    Picked,
    cholesky_step,
    pick_counts,
    single_count,
    split_rows,
    start_constraints,
    step_active,
    taken_counts,
)

# A determinant ratio below this fraction of the largest quality is numerical zero.
_RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def complement(prep: Prepared, k: int) -> list[Picked]:
    """The default selection; ``gains`` are determinant ratios (0 for fills)."""
    if prep.single:
        return [_complement_single(prep, single_count(prep, k))]
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    valid = prep.valid
    w = np.where(valid, np.exp(_pool_units(prep) / 2.0), 0.0)
    d2 = w * w * prep.sq_norm
    floor = _RANK_EPS[prep.X.dtype] * d2.max(axis=1, initial=0.0, keepdims=True)
    by_rel = np.where(valid, prep.rel, -np.inf)
    factors = np.zeros((B, K, n))
    sims = np.zeros((B, K, n))  # each pick's products with every candidate
    cons = start_constraints(prep)
    avail = valid.copy() if cons is None else cons.open.copy()
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        best = np.where(avail, d2, -np.inf).max(axis=1, initial=-np.inf)
        exhausted |= best <= floor[:, 0]
        score = np.where(exhausted[:, None], by_rel, d2)
        score[~avail] = -np.inf
        p = argmax_first(score, prep.tie_rtol)
        active = step_active(t, counts, cons)
        picks[:, t] = p
        gains[:, t] = np.where(exhausted, 0.0, d2[rows, p])
        filled += exhausted & active
        avail[rows, p] = False
        if cons is not None and (blocked := cons.add(p, active)) is not None:
            avail[blocked] = False  # a full group's, or too long for the tokens left
        sims[:, t] = prep.sims_to(p)
        if t < K - 1 and not exhausted.all():
            kernel_row = w * w[rows, p][:, None] * sims[:, t]
            d2 = cholesky_step(factors, d2, t, p, kernel_row, floor[:, 0])
    taken = taken_counts(counts, cons)
    result = split_rows(picks, gains, taken)
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
        picked.info["top_k"], picked.info["held_back"] = _held_back(
            prep.rel[b], avail[b], picked.indices, sims[b, : len(picked.indices)]
        )
    return result


def _complement_single(prep: Prepared, K: int) -> Picked:
    """The same selection for one query with every candidate real, on 1-D arrays (the
    batched path's per-step overhead is most of a 50-candidate query's time). A pick's
    kernel row w * w_p * S[:, p] is its one product (the weights ride in the d-vector);
    the cosines the step and ``held_back`` read are that row over the weights. Picked
    and blocked candidates get d^2 = -inf and relevance -inf, so no mask is applied."""
    n = prep.n
    rel, sq = prep.rel[0], prep.sq_norm[0]
    w = np.exp(_pool_units(prep)[0] / 2.0)
    qsim = prep.qsim[0]
    row_scale = w * prep.scale[0] if prep.normalize else w
    d2 = w * w * sq
    floor = _RANK_EPS[prep.X.dtype] * float(d2.max(initial=0.0))
    rtol = prep.tie_rtol
    by_rel = rel.copy()
    factors = np.zeros((K, n))
    kernel = np.zeros((K, n))
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    filled = 0
    exhausted = False
    cap = start_constraints(prep)  # a group cap only: a budget takes the batched path
    for t in range(K):
        if not exhausted:
            top = int(d2.argmax())
            exhausted = float(d2[top]) <= floor
        if exhausted:
            p = argmax_first_1d(by_rel, rtol)
            filled += 1
        else:
            p = first_tie(d2, top, rtol)
            gains[t] = d2[p]
        picks[t] = p
        by_rel[p] = -np.inf
        prep.products_into(p, float(w[p]), kernel[t], row_scale)
        if t < K - 1 and not exhausted:
            e = np.subtract(kernel[t], factors[:t, p] @ factors[:t], out=factors[t])
            e /= np.sqrt(max(float(d2[p]), floor))
            d2 -= e * e
        d2[p] = -np.inf
        if cap is not None and (blocked := cap.add_one(0, p)) is not None:
            d2[blocked] = by_rel[blocked] = -np.inf  # a full group's candidates are out
    sims = kernel / (w * w[picks][:, None])
    top_k, held = _held_back(rel, np.isfinite(by_rel), picks, sims)
    info = {"filled_by_relevance": filled, "top_k": top_k, "held_back": held}
    # cos(sum of the picks, query) from the rows at hand: |sum|^2 is the picks' Gram sum
    length_sq = float(sims[:, picks].sum())
    objective = (float(qsim[picks].sum()) / (np.sqrt(length_sq) * float(prep.q_norm[0]))
                 if length_sq > TINY else 0.0)
    return Picked(picks, gains, info, objective)


def _pool_units(prep: Prepared) -> np.ndarray:
    """(B, n) the relevance in pool units: as given when it is already (several
    signals fused), else standardised within each pool."""
    return prep.rel if prep.rel_in_pool_units else standardised(prep.rel, prep.valid)


def _held_back(rel: np.ndarray, open_: np.ndarray, picked: np.ndarray,
               pick_sims: np.ndarray) -> tuple[list[int], dict[int, int]]:
    """(plain top-k by ``rel`` among the picks and the candidates still open, as many as
    the picks, best first; {candidate: the pick it is closest to} for each of those that
    is still open and not picked, in top-k order)."""
    if not len(picked):
        return [], {}
    pool = open_.copy()
    pool[picked] = True
    order = np.argsort(np.where(pool, -rel, np.inf), kind="stable")[: len(picked)]
    passed = order[open_[order]]
    nearest = picked[pick_sims[:, passed].argmax(axis=0)]
    return order.tolist(), dict(zip(passed.tolist(), nearest.tolist(), strict=True))
