"""vrsd_core.metrics against the direct formulas of the paper's protocol."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.helpers.approx import approx_scores
from vrsd_core import metrics, select


def direct_sum_vector_similarity(q, vecs, normalize=True):
    rows = [np.asarray(v, float) for v in vecs]
    if normalize:
        rows = [v / math.sqrt(sum(x * x for x in v)) for v in rows]
    s = [sum(col) for col in zip(*rows, strict=True)]
    num = sum(a * b for a, b in zip(s, q, strict=True))
    s_len = math.sqrt(sum(a * a for a in s))
    if s_len == 0:  # e.g. two opposite vectors in one dimension: no direction
        return 0.0
    return num / (s_len * math.sqrt(sum(b * b for b in q)))


def direct_intra_list_similarity(vecs):
    pairs = list(itertools.combinations(vecs, 2))
    cos = [float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v))) for u, v in pairs]
    return sum(cos) / len(cos)


def test_sum_vector_similarity_matches_the_formula():
    rng = np.random.default_rng(0)
    for _ in range(200):
        d, m = int(rng.integers(1, 10)), int(rng.integers(1, 8))
        q, V = rng.standard_normal(d), rng.standard_normal((m, d)) * rng.uniform(0.1, 5, (m, 1))
        got = metrics.sum_vector_similarity(q, V)
        assert got == approx_scores(direct_sum_vector_similarity(q, V))
        raw = metrics.sum_vector_similarity(q, V, normalize=False)
        assert raw == approx_scores(direct_sum_vector_similarity(q, V, False))


def test_sum_vector_similarity_is_the_selection_objective():
    rng = np.random.default_rng(1)
    C, q = rng.standard_normal((30, 12)), rng.standard_normal(12)
    for method in ("vrsd", "mmr", "dpp", "similarity"):
        sel = select(q, C, 6, method=method)
        assert sel.objective == pytest.approx(metrics.sum_vector_similarity(q, C[sel.indices]))


def test_sum_vector_similarity_edges():
    q = np.array([1.0, 0.0])
    assert metrics.sum_vector_similarity(q, np.zeros((0, 2))) == 0.0
    # Opposite vectors sum to zero: no direction, similarity 0.
    assert metrics.sum_vector_similarity(q, [[0.0, 1.0], [0.0, -1.0]]) == 0.0
    assert metrics.sum_vector_similarity(q, [[2.0, 0.0]]) == pytest.approx(1.0)
    for bad_q in ([0.0, 0.0], [np.nan, 1.0], [1.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match="^query"):
            metrics.sum_vector_similarity(bad_q, [[1.0, 0.0]])
    with pytest.raises(ValueError, match="^vectors"):
        metrics.sum_vector_similarity(q, [[0.0, 0.0]])
    with pytest.raises(ValueError, match="^vectors"):
        metrics.sum_vector_similarity(q, [1.0, 0.0])
    with pytest.raises(ValueError, match="^vectors"):
        metrics.sum_vector_similarity(q, [[np.inf, 0.0]])


def test_intra_list_similarity_matches_the_formula():
    rng = np.random.default_rng(2)
    for _ in range(200):
        d, m = int(rng.integers(1, 10)), int(rng.integers(2, 9))
        V = rng.standard_normal((m, d))
        got = metrics.intra_list_similarity(V)
        assert got == approx_scores(direct_intra_list_similarity(V))


def test_intra_list_similarity_edges():
    assert metrics.intra_list_similarity(np.zeros((0, 3))) == 0.0
    assert metrics.intra_list_similarity([[1.0, 2.0]]) == 0.0
    assert metrics.intra_list_similarity(np.eye(4)) == 0.0
    assert metrics.intra_list_similarity([[1.0, 1.0], [3.0, 3.0], [2.0, 2.0]]) == pytest.approx(1.0)
    assert metrics.intra_list_similarity([[1.0, 0.0], [-1.0, 0.0]]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="^vectors"):
        metrics.intra_list_similarity([[1.0, 0.0], [0.0, 0.0]])


def test_win_rate_and_max_diff_match_the_formulas():
    rng = np.random.default_rng(3)
    for _ in range(100):
        m = int(rng.integers(1, 30))
        a, b = np.round(rng.uniform(0, 1, m), 1), np.round(rng.uniform(0, 1, m), 1)  # with ties
        pairs = list(zip(a, b, strict=True))
        assert metrics.win_rate(a, b) == pytest.approx(sum(x > y for x, y in pairs) / m)
        assert metrics.win_rate(a, b, lower_is_better=True) == pytest.approx(
            sum(x < y for x, y in pairs) / m)
        assert metrics.max_diff(a, b) == pytest.approx(max(x - y for x, y in pairs))


def test_win_rate_and_max_diff_edges():
    assert metrics.win_rate([0.5, 0.5], [0.5, 0.5]) == 0.0  # ties are no wins
    assert metrics.max_diff([0.1, 0.2], [0.3, 0.4]) == pytest.approx(-0.2)
    with pytest.raises(ValueError, match="^b"):
        metrics.win_rate([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="^a"):
        metrics.max_diff([], [])
