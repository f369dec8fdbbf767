"""``threshold``: similarity-threshold rejection sampling (RAG_diversity, "threshold").

From the m most relevant candidates, draw one at a time without replacement
(uniformly, or with probability proportional to relevance) and keep it only
if its similarity to every item kept so far is below ``threshold``; stop at k
kept items. When the pool runs out first, fewer than k come back
(``info["short_by"]``).

Work: one matrix-vector product per *kept* item (a running maximum of the
similarity to the kept set over the whole pool); the next kept item is the
first one in the draw order whose running maximum is below the threshold, so
there is no loop over candidates. A rejected item can never become acceptable
later (the maximum only grows), so this equals drawing and testing one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._prepare import Prepared, check_real
from ..options import OptionSpec, seed_option
from ._common import Picked, pick_counts, start_constraints
from ._sampling import (
    plackett_luce_order,
    pool_size,
    query_rng,
    ranking,
    resolve_seed,
)

M = OptionSpec("m", "integer", None, "pool size (None: 2 k)", low=1, allow_none=True)
THRESHOLD = OptionSpec("threshold", "real", 0.9, "a draw is kept only if its similarity to "
                       "every kept item is below this (any finite number without "
                       "normalize)", low=-1.0, high=1.0)
WEIGHTED = OptionSpec("weighted", "flag", False, "draw in proportion to relevance")
SEED = seed_option(None)
OPTIONS = (M, THRESHOLD, WEIGHTED, SEED)


def threshold(
    prep: Prepared,
    k: int,
    *,
    m: int | None = None,
    threshold: float = 0.9,
    weighted: bool = False,
    seed: Any = None,
) -> list[Picked]:
    """Keep random draws from the top m that are not too similar to earlier keeps.

    Args:
        m: pool size, an integer >= 1, or None (default) for 2 k; capped at the
            number of candidates.
        threshold: a drawn item is kept only if its similarity (cosine when
            ``normalize=True``) to every kept item is strictly below this. In
            [-1, 1] with normalisation (any finite number without); default 0.9,
            which rejects only near-duplicates; 1 rejects exact duplicates only.
        weighted: False (default) draws uniformly; True draws with probability
            proportional to relevance clipped at 0 (items of relevance <= 0 are
            drawn last, in relevance order).
        seed: None, an integer >= 0 or a numpy Generator (see ``_sampling``).

    ``gains`` are each kept item's largest similarity to the items kept before
    it (0 for the first): how far under the threshold it was. ``info``: ``m``
    (the pool actually used), ``short_by`` (how many fewer than min(k, n)
    came back), ``rejected`` (draws turned down before the last keep),
    ``seed`` (the integer the generator was seeded with: pass it back to repeat a run).
    With a per-group cap or a token budget, a draw whose group is full or that
    does not fit the tokens left is turned down too.
    """
    m_opt = M.check(m)
    # a cosine's range; without normalisation, any finite inner product
    limit = THRESHOLD.check(threshold) if prep.normalize else check_real(
        threshold, "threshold", low=-np.inf, high=np.inf)
    WEIGHTED.check(weighted)
    base = resolve_seed(SEED.check(seed))
    counts = pick_counts(prep, k)
    cons = start_constraints(prep)
    out = []
    for b in range(prep.batch):
        rng = query_rng(base)
        pool = ranking(prep, b)[: pool_size(m_opt, k)]
        if weighted:
            with np.errstate(divide="ignore"):
                log_w = np.log(np.maximum(prep.rel[b, pool], 0.0))
        else:
            log_w = np.zeros(len(pool))
        drawn = pool[plackett_luce_order(log_w, rng)]
        want = int(counts[b])
        kept: list[int] = []
        gains: list[float] = []
        max_sim = np.full(len(drawn), -np.inf)  # per drawn item, max similarity to kept
        similarity_to = prep.similarity.columns(b)
        pos, rejected = 0, 0
        while len(kept) < want:
            fits = max_sim[pos:] < limit
            if cons is not None:  # a draw of a full group, or too long, is turned down too
                fits &= cons.open[b, drawn[pos:]]
            ok = np.flatnonzero(fits)
            if len(ok) == 0:
                break
            at = pos + int(ok[0])
            rejected += at - pos  # too similar, or (with a cap or budget) not allowed
            j = int(drawn[at])
            kept.append(j)
            gains.append(0.0 if len(kept) == 1 else float(max_sim[at]))
            max_sim = np.maximum(max_sim, similarity_to(j)[drawn])
            if cons is not None:
                cons.add_one(b, j)
            pos = at + 1
        info = {"m": len(pool), "seed": base, "short_by": want - len(kept),
                "rejected": rejected}
        out.append(Picked(np.array(kept, dtype=np.int64), np.array(gains, dtype=np.float64), info))
    return out
