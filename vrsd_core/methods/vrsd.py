"""``vrsd``: the paper's greedy for the sum-vector objective, with optional 1-swap refinement.

Objective: pick S (|S| = k) maximising cos(sum_{i in S} c_i, q).
Greedy (Gao, Deng & Zhang, Algorithm 1): each step adds the candidate j that
maximises cos(s + c_j, q). Kept incrementally: s.q, |s|^2 and s.c_j for every
j, so a step's scores are O(n) arithmetic and the only O(n d) work is one
matrix-vector product C @ c_p for the pick p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._constraints import Constraints
from .._prepare import Prepared, argmax_first, beats, first_of_best
from ..options import OptionSpec
from ._common import (
    TINY,
    Picked,
    cosine_from_parts,
    pick_counts,
    split_rows,
    start_constraints,
    step_active,
    taken_counts,
)

REFINE = OptionSpec("refine", "choice", None, "None (the paper's greedy) or 'swap' (then "
                    "1-swap local search)", choices=(None, "swap"))
MAX_SWAPS = OptionSpec("max_swaps", "integer", 1000, "most exchanges of the swap search",
                       low=0)
OPTIONS = (REFINE, MAX_SWAPS)


def vrsd(
    prep: Prepared, k: int, *, refine: str | None = None, max_swaps: int = 1000
) -> list[Picked]:
    """Greedy VRSD; with ``refine="swap"``, then 1-swap local search.

    With s the sum of the picks so far, adding candidate j gives

        cos(s + c_j, q) = (s.q + c_j.q) / (|q| sqrt(|s|^2 + growth_j)),
        growth_j = |c_j|^2 + 2 s.c_j,

    and after pick p every growth_j rises by 2 c_p.c_j: one matrix-vector product.

    Args:
        refine: ``None`` (the paper's greedy) or ``"swap"``: repeatedly apply the
            best exchange of one selected and one unselected candidate while it
            raises the objective. Never lowers it; reuses the greedy's products.
        max_swaps: upper bound on exchanges per query (>= 0); the search stops
            there and ``info["swap_limit_reached"]`` says so.
    """
    refine = REFINE.check(refine)
    max_swaps = MAX_SWAPS.check(max_swaps)
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    cons = start_constraints(prep)
    # c_j.q, -inf once j is picked or closed
    query_dot = np.where(prep.valid if cons is None else cons.open, prep.query_dots(), -np.inf)
    growth = prep.sq_norm.copy()  # |c_j|^2 + 2 s.c_j
    sum_dot_query = np.zeros(B)  # s.q
    sum_squared_length = np.zeros(B)  # |s|^2
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    products = np.zeros((K, B, n)) if refine else None  # c_pick.c_j, for the swap search
    q_norm = prep.q_norm
    shortest = float(np.sqrt(TINY)) * q_norm  # |s + c_j| |q| below this: no direction
    with np.errstate(invalid="ignore", divide="ignore"):
        for t in range(K):
            numerator = query_dot + sum_dot_query[:, None]
            denominator = np.sqrt(growth + sum_squared_length[:, None]) * q_norm[:, None]
            score = numerator / denominator
            pick, threshold = first_of_best(score, prep.tie_rtol)
            active = step_active(t, counts, cons)
            # The fast scores are exact unless a sum of (near) zero length is in play:
            # there the cosine is 0, here it is +-inf, NaN or noise. That can change the
            # pick only if it won or if 0 would win or tie: then score guarded.
            if (active & ~((threshold > 0) & (denominator[rows, pick] > shortest))).any():
                score = cosine_from_parts(numerator, growth + sum_squared_length[:, None],
                                          q_norm[:, None])
                score[query_dot == -np.inf] = -np.inf
                pick = argmax_first(score, prep.tie_rtol)
            picks[:, t] = pick
            gains[:, t] = score[rows, pick]
            sum_squared_length += np.where(active, growth[rows, pick], 0.0)
            sum_dot_query += np.where(active, prep.query_dots()[rows, pick], 0.0)
            query_dot[rows, pick] = -np.inf
            if cons is not None and (blocked := cons.add(pick, active)) is not None:
                query_dot[blocked] = -np.inf  # a full group's, or too long for the tokens left
            if t < K - 1 or products is not None:
                twice_products = prep.candidates.to(pick, factor=2.0)
                growth += twice_products
                if products is not None:
                    np.multiply(twice_products, 0.5, out=products[t])
    result = split_rows(picks, gains, taken_counts(counts, cons))
    if products is None:
        for picked in result:  # the last gain is cos(sum of the picks, q): the objective
            if len(picked.gains):
                picked.objective = float(picked.gains[-1])
        return result
    for b, picked in enumerate(result):
        m = len(picked.indices)
        if m == 0:
            continue
        open_ = prep.valid[b].copy()
        open_[picked.indices] = False
        state = _GreedyState(products[:m, b], sum_dot_query[b], sum_squared_length[b],
                             products[:m, b].sum(axis=0), open_)
        result[b] = _swap_refine(prep, b, picked, state, max_swaps, cons)
    return result


@dataclass(frozen=True, slots=True)
class _GreedyState:
    """One query's state after the greedy's picks: ``prods[a]`` c_{chosen[a]} . c_j for
    every j, s . q, |s|^2 and s . c_j (s the picks' sum), and the candidates still open."""

    prods: np.ndarray
    s_dot_q: float
    s_sq: float
    s_dot_c: np.ndarray
    avail: np.ndarray


def _swap_refine(prep: Prepared, b: int, greedy: Picked, state: _GreedyState, max_swaps: int,
                 cons: Constraints | None = None) -> Picked:
    """Best-improvement 1-swap search on one query, from the greedy's ``state``.

    ``prods[a]`` holds c_{chosen[a]} . c_j for every j (the greedy's products),
    so every exchange (a out, j in) is scored for all a, j with O(k n)
    arithmetic; an accepted exchange costs one new matrix-vector product.
    Only exchanges to feasible sets are scored (``cons``, the tracker after the
    greedy's picks): with a per-group cap, j may come in only from a's own
    group or from a group that is not full; with a token budget, only if the
    set's tokens minus a's plus j's stay within it.
    """
    chosen = greedy.indices.copy()
    prods, s_dot_c, avail = state.prods.copy(), state.s_dot_c.copy(), state.avail.copy()
    s_dot_q, s_sq = state.s_dot_q, state.s_sq
    qsim, sqn, q_norm = prep.query_dots()[b], prep.sq_norm[b], float(prep.q_norm[b])
    start = current = float(cosine_from_parts(np.float64(s_dot_q), np.float64(s_sq), q_norm))
    swaps = 0
    limit_hit = False
    similarity_to = prep.candidates.columns(b)
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
        if not beats(best, current):
            break
        if swaps >= max_swaps:
            limit_hit = True
            break
        out = chosen[a]
        new_prod = similarity_to(j)
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
