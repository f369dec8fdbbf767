"""``cluster``: one representative per k-means cluster (RAG_diversity, "maximum margin").

The candidates' working vectors (unit length with ``normalize=True``) are
split into k clusters by Lloyd's k-means, seeded by greedy k-means++ (Arthur &
Vassilvitskii 2007; the greedy variant is scikit-learn's default) with a
seeded generator: the first centre is the most relevant candidate; each
further centre is the best of 2 + ln k draws with probability proportional to
the squared distance from the nearest centre so far (best = lowest total
squared distance afterwards). Plain k-means++ puts two seeds in one blob
often enough that Lloyd's iteration cannot recover; the greedy draw makes that
rare. The result is the most relevant member of each cluster, ordered by
relevance.

numpy only, no scikit-learn: for the n <= a few thousand candidates of one
query, Lloyd's iteration is a few lines of matrix products (distances as
|x|^2 - 2 x.c + |c|^2), while scikit-learn's KMeans would add a heavy
dependency to a core that is otherwise numpy-only, spends more on per-call
overhead than on the arithmetic at this size, and seeds its first centre at
random rather than at the most relevant candidate.

An empty cluster (possible after an update step) takes over the point
farthest from its own centre among clusters with more than one member, so
there are always min(k, n) clusters. When k exceeds the number of distinct
vectors, duplicates end up as representatives of separate clusters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._constraints import Constraints
from .._prepare import Prepared, argmax_first
from ..options import OptionSpec, seed_option
from ._common import Picked, pick_counts, start_constraints
from ._sampling import query_rng, resolve_seed

N_ITER = OptionSpec("n_iter", "integer", 100, "most Lloyd iterations of k-means", low=0)
SEED = seed_option(0)
OPTIONS = (N_ITER, SEED)


def cluster(prep: Prepared, k: int, *, n_iter: int = 100, seed: Any = 0) -> list[Picked]:
    """k-means into min(k, n) clusters; return each cluster's most relevant member.

    Args:
        n_iter: most Lloyd iterations (update centres, reassign), an integer
            >= 0, default 100; it stops earlier when no assignment changes.
            0 keeps the assignment to the nearest k-means++ seed.
        seed: None, an integer >= 0 or a numpy Generator (see ``_sampling``);
            default 0, so the clustering is deterministic unless asked otherwise.

    Picks are ordered by relevance (ties: lower index). ``gains`` are the size
    of the cluster each pick represents. ``info``: ``iterations`` (Lloyd
    iterations run), ``converged`` (assignments stopped changing), ``seed``
    (the integer the generator was seeded with). With a per-group cap or a token budget, see
    ``_allowed_representatives`` (``info["filled_by_relevance"]`` counts fills).
    """
    iters = N_ITER.check(n_iter)
    base = resolve_seed(SEED.check(seed))
    counts = pick_counts(prep, k)
    cons = start_constraints(prep)
    out = []
    for b in range(prep.batch):
        items = np.flatnonzero(prep.valid[b])
        kk = int(counts[b])
        rel = prep.rel[b, items]
        if kk == 0:
            empty: dict[str, Any] = {"iterations": 0, "converged": True, "seed": base}
            if cons is not None:
                empty["filled_by_relevance"] = 0
            out.append(Picked(np.zeros(0, np.int64), np.zeros(0), empty))
            continue
        X = prep.candidates.working(b)[items].astype(np.float64)
        assign, done, converged = _kmeans(X, rel, kk, iters, query_rng(base))
        sizes = np.bincount(assign, minlength=kk)
        info = {"iterations": done, "converged": converged, "seed": base}
        if cons is not None:
            reps, gains, filled = _allowed_representatives(assign, rel, sizes, cons, b, items)
            info["filled_by_relevance"] = filled
            out.append(Picked(items[reps], gains, info))
            continue
        reps = np.zeros(kk, dtype=np.int64)
        for c in range(kk):
            members = np.flatnonzero(assign == c)
            reps[c] = members[int(argmax_first(rel[members][None, :])[0])]
        order = np.lexsort((reps, -rel[reps]))  # by relevance, ties: lower index
        out.append(Picked(items[reps[order]], sizes[order].astype(np.float64), info))
    return out


def _allowed_representatives(
    assign: np.ndarray,
    rel: np.ndarray,
    sizes: np.ndarray,
    cons: Constraints,
    b: int,
    items: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Representatives under a per-group cap or token budget (``cons``, query b;
    ``items`` its real candidates): clusters in order of their most relevant
    member, each takes its most relevant member still allowed; a cluster left
    without one is skipped, and the places it leaves are filled by relevance
    from the candidates still allowed (gain 0). O(n) array work per pick.
    Returns (positions into ``items``, by relevance; gains; fills).
    """
    kk = len(sizes)
    picks: list[int] = []
    gains: list[float] = []
    best = np.full(kk, -np.inf)
    np.maximum.at(best, assign, rel)

    def take(members: np.ndarray, gain: float) -> None:
        j = int(members[int(argmax_first(rel[members][None, :])[0])])
        picks.append(j)
        gains.append(gain)
        cons.add_one(b, int(items[j]))

    # clusters by their best member's relevance (ties: the lower cluster number)
    for c in np.lexsort((np.arange(kk), -best)).tolist():
        members = np.flatnonzero((assign == c) & cons.open[b, items])
        if len(members):
            take(members, float(sizes[c]))
    filled = 0
    while len(picks) < kk and (left := np.flatnonzero(cons.open[b, items])).size:
        take(left, 0.0)  # at most k fills
        filled += 1
    reps = np.array(picks, dtype=np.int64)
    order = np.lexsort((reps, -rel[reps]))  # by relevance, ties: lower index
    return reps[order], np.array(gains, dtype=np.float64)[order], filled


def _kmeans(
    X: np.ndarray, rel: np.ndarray, kk: int, n_iter: int, rng: np.random.Generator
) -> tuple[np.ndarray, int, bool]:
    """Lloyd's k-means with k-means++ seeding; (assignment, iterations, converged)."""
    sq = np.einsum("nd,nd->n", X, X)
    centres = _seed_centres(X, sq, rel, kk, rng)
    assign, dist = _nearest(X, sq, centres)
    _fill_empty(assign, dist, kk)
    converged = False
    done = 0
    while done < n_iter:
        onehot = np.zeros((len(X), kk))
        onehot[np.arange(len(X)), assign] = 1.0
        centres = (onehot.T @ X) / onehot.sum(axis=0)[:, None]
        new, dist = _nearest(X, sq, centres)
        _fill_empty(new, dist, kk)
        done += 1
        if np.array_equal(new, assign):
            converged = True
            break
        assign = new
    return assign, done, converged


def _seed_centres(
    X: np.ndarray, sq: np.ndarray, rel: np.ndarray, kk: int, rng: np.random.Generator
) -> np.ndarray:
    """Greedy k-means++: the most relevant point first; then per step draw
    2 + ln k candidates with probability proportional to D^2 and keep the one
    that lowers the potential (sum of D^2) most. One (n, trials) product a step."""
    trials = 2 + int(np.log(kk))
    chosen = [int(argmax_first(rel[None, :])[0])]
    d2 = np.maximum(sq - 2.0 * (X @ X[chosen[0]]) + sq[chosen[0]], 0.0)
    for _ in range(1, kk):
        d2[chosen] = 0.0
        total = d2.sum()
        if total > 0:
            cands = rng.choice(len(X), size=trials, p=d2 / total)
            dc = np.maximum(sq[:, None] - 2.0 * (X @ X[cands].T) + sq[cands][None, :], 0.0)
            dc = np.minimum(dc, d2[:, None])
            best = int(np.argmin(dc.sum(axis=0)))
            chosen.append(int(cands[best]))
            d2 = dc[:, best]
        else:  # only copies of the centres are left: take the next by relevance
            left = np.ones(len(X), dtype=bool)
            left[chosen] = False
            chosen.append(int(np.flatnonzero(left)[int(argmax_first(rel[left][None, :])[0])]))
    return X[chosen]


def _nearest(X: np.ndarray, sq: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centre of every point (ties: lower centre) and the squared distance to it."""
    d = sq[:, None] - 2.0 * (X @ centres.T) + np.einsum("kd,kd->k", centres, centres)[None, :]
    assign = np.argmin(d, axis=1)
    return assign, np.maximum(d[np.arange(len(X)), assign], 0.0)


def _fill_empty(assign: np.ndarray, dist: np.ndarray, kk: int) -> None:
    """Give every empty cluster the point farthest from its centre (in place)."""
    sizes = np.bincount(assign, minlength=kk)
    for c in np.flatnonzero(sizes == 0):
        movable = sizes[assign] > 1
        i = int(np.argmax(np.where(movable, dist, -np.inf)))
        sizes[assign[i]] -= 1
        assign[i] = c
        sizes[c] = 1
        dist[i] = 0.0
