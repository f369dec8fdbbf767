"""``top_p``: nucleus sampling over the relevance ranking (RAG_diversity, "top-p").

Every candidate gets probability softmax(rel / temperature). The nucleus is
the smallest prefix of the relevance ranking whose probability mass reaches
``p``; k items are drawn from it without replacement, each draw proportional
to the probabilities of the items left. A nucleus smaller than k gives fewer
than k items (``info["short_by"]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._prepare import Prepared
from ..options import OptionSpec, seed_option
from ._common import Picked, pick_counts, start_constraints
from ._sampling import (
    constrained_draws,
    draw_probabilities,
    log_softmax,
    plackett_luce_order,
    query_rng,
    ranking,
    resolve_seed,
)

P = OptionSpec("p", "real", 0.9, "nucleus probability mass", low=0.0, high=1.0, low_open=True)
TEMPERATURE = OptionSpec("temperature", "real", 0.1, "softmax temperature (0: greedy, inf: "
                         "uniform)", low=0.0, allow_inf=True)
SEED = seed_option(None)
OPTIONS = (P, TEMPERATURE, SEED)


def top_p(
    prep: Prepared, k: int, *, p: float = 0.9, temperature: float = 0.1, seed: Any = None
) -> list[Picked]:
    """Sample k from the nucleus of mass ``p``.

    Args:
        p: nucleus mass in (0, 1], default 0.9. p = 1 keeps every candidate
            (also those whose probability underflows to 0 at tiny temperatures;
            they are drawn last, in relevance order).
        temperature: softmax temperature in [0, inf], default 0.1. 0 puts all
            mass on the most relevant item(s), ``inf`` spreads it evenly.
        seed: None, an integer >= 0 or a numpy Generator (see ``_sampling``).

    ``gains`` are the probability each pick had at its draw, within the
    nucleus and given the earlier picks. ``info``: ``nucleus`` (its size),
    ``short_by`` (how many fewer than min(k, n) came back), ``seed`` (the
    integer the generator was seeded with: pass it back to repeat a run). With a
    per-group cap, each draw is among the nucleus items whose group is not full.
    """
    mass = P.check(p)
    temp = TEMPERATURE.check(temperature)
    base = resolve_seed(SEED.check(seed))
    counts = pick_counts(prep, k)
    cons = start_constraints(prep)
    out = []
    for b in range(prep.batch):
        rng = query_rng(base)
        ranked = ranking(prep, b)
        probs = np.exp(log_softmax(prep.rel[b, ranked], temp))
        if mass >= 1.0 or len(ranked) == 0:
            size = len(ranked)
        else:
            cum = np.cumsum(probs)
            cum /= cum[-1]  # the full ranking has mass exactly 1
            size = min(int(np.searchsorted(cum, mass, side="left")) + 1, len(ranked))
        nucleus = ranked[:size]
        inner = probs[:size]
        with np.errstate(divide="ignore"):
            order = plackett_luce_order(np.log(inner), rng)
        take = min(int(counts[b]), size)
        if cons is not None:  # draw only from what the cap and the budget allow
            kept, gains = constrained_draws(inner, order, cons, b, nucleus, take)
            order, take = order[kept], len(kept)
        else:
            gains = draw_probabilities(inner, order)[:take]
        info = {"nucleus": size, "seed": base, "short_by": int(counts[b]) - take}
        out.append(Picked(nucleus[order[:take]].astype(np.int64), gains.astype(np.float64), info))
    return out
