"""``vrsd``: the paper's greedy for the sum-vector objective, with optional 1-swap refinement.

Objective: pick S (|S| = k) maximising cos(sum_{i in S} c_i, q).
Greedy (Gao, Deng & Zhang, Algorithm 1): each step adds the candidate j that
maximises cos(s + c_j, q). Kept incrementally: s.q, |s|^2 and s.c_j for every
j, so a step's scores are O(n) arithmetic and the only O(n d) work is one
matrix-vector product C @ c_p for the pick p.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_int
from .._constraints import Constraints
from .._kernels import (
    TIE_RTOL,
    TINY,
    argmax_first,
    argmax_first_1d,
    argmax_first_rows,
    cosine_from_parts,
)
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

REFINE_CHOICES = (None, "swap")


def vrsd(
    prep: Prepared, k: int, *, refine: str | None = None, max_swaps: int = 1000
) -> list[Picked]:
    """Greedy VRSD; with ``refine="swap"``, then 1-swap local search.

    Args:
        refine: ``None`` (the paper's greedy) or ``"swap"``: repeatedly apply the
            best exchange of one selected and one unselected candidate while it
            raises the objective. Never lowers it; reuses the greedy's products.
        max_swaps: upper bound on exchanges per query (>= 0); the search stops
            there and ``info["swap_limit_reached"]`` says so.
    """
    if refine not in REFINE_CHOICES:
        raise ValueError(f"refine: expected None or 'swap', got {refine!r}")
    check_int(max_swaps, "max_swaps", low=0)
    if prep.single:
        return [_vrsd_single(prep, single_count(prep, k), refine, max_swaps)]
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    # The single-query loop's form, per row: D = |c|^2 + 2 s.c, picked and
    # padding candidates carry s.q = -inf, the guard is checked on the winners.
    cons = start_constraints(prep)
    num_base = np.where(prep.valid if cons is None else cons.open, prep.qsim, -np.inf)
    D = prep.sq_norm.copy()
    s_dot_q = np.zeros(B)
    s_sq = np.zeros(B)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    products = np.zeros((K, B, n)) if refine else None
    q_norm = prep.q_norm
    min_len = float(np.sqrt(TINY)) * q_norm
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(K):
            score = num_base + s_dot_q[:, None]
            den = D + s_sq[:, None]
            np.sqrt(den, out=den)
            if not prep.normalize:
                den *= q_norm[:, None]
            np.divide(score, den, out=score)
            p, thr = argmax_first_rows(score, prep.tie_rtol)
            active = step_active(t, counts, cons)
            # As in _vrsd_single: redo guarded where a (near) zero-length sum could win.
            if (active & ~((thr > 0) & (den[rows, p] > min_len))).any():
                score = cosine_from_parts(
                    num_base + s_dot_q[:, None], D + s_sq[:, None], q_norm[:, None]
                )
                score[num_base == -np.inf] = -np.inf
                p = argmax_first(score, prep.tie_rtol)
            picks[:, t] = p
            gains[:, t] = score[rows, p]
            s_sq += np.where(active, D[rows, p], 0.0)
            s_dot_q += np.where(active, prep.qsim[rows, p], 0.0)
            num_base[rows, p] = -np.inf
            if cons is not None and (blocked := cons.add(p, active)) is not None:
                num_base[blocked] = -np.inf  # a full group's, or too long for the tokens left
            if t < K - 1 or products is not None:
                prod2 = prep.sims_to(p, factor=2.0)
                D += prod2
                if products is not None:
                    np.multiply(prod2, 0.5, out=products[t])
    result = split_rows(picks, gains, taken_counts(counts, cons))
    if products is None:
        for picked in result:  # as in _vrsd_single: the last gain is the objective
            if len(picked.gains):
                picked.objective = float(picked.gains[-1])
        return result
    for b, picked in enumerate(result):
        m = len(picked.indices)
        if m == 0:
            continue
        avail = prep.valid[b].copy()
        avail[picked.indices] = False
        result[b] = _swap_refine(
            prep, b, picked, products[:m, b], s_dot_q[b], s_sq[b],
            products[:m, b].sum(axis=0), avail, max_swaps, cons,
        )
    return result


def _vrsd_single(prep: Prepared, K: int, refine: str | None, max_swaps: int) -> Picked:
    """The greedy for one query with every candidate real, on 1-D arrays.

    The same arithmetic as the batched loop with fewer numpy calls per pick:
    ``D_j = |c_j|^2 + 2 s.c_j`` is kept instead of s.c_j (the factor 2 rides in
    the pick's d-vector, exact in binary), picked candidates get s.q = -inf so
    no mask is applied, and the scores reuse preallocated buffers. The guard
    for sums of (near) zero length is checked on the winner only: a garbage
    score there is either not the maximum (harmless) or is, and then the step
    is redone with the guarded formula.
    """
    n = prep.X.shape[1]
    qsim = prep.qsim[0]
    scale = prep.scale[0] if prep.normalize else None
    q_norm = float(prep.q_norm[0])
    num_base = qsim.copy()  # q.c_j, -inf once j is picked
    D = prep.sq_norm[0].copy()
    num, den, score, prod2 = np.empty((4, n))
    picks = np.zeros(K, dtype=np.int64)
    gains = np.zeros(K)
    products = np.zeros((K, n)) if refine else None
    s_dot_q = s_sq = 0.0
    tie_rtol = prep.tie_rtol
    guard = math.sqrt(TINY) * q_norm  # sqrt(|s + c|^2) * |q| at the zero-length limit
    X0, last = prep.X[0], K - 1
    cap = start_constraints(prep)  # a group cap only: a budget takes the batched path
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(K):
            np.add(num_base, s_dot_q, out=num)
            np.add(D, s_sq, out=den)
            np.sqrt(den, out=den)
            if q_norm != 1.0:
                den *= q_norm
            np.divide(num, den, out=score)
            p = int(score.argmax())
            best = float(score[p])
            thr = best - tie_rtol * (best if best > 1.0 else -best if best < -1.0 else 1.0)
            # argmax_first_1d inlined: an earlier score within the tie tolerance wins
            if p and thr > 0 and score[int(score[:p].argmax())] >= thr:
                p = int((score[:p] >= thr).argmax())
            # The fast scores are exact unless a sum of (near) zero length is in play:
            # there the guarded score is 0, here it is +-inf, NaN or noise. That can
            # only change the pick if it won (den check, NaN-safe) or if 0 would win
            # or tie (thr <= 0, which also catches -inf and NaN): then redo guarded.
            if not (thr > 0 and den[p] > guard):
                np.add(D, s_sq, out=den)
                score = cosine_from_parts(num, den, q_norm)
                score[num == -np.inf] = -np.inf  # the picks and any full group's candidates
                p = argmax_first_1d(score, tie_rtol)
            picks[t] = p
            gains[t] = score[p]
            s_sq += float(D[p])
            s_dot_q += float(qsim[p])
            num_base[p] = -np.inf
            if cap is not None and (blocked := cap.add_one(0, p)) is not None:
                num_base[blocked] = -np.inf  # a full group's candidates are out
            if t < last or products is not None:
                # prep.products_into(p, 2.0, prod2, scale), inlined: this is the hot loop
                if scale is None:
                    prod2[:] = X0 @ (X0[p] * 2.0)
                else:
                    np.multiply(X0 @ (X0[p] * (2.0 * float(scale[p]))), scale, out=prod2)
                D += prod2
                if products is not None:
                    np.multiply(prod2, 0.5, out=products[t])
    if products is None or K == 0:
        # The last gain is cos(sum of the picks, q): the objective, already computed.
        return Picked(picks, gains, objective=float(gains[-1]) if K else None)
    avail = np.ones(n, dtype=bool)
    avail[picks] = False
    return _swap_refine(
        prep, 0, Picked(picks, gains), products, s_dot_q, s_sq, products.sum(axis=0), avail,
        max_swaps, cap,
    )


def _swap_refine(
    prep: Prepared,
    b: int,
    greedy: Picked,
    prods: np.ndarray,
    s_dot_q: float,
    s_sq: float,
    s_dot_c: np.ndarray,
    avail: np.ndarray,
    max_swaps: int,
    cons: Constraints | None = None,
) -> Picked:
    """Best-improvement 1-swap search on one query, from the greedy's state.

    ``prods[a]`` holds c_{chosen[a]} . c_j for every j (the greedy's products),
    so every exchange (a out, j in) is scored for all a, j with O(k n)
    arithmetic; an accepted exchange costs one new matrix-vector product.
    Only exchanges to feasible sets are scored (``cons``, the tracker after the
    greedy's picks): with a per-group cap, j may come in only from a's own
    group or from a group that is not full; with a token budget, only if the
    set's tokens minus a's plus j's stay within it.
    """
    chosen = greedy.indices.copy()
    prods = prods.copy()
    s_dot_c = s_dot_c.copy()
    avail = avail.copy()
    qsim, sqn, q_norm = prep.qsim[b], prep.sq_norm[b], float(prep.q_norm[b])
    start = current = float(cosine_from_parts(np.float64(s_dot_q), np.float64(s_sq), q_norm))
    swaps = 0
    limit_hit = False
    room = None if cons is None else cons.group_room(b)
    tokens = None if cons is None or cons.tokens is None else cons.tokens[b]
    spare = 0 if cons is None or cons.left is None else int(cons.left[b])  # tokens left
    while True:
        num = s_dot_q - qsim[chosen][:, None] + qsim[None, :]
        den2 = (
            s_sq
            + sqn[chosen][:, None]
            + sqn[None, :]
            - 2.0 * s_dot_c[chosen][:, None]
            + 2.0 * s_dot_c[None, :]
            - 2.0 * prods
        )
        score = cosine_from_parts(num, den2, q_norm)
        score[:, ~avail] = -np.inf
        if room is not None:
            codes, counts, limit = room
            # j from another group than a's only while j's group has room
            score[(codes[None, :] != codes[chosen][:, None]) & (counts[codes] >= limit)] = -np.inf
        if tokens is not None:
            # j for a only if the set still fits: tokens[j] - tokens[a] <= tokens left
            score[tokens[None, :] - tokens[chosen][:, None] > spare] = -np.inf
        flat = int(argmax_first(score.ravel()[None, :])[0])
        a, j = divmod(flat, score.shape[1])
        best = float(score[a, j])
        # Only a strict improvement beyond rounding is taken: the objective never
        # goes down and the search cannot cycle.
        if not best > current + TIE_RTOL[np.dtype(np.float64)] * max(1.0, abs(current)):
            break
        if swaps >= max_swaps:
            limit_hit = True
            break
        out = chosen[a]
        new_prod = prep.sims_to_one(b, j)
        s_dot_c += new_prod - prods[a]
        s_sq = float(den2[a, j])
        s_dot_q = float(num[a, j])
        prods[a] = new_prod
        chosen[a] = j
        if room is not None:
            codes, counts, _ = room
            counts[codes[out]] -= 1
            counts[codes[j]] += 1
        if tokens is not None:
            spare += int(tokens[out]) - int(tokens[j])
        avail[out], avail[j] = True, False
        current = best
        swaps += 1
    info = {"swaps": swaps, "greedy_objective": start, "swap_limit_reached": limit_hit}
    if swaps == 0:
        # The greedy's own set: greedy_order would list it in the greedy's order
        # (a tie at any step went to the earlier pick) with the same gains.
        return Picked(greedy.indices, greedy.gains, info, objective=float(greedy.gains[-1]))
    order, gains = greedy_order(prods[:, chosen], qsim[chosen], q_norm)
    return Picked(chosen[order], gains, info, objective=float(gains[-1]))


def greedy_order(
    gram: np.ndarray, qsim: np.ndarray, q_norm: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Order a fixed set the way the greedy would pick it; gains are prefix cosines.

    ``gram`` is the set's (m, m) inner-product matrix, ``qsim`` its inner
    products with the query. Used to rank the output of the swap search and
    the exact solver, so every vrsd variant ranks its set the same way.
    """
    m = len(qsim)
    left = np.ones(m, dtype=bool)
    s_dot_c = np.zeros(m)
    s_dot_q = s_sq = 0.0
    order = np.zeros(m, dtype=np.int64)
    gains = np.zeros(m)
    diag = np.diag(gram)
    for t in range(m):
        score = cosine_from_parts(s_dot_q + qsim, s_sq + 2.0 * s_dot_c + diag, q_norm)
        score[~left] = -np.inf
        p = int(argmax_first(score[None, :])[0])
        order[t], gains[t] = p, score[p]
        left[p] = False
        s_sq += 2.0 * s_dot_c[p] + diag[p]
        s_dot_q += qsim[p]
        s_dot_c += gram[p]
    return order, gains
