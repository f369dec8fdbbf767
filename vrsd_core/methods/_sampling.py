"""What the seeded strategies (``threshold``, ``top_m``, ``top_p``, ``cluster``) share.

- Seeds: ``None`` (fresh entropy each call), an int >= 0 (reproducible), or a
  ``numpy.random.Generator`` (one number is drawn from it per call, so it
  advances the way numpy generators do, and equal generator states give equal
  results). Every query of a batch starts from the same seed, so
  ``select_batch`` equals the corresponding single ``select`` calls.
- Sampling k of m without replacement with probabilities p (each draw
  proportional to p among the items left) is the Plackett-Luce order of
  ``log p + Gumbel noise`` (Gumbel-top-k): one vectorised draw, no loop over
  candidates. Items of probability 0 (log p = -inf) come last, in the order
  they were given, which is the relevance ranking everywhere here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._constraints import Constraints
from .._prepare import Prepared
from ..options import check_seed_integer


def resolve_seed(seed: Any) -> int:
    """The integer every query of this call seeds its generator with."""
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))  # fresh entropy
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    check_seed_integer(seed)
    return int(seed)


def query_rng(base: int) -> np.random.Generator:
    """A fresh generator for one query (the same for every query of a call)."""
    return np.random.default_rng(base)


def noise_rng(base: int) -> np.random.Generator:
    """A second, independent stream for one query's noise: the draw order's own
    stream is then the same with or without noise, so the result is continuous
    in the noise level (noise -> 0 gives the noiseless result)."""
    return np.random.default_rng([base, 1])


def pool_size(m: int | None, k: int) -> int:
    """The documented default pool: ``m`` if given, else 2 k."""
    return 2 * max(k, 0) if m is None else m


def ranking(prep: Prepared, b: int) -> np.ndarray:
    """Query b's real candidates by relevance, best first; ties keep the store's order."""
    items = np.flatnonzero(prep.valid[b])
    return items[np.argsort(-prep.rel[b, items], kind="stable")]


def log_softmax(scores: np.ndarray, temperature: float) -> np.ndarray:
    """log softmax(scores / temperature), stable for any temperature in [0, inf].

    The best score is subtracted first, so a tiny temperature gives -inf (never
    an overflow) for every item below the best; temperature 0 is the limit
    (equal mass on the best items), infinity is uniform.
    """
    if len(scores) == 0:
        return np.zeros(0)
    shifted = scores - scores.max()
    if temperature == 0.0:
        logits = np.where(shifted == 0.0, 0.0, -np.inf)
    else:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            logits = shifted / temperature
        logits = np.where(np.isnan(logits), 0.0, logits)  # 0 / inf
    top = logits.max()
    return logits - (top + np.log(np.exp(logits - top).sum()))


def plackett_luce_order(log_weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order of all items, each draw proportional to exp(log_weights) among
    the items left (sampling without replacement). -inf weights come last, in order."""
    keys = log_weights + rng.gumbel(size=len(log_weights))
    return np.argsort(-keys, kind="stable")


def draw_probabilities(probs: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For items drawn in ``order``: the probability each had at its draw,
    p_i / (mass of the items not drawn before it); 0 once no mass is left."""
    p = probs[order]
    left = np.cumsum(p[::-1])[::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(left > 0, p / np.where(left > 0, left, 1.0), 0.0)
    return out


def occurrence_rank(labels: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions carry the same label (0 for the first)."""
    n = len(labels)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, n])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(starts, sizes)
    return rank


def constrained_draws(
    probs: np.ndarray,
    order: np.ndarray,
    cons: Constraints,
    b: int,
    items: np.ndarray,
    take: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw without replacement under a cap or budget, from a Plackett-Luce ``order``.

    ``items`` are query b's candidate indices (the pool), ``probs`` their
    probabilities. Walking the order and passing over items the constraints
    close (a full group, too long for the tokens left) is sampling each draw
    proportional to ``probs`` among the items left *and allowed* (the order
    restricted to any subset is that subset's own Plackett-Luce order); a
    closed item never reopens, so nothing passed over is allowed later.
    Returns (positions into ``order`` of at most ``take`` kept items, the
    probability each had at its draw among the allowed items left; 0 once no
    mass is left). One O(m) update per kept item.
    """
    p = probs[order]
    drawn = items[order]
    kept: list[int] = []
    gains: list[float] = []
    pos = 0
    while len(kept) < take:
        allowed = cons.open[b, drawn]
        ahead = np.flatnonzero(allowed[pos:])
        if len(ahead) == 0:
            break
        at = pos + int(ahead[0])
        mass = float(p[allowed].sum())
        gains.append(float(p[at]) / mass if mass > 0 else 0.0)
        kept.append(at)
        cons.add_one(b, int(drawn[at]))
        pos = at + 1
    return np.array(kept, dtype=np.int64), np.array(gains, dtype=np.float64)
