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

from .._prepare import Prepared, argmax_first, beats
from ..options import OptionSpec
from ._common import Picked, cosine_from_parts, pick_counts
from ._sampling import occurrence_rank
from .vrsd import greedy_order

MAX_SUBSETS = 5_000_000
MAX_SUBSETS_OPTION = OptionSpec("max_subsets", "integer", MAX_SUBSETS,
                                "most subsets enumerated; a larger problem is refused", low=1)
OPTIONS = (MAX_SUBSETS_OPTION,)
_CHUNK_CELLS = 1 << 20  # prefix-rows x candidates scored at once


def vrsd_exact(prep: Prepared, k: int, *, max_subsets: int = MAX_SUBSETS) -> list[Picked]:
    """Exact maximiser of cos(sum of selected, query); ties go to the
    lexicographically smallest index set. Raises ValueError if C(n, k) > max_subsets.

    With a per-group cap or a token budget only the feasible subsets (no group
    above the cap, tokens within the budget) compete; under a budget the size
    is the most picks, up to k, that any feasible subset has (``_most_picks``).
    ``info["subsets"]`` counts the feasible subsets of that size.
    """
    MAX_SUBSETS_OPTION.check(max_subsets)
    counts = pick_counts(prep, k)
    out = []
    for b in range(prep.batch):
        items = np.flatnonzero(prep.valid[b])
        m, kk = len(items), int(counts[b])
        tokens = None if prep.tokens is None else prep.tokens[b, items]
        codes = None if prep.group is None or prep.cap is None else prep.group[b, items]
        if tokens is not None and prep.budget is not None:
            kk = _most_picks(tokens, prep.budget, codes, prep.cap, kk)
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
        gram = prep.candidates.gram(b, items)
        qsim = prep.query_dots()[b, items]
        q_norm = float(prep.q_norm[b])
        rules = _Feasible(codes, prep.cap, tokens, prep.budget)
        best, total = _best_subset(gram, qsim, kk, q_norm, rules)
        order, gains = greedy_order(gram[np.ix_(best, best)], qsim[best], q_norm)
        out.append(Picked(items[best[order]], gains, {"subsets": total}))
    return out


def _most_picks(
    tokens: np.ndarray, budget: int, codes: np.ndarray | None, cap: int | None, k: int
) -> int:
    """The largest s <= k such that some s items fit the budget (and the cap).

    The cheapest s-item set under a per-group cap is the first s items taken
    in increasing token order, skipping those whose group is full (the cap
    makes a partition matroid, on which this greedy is optimal)."""
    order = np.argsort(tokens, kind="stable")
    if codes is not None and cap is not None:
        order = order[occurrence_rank(codes[order]) < cap]
    spent = np.cumsum(tokens[order])
    return min(k, int(np.searchsorted(spent, budget, side="right")))


class _Feasible:
    """Which (prefix + j) subsets the cap and the budget allow, for a block of prefixes."""

    def __init__(
        self,
        codes: np.ndarray | None,
        cap: int | None,
        tokens: np.ndarray | None,
        budget: int | None,
    ) -> None:
        self.codes: np.ndarray | None = codes if cap is not None else None
        self.cap = cap
        self.tokens: np.ndarray | None = tokens if budget is not None else None
        self.budget = budget

    def refused(self, P: np.ndarray) -> np.ndarray | None:
        """(c, m) True where prefix row P[r] plus candidate j is infeasible; None if none can be."""
        out = None
        if self.codes is not None and self.cap is not None:
            G = self.codes[P]  # (c, k-1)
            over = ((G[:, :, None] == G[:, None, :]).sum(axis=2) > self.cap).any(axis=1)
            in_prefix = (G[:, :, None] == self.codes[None, None, :]).sum(axis=1)  # (c, m)
            out = over[:, None] | (in_prefix >= self.cap)
        if self.tokens is not None and self.budget is not None:
            spent = self.tokens[P].sum(axis=1)  # (c,)
            heavy = spent[:, None] + self.tokens[None, :] > self.budget
            out = heavy if out is None else out | heavy
        return out


def _best_subset(
    gram: np.ndarray, qsim: np.ndarray, k: int, q_norm: float, rules: _Feasible
) -> tuple[np.ndarray, int]:
    """The best feasible k-subset (lexicographically first among ties) and how
    many feasible k-subsets there are. One k-subset exists at least (the caller
    sized k so)."""
    m = len(qsim)
    diag = np.diag(gram)
    cand = np.arange(m)
    best_val, best_set = -np.inf, None
    feasible = 0
    chunk = max(1, _CHUNK_CELLS // m)
    # k = 1: one empty prefix, so every candidate is scored alone
    prefixes = itertools.combinations(range(m - 1), k - 1) if k > 1 else iter([()])
    while True:
        block = list(itertools.islice(prefixes, chunk))
        if not block:
            break
        P = np.array(block, dtype=np.int64).reshape(len(block), k - 1)  # rows increasing
        pre_q = qsim[P].sum(axis=1)
        pre_sq = gram[P[:, :, None], P[:, None, :]].sum(axis=(1, 2))
        pre_dot = gram[P].sum(axis=1)  # (c, m): prefix-sum . c_j
        score = cosine_from_parts(
            pre_q[:, None] + qsim[None, :], pre_sq[:, None] + 2.0 * pre_dot + diag[None, :], q_norm
        )
        # Only j after the prefix's last element: each subset is seen once, in
        # lexicographic order, so the first maximum is the smallest index set.
        if k > 1:
            score[cand[None, :] <= P[:, -1:]] = -np.inf
        refused = rules.refused(P)
        if refused is not None:
            score[refused] = -np.inf
        feasible += int(np.isfinite(score).sum())
        flat = int(argmax_first(score.ravel()[None, :])[0])
        r, j = divmod(flat, m)
        val = float(score[r, j])
        if val == -np.inf:  # no feasible subset in this block
            continue
        if best_set is None or beats(val, best_val):
            best_val, best_set = val, np.append(P[r], j)
    if best_set is None:
        raise RuntimeError("the exact search found no subset in a feasible block")
    return best_set, feasible
