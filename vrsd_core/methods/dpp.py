"""``dpp``: the greedy MAP of a k-DPP (Chen, Zhang & Zhou, NeurIPS 2018), and its loop
(``greedy_map``), which the default (``complement``) runs with its own weights and hooks.

The kernel is L = diag(w) S diag(w): S the similarity between candidates
(``Prepared.similarity``), w the quality weights. Each step adds the open candidate j
with the largest determinant ratio

    d_j^2 = det(L_{Y+j}) / det(L_Y) = w_j^2 r_j,    r_j = S_jj - |c_j|^2,

c_j the candidate's row of the incremental Cholesky factor of the *unweighted* S_Y (the
weights of the picks cancel in the ratio, so they may change after a pick at no extra
product). Adding pick p writes one factor row,

    e_j = (S_jp - <c_j, c_p>) / sqrt(r_p),    r_j <- r_j - e_j^2,

one matrix-vector product (S's column p) per pick. When every ratio left is numerically
zero (below ``RANK_EPS`` of the largest: k above the kernel's rank, or only copies left),
the rest is filled by relevance with gain 0, counted in ``info["filled_by_relevance"]``.
Ties go to the lower index (the store's order).

``dpp``'s weights read the relevance as given, with a trade-off ``theta``:
w_i = exp(alpha rel_i), alpha = theta / (2 (1 - theta)), so that log det L_Y =
theta / (1 - theta) * sum_{i in Y} rel_i + log det S_Y. On a raw cosine the same
``theta`` is a different balance on another model; ``complement`` reads the relevance
in pool units instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from .._prepare import Prepared
from ..options import OptionSpec
from ._common import Picked, Room, first_best, per_query, pick_counts

# A determinant ratio below this fraction of the largest is numerical zero.
RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}
_SMALLEST = float(np.finfo(np.float64).tiny)  # the least weight a score carries

MayTake = Callable[[int, Sequence[int]], bool]
"""Before a pick: ``may_take(candidate, picks)``; False closes the candidate instead."""


class Reweigh(Protocol):
    """After a pick, new weights: ``after_pick`` returns the log-quality the next step
    scores by (None: the plain weights); while it is raised, ``note`` sees each pick and
    what the step would have scored without it."""

    def after_pick(self, t: int, pick: int, column: np.ndarray) -> np.ndarray | None: ...

    def note(self, t: int, pick: int, plain: np.ndarray) -> None: ...


def greedy_map(one: Prepared, count: int, quality: np.ndarray, reweigh: Reweigh | None = None,
               may_take: MayTake | None = None) -> tuple[Picked, np.ndarray]:
    """Up to ``count`` greedy picks of one query (``one``, B = 1) for the quality weights
    ``quality`` (n,; 0 at padding), and the (n,) candidates left open (not picked, not
    shut out by the cap or the budget; the ones ``may_take`` closed count as open). With
    ``may_take``, ``info["closed"]`` lists the candidates it closed, in that order: the
    run is the one in which they were closed from the start."""
    weight = quality * quality  # w_j^2, what each residual is scored with
    residual = np.array(one.similarity.self_similarity[0], dtype=np.float64)  # S_jj
    numerical_zero = RANK_EPS[one.X.dtype] * float((weight * residual).max(initial=0.0))
    weight = plain_weight = np.maximum(weight, _SMALLEST)  # 0 times a closed -inf is -inf
    room = Room(one)
    if room.tracker is None and one.all_real:  # every candidate open
        relevance = one.rel[0].copy()  # what fills rank by
    else:
        residual[~room.open] = -np.inf
        relevance = np.where(room.open, one.rel[0], -np.inf)
    factor = np.zeros((max(count - 1, 0), len(residual)))  # the Cholesky rows c_j
    picks: list[int] = []
    gains: list[float] = []
    closed: list[int] = []
    exhausted, raised, filled = False, None, 0
    similarity_to = one.similarity.columns(0)
    may_stop = room.tracker is not None or may_take is not None  # may run out of candidates
    for t in range(count):
        pick = -1
        while not may_stop or room.open.any():
            score = weight * residual  # d_j^2 = w_j^2 r_j
            pick = int(score.argmax())
            exhausted = exhausted or score.item(pick) <= numerical_zero
            if exhausted:  # fill by relevance, or by the raised quality
                score = relevance if raised is None else np.where(
                    relevance > -np.inf, raised, -np.inf)
                pick = int(score.argmax())
            pick = first_best(score, one.tie_rtol, pick)
            if may_take is None or may_take(pick, picks):
                break
            closed.append(pick)
            residual[pick] = relevance[pick] = -np.inf
            room.close(pick)
            pick = -1
        if pick < 0:  # nothing open
            break
        if raised is not None and reweigh is not None:
            reweigh.note(t, pick, relevance if exhausted else plain_weight * residual)
        pick_residual, pick_weight = residual.item(pick), weight.item(pick)
        picks.append(pick)
        gains.append(0.0 if exhausted else pick_weight * pick_residual)
        filled += exhausted
        residual[pick] = relevance[pick] = -np.inf
        if may_stop and (shut := room.take(pick)) is not None:  # else nothing reads the room
            residual[shut] = relevance[shut] = -np.inf
        if t == count - 1 or exhausted:
            continue
        column = similarity_to(pick)  # S[:, p]: the one product
        length = math.sqrt(max(pick_residual, numerical_zero / pick_weight))
        update = factor[t]  # e = (S[:, p] - C^T c_p) / sqrt(r_p), written in place
        if t:
            np.subtract(column, factor[:t, pick] @ factor[:t], out=update)
            update /= length
        else:
            np.divide(column, length, out=update)
        residual -= update * update
        if reweigh is not None:
            raised = reweigh.after_pick(t, pick, column)
            weight = plain_weight if raised is None else np.exp(raised)
    info: dict[str, object] = {"filled_by_relevance": filled}
    if may_take is not None:
        info["closed"] = closed
    open_ = relevance > -np.inf
    if closed:
        open_[closed] = True
    return Picked(np.array(picks, dtype=np.int64), np.array(gains), info), open_


THETA = OptionSpec("theta", "unit", 0.5, "relevance (near 1) against diversity (0), on the "
                   "relevance's own scale", high_open=True)
OPTIONS = (THETA,)


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    checked = THETA.check(theta)
    alpha = checked / (2.0 * (1.0 - checked))
    counts = pick_counts(prep, k)

    def run(one: Prepared, b: int) -> Picked:
        rel, valid = one.rel[0], one.valid[0]
        # minus the best relevance: det L scales by a constant, and exp cannot overflow
        best = float(np.where(valid, rel, -np.inf).max(initial=-np.inf))
        best = best if math.isfinite(best) else 0.0
        quality = np.where(valid, np.exp(alpha * (rel - best)), 0.0)
        return greedy_map(one, int(counts[b]), quality)[0]

    return per_query(prep, run)
