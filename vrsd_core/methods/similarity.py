"""``similarity``: plain top-k by relevance (the baseline every store returns)."""

from __future__ import annotations

import numpy as np

from .._prepare import Prepared
from ._common import Picked, pick_counts, split_rows


def similarity(prep: Prepared, k: int) -> list[Picked]:
    """Top-k by relevance; equal relevance keeps the store's order (stable sort)."""
    counts = pick_counts(prep, k)
    K = int(counts.max(initial=0))
    scores = np.where(prep.valid, prep.rel, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    gains = np.take_along_axis(prep.rel, order, axis=1)
    return split_rows(order, gains, counts)
