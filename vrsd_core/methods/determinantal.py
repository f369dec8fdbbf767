"""The determinantal selection: ``complement`` (the default) and ``dpp``, one greedy loop.

Both take the k candidates most likely *together* under a determinantal point process
(Kulesza & Taskar; greedy MAP as in Chen, Zhang & Zhou, NeurIPS 2018) whose kernel is
L = diag(w) S diag(w): S the similarity between candidates (``Prepared.similarity``:
their cosines, or with profiles the mean of the vectors' and the profiles' cosines) and
w the quality weights. The two methods differ only in w.

**The loop** (``greedy_map``). Each step adds the open candidate j with the largest
determinant ratio

    d_j^2 = det(L_{Y+j}) / det(L_Y) = L_jj - |c_j|^2,

c_j the candidate's row of the incremental Cholesky factor of L_Y. Adding pick p writes
one factor row,

    e_j = (L_jp - <c_j, c_p>) / d_p,    d_j^2 <- d_j^2 - e_j^2,

so a pick costs one matrix-vector product (L's row p) and O(k n) arithmetic. When every
ratio left is numerically zero (below ``RANK_EPS`` of the largest quality: k above the
kernel's rank, or only copies left), the rest is filled by relevance, with gain 0,
counted in ``info["filled_by_relevance"]``. ``gains`` are the determinant ratios. Ties
go to the lower index (the store's order).

**``complement``**, the project's default for retrieval-augmented generation: the
weights read each candidate's relevance **in its pool's units**.

* *Quality.* z_i is the candidate's relevance standardised within its pool,
  (rel_i - mean) / std over the pool's candidates (several signals, e.g. the cosine
  and the words' BM25 the adapters add, are fused first by ``vrsd_core.pool_units``,
  whose result is already in these units: standardising it again changes nothing but
  rounding), and w_i = exp(z_i / 2). Then det L_Y = exp(sum of z over Y) * det S_Y:
  one standard deviation of relevance is worth one e-fold of the volume the set spans,
  whatever the embedding model's cosine range or the scale of an outside
  ``relevance=`` (a cross-encoder's logits). Each greedy step adds the candidate with
  the largest ``w_j^2 (1 - |projection of c_j on the picks|^2)``: relevance times what
  the candidate says that the picks do not. A restatement of a pick adds almost
  nothing and waits; a distinct passage of the same topic does not.
* *Held back.* ``info["top_k"]`` lists what plain top-k (by the same relevance, the
  same number of picks) would have returned, best first; ``info["held_back"]`` the
  ones of those this did not pick, in that order. Why each was passed over needs the
  texts: the adapters say which restate a kept passage (``vrsd_kit.entries``). Under a
  cap or a budget, only candidates that were still allowed are listed as held back.
* *Profiles.* With ``profiles`` (a second description of each candidate; the adapters
  pass its words' profile), S is the mean of the vectors' and the profiles' cosines
  (``vrsd_core._prepare.with_word_profiles``): two passages that point the same way but
  say different things span more than two that say the same.

**``dpp``**: the weights read the relevance *as given*, with a trade-off ``theta``
(Chen, Zhang & Zhou's formulation): w_i = exp(alpha * rel_i) with
alpha = theta / (2 (1 - theta)), so that log det L_Y = theta/(1-theta) * sum_{i in Y}
rel_i + log det S_Y: ``theta`` trades relevance (1) against diversity (0). On a raw
cosine (unless ``relevance=`` is given) the same ``theta`` means a different balance on
another model. Use it to reproduce Chen et al.'s k-DPP or to tune ``theta`` on one
model and one relevance scale; use ``complement`` otherwise.
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared, argmax_first
from ..options import OptionSpec
from ..relevance import standardised
from ._common import Picked, pick_counts, split_rows, start_constraints, step_active, taken_counts

# A determinant ratio below this fraction of the largest quality is numerical zero.
RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def greedy_map(prep: Prepared, k: int, quality: np.ndarray) -> tuple[list[Picked], np.ndarray]:
    """The greedy picks for quality weights ``quality`` (B, n; 0 at padding): per query a
    ``Picked`` (gains the determinant ratios, 0 for fills), and the (B, n) candidates
    still open after the run (real, not picked, not closed by a cap or budget).

    A candidate that is closed (padding, picked, or shut out by a cap or budget) has
    residual variance and relevance -inf, so neither score can choose it."""
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    B, n = prep.batch, prep.n
    rows = np.arange(B)
    similarity = prep.similarity
    # d_j^2 before any pick: L_jj = w_j^2 S_jj
    residual_variance = quality * quality * similarity.self_similarity
    numerical_zero = RANK_EPS[prep.X.dtype] * residual_variance.max(axis=1, initial=0.0)
    cons = start_constraints(prep)
    open_at_start = prep.valid if cons is None else cons.open
    residual_variance = np.where(open_at_start, residual_variance, -np.inf)
    relevance = np.where(open_at_start, prep.rel, -np.inf)  # what fills rank by
    cholesky_rows = np.zeros((B, K, n))
    exhausted = np.zeros(B, dtype=bool)
    filled = np.zeros(B, dtype=np.int64)
    picks = np.zeros((B, K), dtype=np.int64)
    gains = np.zeros((B, K))
    for t in range(K):
        exhausted |= residual_variance.max(axis=1, initial=-np.inf) <= numerical_zero
        score = np.where(exhausted[:, None], relevance, residual_variance)
        pick = argmax_first(score, prep.tie_rtol)
        active = step_active(t, counts, cons)
        pick_variance = residual_variance[rows, pick]
        picks[:, t] = pick
        gains[:, t] = np.where(exhausted, 0.0, pick_variance)
        filled += exhausted & active
        residual_variance[rows, pick] = relevance[rows, pick] = -np.inf
        if cons is not None and (blocked := cons.add(pick, active)) is not None:
            # a full group's, or too long for the tokens left
            residual_variance[blocked] = relevance[blocked] = -np.inf
        if t == K - 1 or exhausted.all():
            continue
        kernel_row = quality * quality[rows, pick][:, None] * similarity.to(pick)  # L[:, p]
        pick_length = np.sqrt(np.maximum(pick_variance, numerical_zero))
        pick_length[pick_length == 0] = 1.0  # a query without real candidates
        shared = np.einsum("bt,btn->bn", cholesky_rows[rows, :t, pick], cholesky_rows[:, :t, :])
        update_component = (kernel_row - shared) / pick_length[:, None]
        cholesky_rows[:, t] = update_component
        residual_variance -= update_component * update_component
    result = split_rows(picks, gains, taken_counts(counts, cons))
    for b, picked in enumerate(result):
        picked.info["filled_by_relevance"] = int(filled[b])
    return result, relevance > -np.inf


def complement(prep: Prepared, k: int) -> list[Picked]:
    """The default selection; ``gains`` are determinant ratios (0 for fills)."""
    in_pool_units = standardised(prep.rel, None if prep.all_real else prep.valid)
    quality = np.where(prep.valid, np.exp(in_pool_units / 2.0), 0.0)
    picked, open_ = greedy_map(prep, k, quality)
    all_open = prep.all_real and not prep.constrained  # every candidate open at the start
    for b, p in enumerate(picked):
        p.info["top_k"], p.info["held_back"] = _held_back(prep.rel[b], open_[b], p.indices,
                                                          all_open)
    return picked


def _held_back(rel: np.ndarray, open_: np.ndarray, picked: np.ndarray, all_open: bool
               ) -> tuple[list[int], list[int]]:
    """(plain top-k by ``rel`` among the picks and the candidates still open, as many as
    the picks, best first; those of them still open and not picked, in that order).
    ``all_open``: every candidate was open before the first pick."""
    if not len(picked):
        return [], []
    if all_open:
        order = (-rel).argsort(kind="stable")[: len(picked)]
    else:
        pool = open_.copy()
        pool[picked] = True
        order = np.argsort(np.where(pool, -rel, np.inf), kind="stable")[: len(picked)]
    return order.tolist(), order[open_[order]].tolist()


THETA = OptionSpec("theta", "unit", 0.5, "relevance (near 1) against diversity (0), on the "
                   "relevance's own scale", high_open=True)
DPP_OPTIONS = (THETA,)  # complement has no options of its own


def dpp(prep: Prepared, k: int, *, theta: float = 0.5) -> list[Picked]:
    """k-DPP greedy MAP; ``gains`` are d_j^2 (the determinant ratio), 0 for fills."""
    th = THETA.check(theta)
    alpha = th / (2.0 * (1.0 - th))
    # Shift by each row's best relevance: scales det L by a constant, so the
    # argmax is unchanged, and exp cannot overflow.
    best = np.where(prep.valid, prep.rel, -np.inf).max(axis=1, initial=-np.inf, keepdims=True)
    best = np.where(np.isfinite(best), best, 0.0)
    quality = np.where(prep.valid, np.exp(alpha * (prep.rel - best)), 0.0)
    return greedy_map(prep, k, quality)[0]
