"""Small pieces the method modules share: the result of a run (``Picked``), pick counts,
one query's open candidates under the cap and the budget (``Room``), the run over a
batch's queries (``per_query``), the tie rule on one row (``first_best``) and guarded
cosines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._constraints import Constraints
from .._prepare import LOWEST, Prepared


@dataclass(slots=True)
class Picked:
    """One query's picks, before ``vrsd_core.api`` adds relevance and objective."""

    indices: np.ndarray
    gains: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    # The set's sum-vector cosine when the method already has it (vrsd's last
    # gain); None lets vrsd_core.api compute it.
    objective: float | None = None


def pick_counts(prep: Prepared, k: int) -> np.ndarray:
    """Per query, how many picks: min(k, number of real candidates), at least 0;
    with a per-group cap, min(k, how many the cap allows) (``feasible_counts``)."""
    if prep.feasible is not None:
        return np.minimum(max(k, 0), prep.feasible)
    if prep.all_real:
        return np.array([min(max(k, 0), prep.n)] * prep.batch)
    return np.minimum(max(k, 0), prep.valid.sum(axis=1))


def start_constraints(prep: Prepared) -> Constraints | None:
    """The feasibility tracker of a run (cap and/or budget), or None without either."""
    if not prep.constrained:
        return None
    return Constraints.start(prep.valid, prep.group, prep.cap, prep.tokens, prep.budget)


def step_active(t: int, counts: np.ndarray, cons: Constraints | None) -> np.ndarray:
    """(B,) which queries pick at step t: those below their count that (under a
    cap or budget) still have an open candidate. Once False it stays False."""
    active = t < counts
    return active if cons is None else active & cons.live


def taken_counts(counts: np.ndarray, cons: Constraints | None) -> np.ndarray:
    """Per query, how many picks a greedy run made (its count, or fewer when a
    budget ran out first)."""
    return counts if cons is None else cons.taken


# Batches run over chunks of queries whose candidate vectors together stay in
# cache across the k picks; one pass over a larger stack per pick streams it
# from memory k times.
CHUNK_BYTES = 4 << 20


def run_in_chunks(
    prep: Prepared, method: Callable[..., list[Picked]], k: int, options: dict[str, Any]
) -> list[Picked]:
    """``method(prep, k, **options)`` on the whole batch, or chunk by chunk of queries
    when the batch's candidates exceed CHUNK_BYTES. Every method's work is per query,
    so the results are those of one call (``vrsd_core.api`` runs batches this way)."""
    size = max(1, CHUNK_BYTES // max(1, prep.X[0].nbytes)) if prep.batch else 1
    if prep.batch <= size:
        return method(prep, k, **options)
    out: list[Picked] = []
    for start in range(0, prep.batch, size):
        cut = {name: _query_rows(value, slice(start, start + size))
               for name, value in options.items()}  # per query: this chunk's
        out.extend(method(prep.rows(start, start + size), k, **cut))
    return out


def _query_rows(value: Any, cut: slice) -> Any:
    """A per-query option (``LinkArrays``, a (B, ...) array) for queries ``cut``; any
    other option as it is."""
    if hasattr(value, "rows"):
        return value.rows(cut)
    return value[cut] if isinstance(value, np.ndarray) else value


def per_query(prep: Prepared, run: Callable[[Prepared, int], Picked]) -> list[Picked]:
    """``run(one, b)`` for each query b of the batch, ``one`` its problem alone (B = 1):
    the methods with one plain loop per query run a batch this way."""
    if prep.batch == 1:
        return [run(prep, 0)]
    return [run(prep.rows(b, b + 1), b) for b in range(prep.batch)]


def first_best(scores: np.ndarray, rtol: float, pick: int | None = None) -> int:
    """The lowest index whose score ties the best of ``scores`` (one row, finite best)
    within ``rtol``: the tie rule (``_prepare.tie_margin``), the store's rank deciding.
    ``pick``: ``scores.argmax()``, when the caller has it."""
    if pick is None:
        pick = int(scores.argmax())
    if pick:
        best = scores.item(pick)
        threshold = max(best - rtol * max(1.0, abs(best)), LOWEST)
        if threshold == threshold:  # the pick itself ties: the first that does is at most it
            return int((scores >= threshold).argmax())
    return pick


class Room:
    """One query's candidates still open to a pick: real, not picked, and allowed by the
    cap and the budget (``_constraints.Constraints``). ``prep`` holds that one query."""

    def __init__(self, prep: Prepared) -> None:
        self.tracker = start_constraints(prep)
        self.open = (prep.valid if self.tracker is None else self.tracker.open)[0].copy()

    def take(self, pick: int) -> np.ndarray | None:
        """Record ``pick``; the (n,) mask of the others it closed (a full group's, or too
        long for the tokens left), or None."""
        self.open[pick] = False
        if self.tracker is None:
            return None
        closed = self.tracker.add_one(0, pick)
        if closed is not None:
            self.open &= ~closed
        return closed

    def close(self, candidate: int) -> None:
        """Shut ``candidate`` out without picking it."""
        self.open[candidate] = False
        if self.tracker is not None:
            self.tracker.open[0, candidate] = False


def stopped_short(prep: Prepared, k: int, b: int, indices: np.ndarray) -> str | None:
    """What kept query b's picks ``indices`` (a capped or budgeted run's) below min(k,
    real candidates): ``"max_tokens"`` when fewer than the cap allows came back and some
    candidate left out does not fit the tokens left; else ``"max_per_group"`` when the cap
    allows fewer than min(k, real candidates); else None."""
    wanted = min(max(k, 0), int(prep.valid[b].sum()))
    if prep.tokens is not None and prep.budget is not None:
        most = wanted if prep.feasible is None else min(max(k, 0), int(prep.feasible[b]))
        if len(indices) < most:
            out = prep.valid[b].copy()
            out[indices] = False
            left = prep.budget - int(prep.tokens[b, indices].sum())
            if (prep.tokens[b, out] > left).any():
                return "max_tokens"
    if prep.feasible is not None and prep.feasible[b] < wanted:
        return "max_per_group"
    return None


def split_rows(picks: np.ndarray, gains: np.ndarray, counts: np.ndarray) -> list[Picked]:
    """Cut the (B, K) pick table into one ``Picked`` per query."""
    return [
        Picked(picks[b, : counts[b]].astype(np.int64), gains[b, : counts[b]].astype(np.float64))
        for b in range(picks.shape[0])
    ]


# A sum vector shorter than this (squared) has no direction: its cosine is 0.
TINY = 1e-12


def cosine_from_parts(num: Any, den2: Any, q_norm: Any = 1.0) -> np.ndarray:
    """cos = num / (|q| sqrt(den2)); a sum vector of (near) zero length scores 0."""
    ok = den2 > TINY
    return np.where(ok, num / (np.sqrt(np.where(ok, den2, 1.0)) * q_norm), 0.0)
