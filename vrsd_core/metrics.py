"""Evaluation metrics: the VRSD paper's (Gao, Deng & Zhang, arXiv 2407.04573, Tables 1
and 3: Sim., Div., win rate) and evidence coverage for multi-hop questions.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._prepare import as_float_array


def _rows(vectors: ArrayLike, name: str, normalize: bool) -> NDArray[np.float64]:
    v = as_float_array(vectors, name).astype(np.float64)
    if v.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (k, d), got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    if normalize and len(v):
        norms = np.linalg.norm(v, axis=1)
        if (norms == 0).any():
            raise ValueError(f"{name}: contains a zero vector (cosine is undefined)")
        v = v / norms[:, None]
    return v


def sum_vector_similarity(query: ArrayLike, vectors: ArrayLike, *, normalize: bool = True) -> float:
    """Sim.: cos(sum of the selected vectors, query). 0.0 for no vectors.

    With ``normalize`` (the paper's setting for unit-length sentence embeddings)
    each vector is L2-normalised before summing.

    >>> round(sum_vector_similarity([1, 0], [[1, 0], [0, 1]]), 4)
    0.7071
    """
    v = _rows(vectors, "vectors", normalize)
    q = as_float_array(query, "query").astype(np.float64)
    if q.ndim != 1 or (len(v) and q.shape[0] != v.shape[1]):
        raise ValueError(f"query: expected a vector of dimension {v.shape[1] if len(v) else 'd'}")
    qn = np.linalg.norm(q)
    if qn == 0 or not np.isfinite(qn):
        raise ValueError("query: zero or non-finite vector")
    if len(v) == 0:
        return 0.0
    s = v.sum(axis=0)
    sn = np.linalg.norm(s)
    return 0.0 if sn == 0 else float(s @ q / (sn * qn))


def intra_list_similarity(vectors: ArrayLike, *, normalize: bool = True) -> float:
    """Div.: mean pairwise cosine over the i < j pairs (lower is more diverse).

    0.0 when there are fewer than two vectors (no pair to be alike).

    >>> intra_list_similarity([[1, 0], [0, 1]]), intra_list_similarity([[1, 0], [2, 0]])
    (0.0, 1.0)
    """
    v = _rows(vectors, "vectors", normalize)
    m = len(v)
    if m < 2:
        return 0.0
    g = v @ v.T
    return float((g.sum() - np.trace(g)) / (m * (m - 1)))


def _paired(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = as_float_array(a, "a").astype(np.float64).ravel()
    y = as_float_array(b, "b").astype(np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"b: {y.size} values for {x.size} in a (one per query in both)")
    if x.size == 0:
        raise ValueError("a: no queries")
    return x, y


def win_rate(a: ArrayLike, b: ArrayLike, *, lower_is_better: bool = False) -> float:
    """Share of queries where method a strictly beats method b (paper, Eq. 8/9).

    For Sim. higher wins; pass ``lower_is_better=True`` for Div.

    >>> round(win_rate([0.9, 0.5, 0.7], [0.8, 0.6, 0.7]), 4)  # a tie is not a win
    0.3333
    """
    x, y = _paired(a, b)
    wins = x < y if lower_is_better else x > y
    return float(wins.mean())


def max_diff(a: ArrayLike, b: ArrayLike) -> float:
    """Largest per-query advantage of a over b: max_i (a_i - b_i).

    Negative when a never beats b. The README of the evaluation data names no
    formula for it; this is the one the project reports.
    """
    x, y = _paired(a, b)
    return float((x - y).max())


def _evidence_sets(retrieved: Iterable[Hashable], gold: Iterable[Hashable]
                   ) -> tuple[set[Hashable], set[Hashable]]:
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("gold: a question needs at least one gold passage")
    return set(retrieved), gold_set


def evidence_recall(retrieved: Iterable[Hashable], gold: Iterable[Hashable]) -> float:
    """Share of the ``gold`` passage ids that are among the ``retrieved`` ids.

    The evidence-coverage measure: for a multi-hop question whose answer needs
    every gold passage, how much of that evidence the k retrieved passages hold.
    """
    found, gold_set = _evidence_sets(retrieved, gold)
    return len(found & gold_set) / len(gold_set)


def all_evidence(retrieved: Iterable[Hashable], gold: Iterable[Hashable]) -> bool:
    """Whether every ``gold`` passage id is among the ``retrieved`` ids (averaged over
    questions: the all-evidence rate)."""
    found, gold_set = _evidence_sets(retrieved, gold)
    return gold_set <= found
