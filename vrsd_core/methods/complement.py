"""``complement``: the project's default for retrieval-augmented generation.

One idea: take the k candidates that are most likely *together* under a
determinantal point process (Kulesza & Taskar; greedy MAP as in Chen, Zhang &
Zhou 2018) whose quality is each candidate's relevance **in its pool's units**.

* **Quality.** z_i is the candidate's relevance standardised within its pool,
  (rel_i - mean) / std over the pool's candidates (several signals, e.g. the cosine
  and the words' BM25 the adapters add, are fused first by ``vrsd_core.pool_units``,
  whose result is already in these units: standardising it again changes nothing but
  rounding). The kernel is L = diag(w) S diag(w) with w_i = exp(z_i / 2), S the
  candidates' cosines (``Prepared.similarity``). Then det L_Y = exp(sum of z over Y)
  * det S_Y: one standard deviation of relevance is worth one e-fold of the volume the
  set spans, whatever the embedding model's cosine range or the scale of an outside
  ``relevance=`` (a cross-encoder's logits). Each greedy step adds the candidate with
  the largest determinant ratio ``w_j^2 (1 - |projection of c_j on the picks|^2)``:
  relevance times what the candidate says that the picks do not. A restatement of a
  pick adds almost nothing and waits; a distinct passage of the same topic does not.
* **Held back.** ``info["top_k"]`` lists what plain top-k (by the same relevance, the
  same number of picks) would have returned, best first; ``info["held_back"]`` the
  ones of those this did not pick, in that order. Why each was passed over needs the
  texts: the adapters say which restate a kept passage (``vrsd_kit.explain``). Under a
  cap or a budget, only candidates that were still allowed are listed as held back.

* **Profiles.** With ``profiles`` (a second description of each candidate; the adapters
  pass its words' profile), S is the mean of the vectors' and the profiles' cosines
  (``vrsd_core._profiles.with_word_profiles``, ``Prepared.similarity``): two passages
  that point the same way but say different things span more than two that say the
  same.

The greedy is ``dpp``'s (``_determinantal``, with these weights): when every remaining
determinant ratio is numerically zero (k above the kernel's rank, or only copies left)
the rest is filled by relevance, with gain 0, counted in ``info["filled_by_relevance"]``.
``gains`` are the determinant ratios.

Cost: one n x d matrix-vector product per pick but the last (the pick against every
candidate: its kernel row) and O(k n) arithmetic per pick for the Cholesky rows; ties
go to the lower index (the store's order).
"""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared
from ..relevance import standardised
from ._common import Picked
from ._determinantal import greedy_map


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
