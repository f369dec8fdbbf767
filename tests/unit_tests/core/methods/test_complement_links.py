"""The default's links between candidates (``vrsd_core.Links``, ``complement(links=...)``,
``vrsd_core/methods/complement.py``):
without links the loop gives exactly the picks of the loop before links (a copy of it
here); with links, the picks of a direct one-query reference of the chain form."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import Links, select, select_batch
from vrsd_core._prepare import Given, argmax_first, prepare, standardised
from vrsd_core.methods import _common
from vrsd_core.methods.complement import LIFT_SD

RANK_EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}


def loop_before_links(query, candidates, k, relevance, dtype):
    """The default's greedy loop as it was before links (Cholesky of L = diag(w) S diag(w),
    scores d^2), one query, no cap or budget: (picks, gains)."""
    prep = prepare(query, candidates, batched=False, given=Given(relevance))
    z = standardised(prep.rel, None)[0]
    w = np.exp(z / 2.0)
    X = candidates.astype(np.float64) / np.linalg.norm(candidates.astype(np.float64), axis=1,
                                                        keepdims=True)
    n = len(X)
    d2 = w * w * 1.0
    zero = RANK_EPS[np.dtype(dtype)] * d2.max()
    rel = prep.rel[0].copy()
    rows = np.zeros((k, n))
    picks, gains, exhausted = [], [], False
    for t in range(k):
        exhausted = exhausted or d2.max() <= zero
        p = int(argmax_first((rel if exhausted else d2)[None], prep.tie_rtol)[0])
        picks.append(p)
        gains.append(0.0 if exhausted else d2[p])
        length = np.sqrt(max(d2[p], zero))
        e = (w * w[p] * (X @ X[p]) - rows[:t, p] @ rows[:t]) / length
        rows[t] = e
        d2 = d2 - e * e
        d2[p] = rel[p] = -np.inf
        d2[picks] = -np.inf
    return np.array(picks), np.array(gains)


def random_pool(seed, n=20, d=8, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(dtype)
    if seed % 3 == 0:  # restatements
        x[1] = x[0] + 0.01 * rng.standard_normal(d)
    return rng.standard_normal(d).astype(dtype), x, rng.standard_normal(n)


def random_links(seed, n):
    rng = np.random.default_rng(seed + 1000)
    g = rng.random((n, n)) * (rng.random((n, n)) < 0.3)
    g = (g + g.T) / 2
    gate = rng.random((n, n)) < 0.5
    gate = gate | gate.T
    return Links(g, gate, float(rng.uniform(0.8, 2.0)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(25))
def test_without_links_the_picks_are_those_of_the_loop_before_links(seed, dtype):
    q, x, rel = random_pool(seed, dtype=dtype)
    for k in (1, 5, 20):
        want, gains = loop_before_links(q, x, k, rel, dtype)
        got = select(q, x, k, relevance=rel)
        assert got.indices.tolist() == want.tolist()
        np.testing.assert_allclose(got.gains, gains, rtol=1e-5 if dtype == np.float32 else 1e-9,
                                   atol=1e-12)
        assert "linked_to" not in got.info


def reference(query, x, k, relevance, links):
    """The chain form for one query, directly: S the cosines, the quality after each pick
    z(spread z0 + lift), the score exp(q) times the residual computed from S's inverse."""
    X = x / np.linalg.norm(x, axis=1, keepdims=True)
    S = X @ X.T
    n = len(X)
    z0 = standardised(np.asarray(relevance, dtype=np.float64)[None], None)[0]
    carry = np.exp(z0 - z0.max())
    G = np.asarray(links.cosine, dtype=np.float64)
    F = G * (1 - G) * np.clip(1 - S, 0, 1)
    L, Lg, via = np.zeros(n), np.zeros(n), np.full(n, -1)
    q = z0
    picks, linked = [], []
    for t in range(k):
        if picks:
            Y = np.array(picks)
            inv = np.linalg.inv(S[np.ix_(Y, Y)])
            resid = 1.0 - np.einsum("jy,yz,jz->j", S[:, Y], inv, S[:, Y])
        else:
            resid = np.ones(n)
        score = np.exp(q) * resid
        plain = np.exp(z0) * resid
        score[picks] = plain[picks] = -np.inf
        p = int(np.argmax(score >= score.max() - 1e-9))
        lifted = q[p] > z0[p] + 1e-9
        by_plain = plain[p] >= plain.max() - 1e-9
        linked.append(int(via[p]) if lifted and via[p] >= 0 and not by_plain else -1)
        picks.append(p)
        strength = F[:, p] * carry[p]
        L = np.maximum(L, strength)
        gs = np.where(links.beyond_chance[:, p], strength, 0.0)
        via = np.where(gs > Lg, t, via)
        Lg = np.maximum(Lg, gs)
        lift = np.maximum(0.0, (Lg - L.mean()) / L.std() - LIFT_SD) if L.std() > 1e-12 \
            else np.zeros(n)
        lift = np.where(Lg > 0, lift, 0.0)
        q = standardised((links.spread * z0 + lift)[None], None)[0] if (lift > 0).any() else z0
    return picks, linked


@pytest.mark.parametrize("seed", range(30))
def test_links_give_the_picks_of_the_direct_reference(seed):
    q, x, rel = random_pool(seed)
    links = random_links(seed, len(x))
    got = select(q, x, 8, relevance=rel, links=links)
    picks, linked = reference(q, x, 8, rel, links)
    assert got.indices.tolist() == picks
    assert got.info["linked_to"] == linked
    assert got.params["links"] == "given"


def test_a_link_brings_in_the_second_hop():
    # 0 answers the question; 2 is far from it, but shares 0's words outside it
    x = np.array([[1.0, 0.1, 0.0], [0.95, 0.0, 0.3], [0.2, 1.0, 0.2], [0.9, 0.0, 0.45],
                  [0.9, -0.2, 0.4], [0.92, 0.1, -0.4], [0.9, 0.3, 0.3], [0.85, -0.3, -0.3]])
    query = np.array([1.0, 0.0, 0.0])
    rel = np.array([3.0, 2.0, 0.0, 1.5, 1.4, 1.45, 1.3, 1.2])
    n = len(x)
    g = np.zeros((n, n))
    g[0, 2] = g[2, 0] = 0.5
    without = select(query, x, 3, relevance=rel)
    got = select(query, x, 3, relevance=rel, links=Links(g, g > 0, 1.5))
    assert without.indices.tolist() == [0, 4, 7]
    assert got.indices.tolist() == [0, 2, 1]
    assert got.info["linked_to"] == [-1, 0, -1]  # 2 came by its link to the first pick
    # held back: still what top-k by the relevance would have returned, not picked
    assert got.info["top_k"] == without.info["top_k"] == [0, 1, 3]
    assert got.info["held_back"] == [3]
    # the same pair below chance lifts nothing
    gated_off = select(query, x, 3, relevance=rel, links=Links(g, np.zeros((n, n), bool), 1.5))
    assert gated_off.indices.tolist() == without.indices.tolist()
    assert gated_off.info["linked_to"] == [-1, -1, -1]


@pytest.mark.parametrize("seed", range(5))
def test_links_that_are_all_zero_change_nothing(seed):
    q, x, rel = random_pool(seed)
    n = len(x)
    got = select(q, x, 10, relevance=rel, links=Links(np.zeros((n, n)), np.ones((n, n), bool)))
    assert got.indices.tolist() == select(q, x, 10, relevance=rel).indices.tolist()
    assert got.info["linked_to"] == [-1] * 10


def test_a_batch_is_its_queries_also_in_chunks_and_under_a_budget(monkeypatch):
    pools = [random_pool(s) for s in range(7)]
    queries = np.stack([p[0] for p in pools])
    x = np.stack([p[1] for p in pools])
    rel = np.stack([p[2] for p in pools])
    each = [random_links(s, x.shape[1]) for s in range(7)]
    links = Links(np.stack([e.cosine for e in each]), np.stack([e.beyond_chance for e in each]),
                  np.array([e.spread for e in each]))
    tokens = np.random.default_rng(0).integers(1, 9, size=rel.shape)
    for budget in ({}, {"max_tokens": 25, "token_counts": tokens}):
        whole = select_batch(queries, x, 6, relevance=rel, links=links, **budget)
        monkeypatch.setattr(_common, "CHUNK_BYTES", x[0].nbytes * 2)  # chunks of 2 queries
        chunked = select_batch(queries, x, 6, relevance=rel, links=links, **budget)
        monkeypatch.undo()
        for b in range(7):
            one = select(queries[b], x[b], 6, relevance=rel[b], links=each[b],
                         **({} if not budget else {"max_tokens": 25, "token_counts": tokens[b]}))
            for run in (whole[b], chunked[b]):
                assert run.indices.tolist() == one.indices.tolist()
                assert run.info["linked_to"] == one.info["linked_to"]


def test_bad_links_are_refused_naming_them_and_nothing_is_written():
    q, x, rel = random_pool(1)
    n = len(x)
    good = random_links(1, n)
    before = good.cosine.copy()
    select(q, x, 4, relevance=rel, links=good)
    np.testing.assert_array_equal(good.cosine, before)
    cases = [
        ("links: expected vrsd_core.Links", good.cosine),
        ("links.cosine: expected shape", Links(good.cosine[:3], good.beyond_chance)),
        ("links.cosine: expected values in", Links(good.cosine * 3, good.beyond_chance)),
        ("links.cosine: contains NaN", Links(np.full((n, n), np.nan), good.beyond_chance)),
        ("links.beyond_chance: expected booleans", Links(good.cosine, good.cosine)),
        ("links.spread: expected a standard deviation", Links(good.cosine, good.beyond_chance,
                                                              -1.0)),
        ("links.spread: expected a number", Links(good.cosine, good.beyond_chance, [1.0, 2.0])),
    ]
    for message, links in cases:
        with pytest.raises(ValueError, match=f"^{message}"):
            select(q, x, 4, relevance=rel, links=links)
    with pytest.raises(ValueError, match="^links: not an option of method 'mmr'"):
        select(q, x, 4, method="mmr", links=good)
