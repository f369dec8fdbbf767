"""``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein 1998).

score_j = lambda_mult * rel_j - (1 - lambda_mult) * max_{s in S} sim(c_j, c_s)

LangChain's meaning of ``lambda_mult``: 1 is relevance only, 0 is diversity
only. The penalty is the maximum similarity to *all* selected items (kept as
a running maximum, one matrix-vector product per pick), not only to the last
pick. The first pick is the most relevant candidate.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared
from ..options import OptionSpec
from ._common import Picked, Room, first_best, per_query, pick_counts

LAMBDA_MULT = OptionSpec("lambda_mult", "unit", 0.5,
                         "1 = relevance only, 0 = diversity only (LangChain's meaning)")
OPTIONS = (LAMBDA_MULT,)


def mmr(prep: Prepared, k: int, *, lambda_mult: float = 0.5) -> list[Picked]:
    """MMR; ``gains`` are the MMR scores at pick time (lambda_mult * rel for the first)."""
    lam = LAMBDA_MULT.check(lambda_mult)
    counts = pick_counts(prep, k)

    def run(one: Prepared, b: int) -> Picked:
        rel, room = one.rel[0], Room(one)
        if room.tracker is None and one.all_real:  # every candidate open
            relevance, score = lam * rel, rel
        else:
            relevance = np.where(room.open, lam * rel, -np.inf)  # -inf: picked or shut out
            score = np.where(room.open, rel, -np.inf)  # the first pick: the most relevant
        # (1 - lambda) times the similarity to each pick; its running maximum is (1 -
        # lambda) times the maximum similarity (rounding keeps a product's order)
        penalised_to = one.similarity.columns(0, 1.0 - lam)
        penalty = None  # to the picks so far
        picks: list[int] = []
        gains: list[float] = []
        count = int(counts[b])
        for t in range(count):
            if room.tracker is not None and not room.open.any():  # the cap or budget ran out
                break
            if penalty is not None:
                score = relevance - penalty
            pick = first_best(score, one.tie_rtol)
            picks.append(pick)
            gains.append(lam * rel.item(pick) if t == 0 else score.item(pick))
            relevance[pick] = -np.inf
            if room.tracker is not None and (closed := room.take(pick)) is not None:
                relevance[closed] = -np.inf
            if t == count - 1:
                break
            if penalty is None:
                penalty = penalised_to(pick)  # a new array: ours to update
            else:
                np.maximum(penalty, penalised_to(pick), out=penalty)
        return Picked(np.array(picks, dtype=np.int64), np.array(gains))

    return per_query(prep, run)
