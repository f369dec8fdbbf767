"""``vrsd_exact``: the exact optimum of the VRSD objective by exhaustive search.

VRSD is NP-complete, so this enumerates every k-subset: it exists to certify
how far the heuristics are from optimal on small problems, and refuses past
``max_subsets`` subsets. Enumeration is vectorised over (k-1)-prefixes: for a
chunk of prefixes, the objective of prefix + j is computed for every j at once
from the candidates' Gram matrix.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._checks import check_int
from .._kernels import TIE_RTOL, argmax_first, cosine_from_parts
from .._prepare import Prepared
from ._common import Picked, pick_counts
from .vrsd import greedy_order

MAX_SUBSETS = 5_000_000
_CHUNK_CELLS = 1 << 20  # prefix-rows x candidates scored at once


def vrsd_exact(prep: Prepared, k: int, *, max_subsets: int = MAX_SUBSETS) -> list[Picked]:
    """Exact maximiser of cos(sum of selected, query); ties go to the
    lexicographically smallest index set. Raises ValueError if C(n, k) > max_subsets.

    With a per-group cap only the feasible subsets (no group above the cap)
    compete; ``info["subsets"]`` counts those.
    """
    check_int(max_subsets, "max_subsets", low=1)
    counts = pick_counts(prep, k)
    out = []
    for b in range(prep.batch):
        items = np.flatnonzero(prep.valid[b])
        m, kk = len(items), int(counts[b])
        total = math.comb(m, kk)
        if total > max_subsets:
            raise ValueError(
                f"k: vrsd_exact would enumerate C({m}, {kk}) = {total:,} subsets, more than "
                f"max_subsets={max_subsets:,}; use method='vrsd' with refine='swap' for "
                "problems this size"
            )
        if kk == 0:
            out.append(Picked(np.zeros(0, np.int64), np.zeros(0), {"subsets": 0}))
            continue
        gram = prep.gram(b, items)
        qsim = prep.qsim[b, items]
        q_norm = float(prep.q_norm[b])
        codes = None
        if prep.group is not None and prep.cap is not None:
            codes = prep.group[b, items]
            total = _feasible_subsets(codes, prep.cap, kk)
        if kk < m:
            best = _best_subset(gram, qsim, kk, q_norm, codes, prep.cap)
        else:
            best = np.arange(m)
        order, gains = greedy_order(gram[np.ix_(best, best)], qsim[best], q_norm)
        out.append(Picked(items[best[order]], gains, {"subsets": total}))
    return out


def _feasible_subsets(codes: np.ndarray, cap: int, k: int) -> int:
    """How many k-subsets put at most ``cap`` items in any group: the coefficient
    of x^k in prod over groups of sum_{i <= cap} C(size, i) x^i."""
    poly = [1] + [0] * k
    for size in np.bincount(codes).tolist():
        if not size:
            continue
        terms = [math.comb(size, i) for i in range(min(cap, size) + 1)]
        poly = [
            sum(poly[d - i] * terms[i] for i in range(min(d, len(terms) - 1) + 1))
            for d in range(k + 1)
        ]
    return poly[k]


def _best_subset(
    gram: np.ndarray,
    qsim: np.ndarray,
    k: int,
    q_norm: float,
    codes: np.ndarray | None = None,
    cap: int | None = None,
) -> np.ndarray:
    m = len(qsim)
    diag = np.diag(gram)
    if k == 1:
        return argmax_first(cosine_from_parts(qsim, diag, q_norm)[None, :])
    cand = np.arange(m)
    best_val, best_set = -np.inf, None
    chunk = max(1, _CHUNK_CELLS // m)
    prefixes = itertools.combinations(range(m - 1), k - 1)
    tol = TIE_RTOL[np.dtype(np.float64)]
    while True:
        block = list(itertools.islice(prefixes, chunk))
        if not block:
            break
        P = np.array(block, dtype=np.int64)  # (c, k-1), each row increasing
        pre_q = qsim[P].sum(axis=1)
        pre_sq = gram[P[:, :, None], P[:, None, :]].sum(axis=(1, 2))
        pre_dot = gram[P].sum(axis=1)  # (c, m): prefix-sum . c_j
        score = cosine_from_parts(
            pre_q[:, None] + qsim[None, :], pre_sq[:, None] + 2.0 * pre_dot + diag[None, :], q_norm
        )
        # Only j after the prefix's last element: each subset is seen once, in
        # lexicographic order, so the first maximum is the smallest index set.
        score[cand[None, :] <= P[:, -1:]] = -np.inf
        if codes is not None and cap is not None:
            # Only feasible subsets: no group over the cap in the prefix, and j's
            # group with room left in it.
            G = codes[P]  # (c, k-1)
            over = ((G[:, :, None] == G[:, None, :]).sum(axis=2) > cap).any(axis=1)
            in_prefix = (G[:, :, None] == codes[None, None, :]).sum(axis=1)  # (c, m)
            score[over[:, None] | (in_prefix >= cap)] = -np.inf
        flat = int(argmax_first(score.ravel()[None, :])[0])
        r, j = divmod(flat, m)
        val = float(score[r, j])
        if val == -np.inf:  # no feasible subset in this block
            continue
        if val > best_val + tol * max(1.0, abs(best_val)) or best_set is None:
            best_val, best_set = val, np.append(P[r], j)
    assert best_set is not None
    return best_set
