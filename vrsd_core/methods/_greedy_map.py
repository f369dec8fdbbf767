"""Greedy MAP of a determinantal kernel: the loop ``dpp`` and ``complement`` share.

The kernel is L = diag(w) S diag(w), S the candidates' working inner products and w
the quality weights each method chooses. Each step adds the open candidate with the
largest determinant ratio d_j^2 = det(L_{Y+j}) / det(L_Y) (ties to the lower index),
kept by an incremental Cholesky update (Chen, Zhang & Zhou, NeurIPS 2018): one n x d
matrix-vector product per pick. When every ratio left is numerically zero (below
``RANK_EPS`` of the largest quality: k above the kernel's rank, or only copies left),
the rest is filled by relevance, with gain 0, counted in ``info["filled_by_relevance"]``.

One loop in two forms, the same picks and gains (tests/unit_tests/core/test_batch.py
holds select_batch equal to select): over a (B, n) batch, and on 1-D rows for one query
without padding or budget, because a numpy call costs the same on one row as on thirty:
on the retriever's pool the 1-D form is 3 to 5 times faster for one query, the batched
one about 3 times faster per query over a batch (benchmarks/speed.py prints both).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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

_MAX = np.maximum.reduce  # np.max without its three Python frames

# A determinant ratio below this fraction of the largest quality is numerical zero.
RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


Loop = Callable[[Prepared, int, np.ndarray], tuple[list[Picked], np.ndarray]]


def greedy_map(prep: Prepared) -> Loop:
    """The form of the loop for ``prep``: ``loop(prep, k, w)`` gives the greedy picks
    for weights ``w`` (B, n; 0 at padding): per query a ``Picked`` (gains the
    determinant ratios, 0 for fills), and the (B, n) candidates still open after the
    run (real, not picked, not closed by a cap or budget). The caller runs the loop
    itself, so no dispatching frame sits above it."""
    return _one_query if prep.single else _batched


def _batched(prep: Prepared, k: int, w: np.ndarray) -> tuple[list[Picked], np.ndarray]:
    """``greedy_map``'s loop over a (B, n) batch (padding, caps and budgets)."""
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    valid = prep.valid
    d2 = w * w * prep.sq_norm
    floor = RANK_EPS[prep.X.dtype] * d2.max(axis=1, initial=0.0)
    by_rel = np.where(valid, prep.rel, -np.inf)
    factors = np.zeros((B, K, n))
    cons = start_constraints(prep)
    avail = valid.copy() if cons is None else cons.open.copy()
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        best = np.where(avail, d2, -np.inf).max(axis=1, initial=-np.inf)
        exhausted |= best <= floor
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
        update = t < K - 1 and not exhausted.all()
        if update:
            kernel_row = w * w[rows, p][:, None] * prep.sims_to(p)
            d2 = cholesky_step(factors, d2, t, p, kernel_row, floor)
    result = split_rows(picks, gains, taken_counts(counts, cons))
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
    return result, avail


def _one_query(
    prep: Prepared, k: int, w: np.ndarray
) -> tuple[list[Picked], np.ndarray]:
    """``greedy_map``'s loop for one query with every candidate real, on 1-D arrays
    (``w`` is (1, n)). A pick's
    kernel row w * w_p * S[:, p] is its one product (the weights ride in the d-vector);
    picked and blocked candidates get d^2 = -inf and relevance -inf, so no mask is
    applied."""
    K = single_count(prep, k)
    w = w[0]
    n = prep.n
    X = prep.X[0]
    row_scale = w * prep.scale[0] if prep.normalize else w
    pick_factor = row_scale.tolist()  # rides in the pick's d-vector
    d2 = w * w * prep.sq_norm[0]
    floor = RANK_EPS[prep.X.dtype] * float(_MAX(d2, initial=0.0))
    rtol = prep.tie_rtol
    by_rel = prep.rel[0].copy()
    factors = np.zeros((K, n))
    picks: list[int] = []
    gains = np.zeros(K)
    filled = 0
    exhausted = False
    cap = start_constraints(prep)  # a group cap only: a budget takes the batched form
    for t in range(K):
        if not exhausted:
            top = int(d2.argmax())
            best = d2.item(top)
            exhausted = best <= floor
            if exhausted:  # the rest by relevance: what was picked is out
                by_rel[picks] = -np.inf
        if exhausted:
            p = argmax_first_1d(by_rel, rtol)
            by_rel[p] = -np.inf
            filled += 1
        else:
            p = top
            if top:  # first_tie, inline: an earlier score within the tolerance wins
                thr = best - rtol * (best if best > 1.0 else 1.0)  # best > floor >= 0
                if _MAX(d2[:top]) >= thr:
                    p = int((d2[:top] >= thr).argmax())
                    best = d2.item(p)
            gains[t] = best
        picks.append(p)
        update = t < K - 1 and not exhausted
        if update:  # the kernel row lands in its factor row (a Python float keeps float32)
            e = factors[t]
            np.multiply(X @ (X[p] * pick_factor[p]), row_scale, out=e)
            if t:
                e -= factors[:t, p] @ factors[:t]
            e /= math.sqrt(max(best, floor))
            d2 -= e * e
        d2[p] = -np.inf
        if cap is not None and (blocked := cap.add_one(0, p)) is not None:
            d2[blocked] = by_rel[blocked] = -np.inf  # a full group's candidates are out
    picked = np.array(picks, dtype=np.int64)
    by_rel[picked] = -np.inf
    return [Picked(picked, gains, {"filled_by_relevance": filled})], np.isfinite(by_rel)[None]


def cholesky_step(factors: np.ndarray, d2: np.ndarray, t: int, p: np.ndarray,
                  kernel_row: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """One step of greedy k-DPP MAP's incremental Cholesky (Chen, Zhang & Zhou 2018),
    batched: with pick ``p`` (B,) and its kernel row (B, n), writes row ``t`` of
    ``factors`` (B, K, n) and returns the candidates' remaining determinant ratios
    ``d2`` (B, n); ``floor`` (B,) is each row's numerical zero."""
    rows = np.arange(len(p))
    d_p = np.sqrt(np.maximum(d2[rows, p], floor))
    d_p[d_p == 0] = 1.0  # a query without real candidates: nothing to divide
    proj = np.einsum("bt,btn->bn", factors[rows, :t, p], factors[:, :t, :])
    e = (kernel_row - proj) / d_p[:, None]
    factors[:, t] = e
    return d2 - e * e
