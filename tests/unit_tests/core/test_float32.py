"""float32 input: the greedy's running quantities are float64, so its picks equal
a float64 run on the same values, except at (near-)exact ties."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import select, select_batch


def step_scores(method: str, q: np.ndarray, C: np.ndarray, chosen: list[int]) -> np.ndarray:
    """Every candidate's float64 score for the next pick after ``chosen``, by the
    direct formula of each method (picked candidates: -inf)."""
    qn = q / np.linalg.norm(q)
    Cn = C / np.linalg.norm(C, axis=1)[:, None]
    rel = Cn @ qn
    if method == "vrsd":
        s = Cn[chosen].sum(axis=0) if chosen else np.zeros_like(qn)
        T = s[None, :] + Cn
        score = (T @ qn) / np.linalg.norm(T, axis=1)
    elif method == "mmr":  # lambda_mult = 0.5
        score = rel.copy() if not chosen else 0.5 * rel - 0.5 * (Cn @ Cn[chosen].T).max(axis=1)
    else:  # dpp, theta = 0.5: d_j^2 = L_jj - L_jY L_Y^-1 L_Yj
        w = np.exp(0.5 * (rel - rel.max()))
        L = np.outer(w, w) * (Cn @ Cn.T)
        score = np.diag(L).copy()
        if chosen:
            LjY = L[:, chosen]
            score -= np.einsum("ij,ij->i", LjY, np.linalg.solve(L[np.ix_(chosen, chosen)], LjY.T).T)
    score[chosen] = -np.inf
    return score


def has_near_tie(method: str, q: np.ndarray, C: np.ndarray, picks: list[int]) -> bool:
    """Whether the top two scores at some step of ``picks`` are within 1e-9 relative."""
    for t in range(len(picks)):
        top2 = np.sort(step_scores(method, q, C, picks[:t]))[::-1][:2]
        if len(top2) == 2 and np.isfinite(top2[1]):
            if top2[0] - top2[1] <= 1e-9 * max(1.0, abs(top2[0])):
                return True
    return False


def embedding_like(rng: np.random.Generator, n: int, d: int, spread: float):
    """float32 vectors around a shared direction, as sentence embeddings are."""
    base = rng.standard_normal(d)
    C = (base + spread * rng.standard_normal((n, d))).astype(np.float32)
    q = (base + rng.standard_normal(d)).astype(np.float32)
    return q, C


@pytest.mark.parametrize("method", ["vrsd", "mmr", "dpp"])
def test_float32_picks_equal_a_float64_run_on_the_same_values(method):
    rng = np.random.default_rng(2024)
    compared = skipped = 0
    for _ in range(40):
        n, k = int(rng.integers(50, 201)), int(rng.integers(1, 11))
        q, C = embedding_like(rng, n, 384, float(rng.choice([0.3, 1.0, 3.0])))
        q64, C64 = q.astype(np.float64), C.astype(np.float64)
        want = select(q64, C64, k, method=method).indices.tolist()
        if has_near_tie(method, q64, C64, want):
            skipped += 1
            continue
        got = select(q, C, k, method=method).indices.tolist()
        assert got == want, (n, k)
        compared += 1
    assert compared >= 30 and skipped <= 10


@pytest.mark.parametrize("method", ["vrsd", "mmr", "dpp"])
def test_float32_batch_equals_the_float64_batch(method):
    rng = np.random.default_rng(5)
    Q = rng.standard_normal((6, 384)).astype(np.float32)
    X = (Q[:, None, :] + rng.standard_normal((6, 120, 384))).astype(np.float32)
    got = select_batch_indices(Q, X, 8, method)
    want = select_batch_indices(Q.astype(np.float64), X.astype(np.float64), 8, method)
    for b in range(len(Q)):
        if not has_near_tie(method, Q[b].astype(np.float64), X[b].astype(np.float64), want[b]):
            assert got[b] == want[b]


def select_batch_indices(Q, X, k, method):
    return [s.indices.tolist() for s in select_batch(Q, X, k, method=method)]


@pytest.mark.parametrize("d", [1536, 4096])
def test_float32_twins_keep_the_store_order_at_large_dimensions(d):
    """The float32 tie tolerance covers the BLAS rounding between identical rows
    also for wide embeddings (the reason it is not the float64 one)."""
    rng = np.random.default_rng(d)
    for _ in range(15):
        n = int(rng.integers(5, 200))
        C = rng.normal(size=(n, d)).astype(np.float32)
        q = rng.normal(size=d).astype(np.float32)
        i, j = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        C[j] = C[i]
        for method in ("similarity", "vrsd"):
            order = select(q, C, n, method=method).indices.tolist()
            assert order.index(i) < order.index(j), (method, n, i, j)
