"""``top_m``: sample k of the top m with temperature and noise (RAG_diversity, "top-m").

The m most relevant candidates get probabilities softmax(rel / temperature);
with ``noise`` > 0 each probability gets Gaussian noise of that standard
deviation, is clipped at 0 and the whole is renormalised. k of the m are then
drawn without replacement, each draw proportional to the probabilities of the
items left. Temperature 0 (or a tiny one) is plain top-k; a large temperature
is a uniform draw from the top m.
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
    noise_rng,
    plackett_luce_order,
    pool_size,
    query_rng,
    ranking,
    resolve_seed,
)

M = OptionSpec("m", "integer", None, "pool size (None: 2 k)", low=1, allow_none=True)
TEMPERATURE = OptionSpec("temperature", "real", 0.1, "softmax temperature (0: greedy, inf: "
                         "uniform)", low=0.0, allow_inf=True)
NOISE = OptionSpec("noise", "real", 0.0, "standard deviation of Gaussian noise on relevance",
                   low=0.0)
SEED = seed_option(None)
OPTIONS = (M, TEMPERATURE, NOISE, SEED)


def top_m(
    prep: Prepared,
    k: int,
    *,
    m: int | None = None,
    temperature: float = 0.1,
    noise: float = 0.0,
    seed: Any = None,
) -> list[Picked]:
    """Sample k of the m most relevant candidates.

    Args:
        m: pool size, an integer >= 1, or None (default) for 2 k; capped at the
            number of candidates. With m < k only m items come back
            (``info["short_by"]`` says how many are missing).
        temperature: softmax temperature in [0, inf], default 0.1 (with cosine
            relevance a gap of 0.1 makes an item e times as likely). 0 is top-k,
            ``inf`` is uniform over the pool.
        noise: standard deviation (>= 0, default 0 = none) of the Gaussian noise
            added to the probabilities before clipping at 0 and renormalising.
            If the noise clips every probability to 0, the pool is taken in
            relevance order.
        seed: None, an integer >= 0 or a numpy Generator (see ``_sampling``).

    ``gains`` are the probability each pick had at its draw (given the earlier
    picks; 0 for an item taken after all probability mass was used up).
    ``info``: ``m`` (the pool actually used), ``short_by``, ``seed`` (the integer
    the generator was seeded with: pass it back to repeat a run). With a
    per-group cap, each draw is among the pool items whose group is not full.
    """
    m_opt = M.check(m)
    temp = TEMPERATURE.check(temperature)
    sigma = NOISE.check(noise)
    base = resolve_seed(SEED.check(seed))
    counts = pick_counts(prep, k)
    cons = start_constraints(prep)
    out = []
    for b in range(prep.batch):
        rng = query_rng(base)
        pool = ranking(prep, b)[: pool_size(m_opt, k)]
        take = min(int(counts[b]), len(pool))
        logp = log_softmax(prep.rel[b, pool], temp)
        probs = np.exp(logp)
        # Noise has its own stream: the draw below uses the same randomness with
        # or without it, so noise=0 is exactly the noiseless draw.
        if sigma > 0 and len(pool):
            jitter = noise_rng(base).normal(0.0, sigma, size=len(pool))
            probs = np.maximum(probs + jitter, 0.0)
            total = probs.sum()
            probs = probs / total if total > 0 else probs
            with np.errstate(divide="ignore"):
                logp = np.log(probs)
        order = plackett_luce_order(logp, rng)
        if cons is not None:  # draw only from what the cap and the budget allow
            kept, gains = constrained_draws(probs, order, cons, b, pool, take)
            order, take = order[kept], len(kept)
        else:
            gains = draw_probabilities(probs, order)[:take]
        info = {"m": len(pool), "seed": base, "short_by": int(counts[b]) - take}
        out.append(Picked(pool[order[:take]].astype(np.int64), gains.astype(np.float64), info))
    return out

