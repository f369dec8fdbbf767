"""``complement``, the default: a direct reference (determinants computed outright),
hand-built geometry with an obvious answer, batch equals singles, outside relevance,
what it holds back, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_core import DEFAULT_METHOD, metrics, pool_units, select, select_batch

FLOOR = 1e-9  # the method's numerical zero for float64, relative to the largest quality


def unit(x):
    x = np.asarray(x, float)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def fused(relevance):
    """What the caller passes ``select``: one row as it is, several fused by pool_units."""
    if relevance is None or np.ndim(relevance) == 1:
        return relevance
    return pool_units(relevance)


def reference(q, C, k, relevance=None, groups=None, max_per_group=None, profiles=None):
    """The method written out: z-scores (several relevance signals: the z-scores of the
    sum of each one's, as ``pool_units`` fuses them), the kernel
    L = diag(e^(z/2)) S diag(e^(z/2)), each step's determinant ratio
    det(L[Y+j]) / det(L[Y]) computed outright, then the relevance fill. S is the cosines,
    or with ``profiles`` the mean of the cosines and the profiles' cosines. Returns
    (picks, held_back)."""
    q, C = unit(q), unit(C)
    n = len(C)
    cos = C @ q
    signals = np.atleast_2d(cos if relevance is None else np.asarray(relevance, float))

    def zscores(x):
        std = x.std()
        return (x - x.mean()) / std if std > 1e-12 * max(1.0, abs(x.mean())) else np.zeros(n)

    z = sum(zscores(x) for x in signals)
    z = zscores(z) if len(signals) > 1 else z
    rel = z if len(signals) > 1 else signals[0]  # what top-k and the fill rank by
    w = np.exp(z / 2)
    S = C @ C.T
    if profiles is not None:
        P = np.asarray(profiles, float)
        lengths = np.linalg.norm(P, axis=1)
        P = P / np.where(lengths > 0, lengths, 1.0)[:, None]
        S = (S + P @ P.T) / 2
    L = np.outer(w, w) * S
    floor = FLOOR * (w * w).max() if n else 0.0
    picks: list[int] = []
    exhausted = False

    def allowed(j):
        if j in picks:
            return False
        if max_per_group is None:
            return True
        return sum(groups[p] == groups[j] for p in picks) < max_per_group

    def ratio(j):
        Y = picks + [j]
        det_y = np.linalg.det(L[np.ix_(picks, picks)]) if picks else 1.0
        return np.linalg.det(L[np.ix_(Y, Y)]) / det_y

    for _ in range(min(k, n)):
        cands = [j for j in range(n) if allowed(j)]
        if not cands:
            break
        ratios = {} if exhausted else {j: ratio(j) for j in cands}
        if not exhausted:
            exhausted = max(ratios.values()) <= floor
        if not exhausted:
            score = ratios
        if exhausted:
            score = {j: rel[j] for j in cands}
        best = max(score.values())
        picks.append(min(j for j in score if score[j] >= best - 1e-10 * max(1.0, abs(best))))
    topk = [int(j) for j in np.argsort(-rel, kind="stable")
            if j in picks or allowed(j)][: len(picks)]
    held = [j for j in topk if j not in picks]
    return picks, topk, held


def cases(seed, count, copies=False):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, d = int(rng.integers(1, 11)), int(rng.integers(2, 7))
        C = rng.normal(size=(n, d))
        if copies and n > 2:  # exact copies: the kernel loses rank
            C[rng.integers(0, n)] = C[0]
        yield rng.normal(size=d), C, int(rng.integers(1, n + 2)), rng


def test_is_the_default_and_takes_relevance_and_a_prior():
    """``select`` without a method runs it; an outside relevance and a prior reach it (the
    best by them comes first), and a second run repeats the first."""
    rng = np.random.default_rng(2)
    q, C = rng.normal(size=6), rng.normal(size=(12, 6))
    plain = select(q, C, 4)
    assert plain.method == "complement"
    assert plain.indices.tolist() == select(q, C, 4, method="complement").indices.tolist()
    assert plain.indices.tolist() == select(q, C, 4).indices.tolist()
    relevance = np.zeros(12)
    relevance[7] = 5.0
    assert select(q, C, 4, relevance=relevance).indices[0] == 7
    prior = np.zeros(12)
    prior[9] = 1.0
    assert select(q, C, 4, relevance=np.zeros(12), prior=prior,
                  prior_weight=1.0).indices[0] == 9


@pytest.mark.parametrize("outside", [0, 1, 2])  # the cosine, one outside score, two signals
@pytest.mark.parametrize("copies", [False, True])
def test_matches_the_reference(outside, copies):
    for q, C, k, rng in cases(7 + outside + 3 * copies, 150, copies):
        relevance = rng.normal(size=(outside, len(C))) * 5 + 3 if outside else None
        if outside == 1:
            relevance = relevance[0]
        sel = select(q, C, k, method="complement", relevance=fused(relevance))
        picks, topk, held = reference(q, C, k, relevance)
        assert sel.indices.tolist() == picks
        assert sel.info["top_k"] == topk and sel.info["held_back"] == held
        if picks:
            want = metrics.sum_vector_similarity(unit(q), unit(C)[picks])
            assert sel.objective == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_matches_the_reference_with_a_group_cap():
    for q, C, k, rng in cases(11, 120):
        groups = rng.integers(0, 3, size=len(C)).tolist()
        sel = select(q, C, k, method="complement", groups=groups, max_per_group=1)
        picks, topk, held = reference(q, C, k, groups=groups, max_per_group=1)
        assert sel.indices.tolist() == picks
        assert sel.info["top_k"] == topk and sel.info["held_back"] == held


def test_batch_equals_singles_with_padding():
    rng = np.random.default_rng(3)
    B, n, d = 40, 9, 5
    Q, C = rng.normal(size=(B, d)), rng.normal(size=(B, n, d))
    C[::4, 3] = C[::4, 0]  # copies in some pools
    mask = rng.random((B, n)) > 0.25
    mask[:, 0] = True
    relevance = rng.normal(size=(B, n))
    for rel in (None, relevance):
        batch = select_batch(Q, C, 4, method="complement", mask=mask, relevance=rel)
        for b in range(B):
            real = np.flatnonzero(mask[b])
            one = select(Q[b], C[b][real], 4, method="complement",
                         relevance=None if rel is None else rel[b][real])
            assert real[one.indices].tolist() == batch[b].indices.tolist()
            np.testing.assert_allclose(one.gains, batch[b].gains, rtol=1e-9, atol=1e-12)
            assert real[one.info["held_back"]].tolist() == batch[b].info["held_back"]
            assert real[one.info["top_k"]].tolist() == batch[b].info["top_k"]


def multi_hop():
    """A question that needs two facts: q between e0 and e1. a answers the e0 half,
    a2 restates a, b answers the e1 half (less relevant than a2), c and e are off topic."""
    q = unit([1.0, 1.0, 0, 0, 0, 0])
    a = unit([1.0, 0.35, 0.3, 0, 0, 0])
    a2 = unit([1.0, 0.3, 0.3, 0.08, 0, 0])
    b = unit([0.1, 1.0, -0.3, 0, 0.2, 0])
    c = unit([0.3, 0.1, 0, 0, 0, 1.0])
    e = unit([0.1, 0.2, 0, 1.0, 0, 0])
    return q, np.array([a, a2, b, c, e])


def test_second_pick_is_the_complement_not_the_restatement():
    q, C = multi_hop()
    rel = C @ q
    assert rel[0] > rel[1] > rel[2] > rel[3]  # plain top-2 is a and its restatement
    sel = select(q, C, 2, method="complement")
    assert sel.indices.tolist() == [0, 2]
    assert sel.info["top_k"] == [0, 1] and sel.info["held_back"] == [1]  # a2 waits
    assert select(q, C, 2, method="similarity").indices.tolist() == [0, 1]


def test_a_copy_of_a_pick_waits_for_the_end_and_adds_nothing():
    q, C = multi_hop()
    C = np.vstack([C, C[0]])  # an exact copy of the best candidate, last in the store's order
    sel = select(q, C, len(C), method="complement")
    assert sel.indices[0] == 0 and sel.indices[-1] == 5
    assert sel.gains[-1] == 0.0 and sel.info["filled_by_relevance"] >= 1


def test_an_outside_relevance_decides_the_order():
    q, C = multi_hop()
    relevance = np.array([0.1, 0.2, 0.3, 0.9, 0.4])  # a reranker that prefers c
    sel = select(q, C, 1, method="complement", relevance=relevance)
    assert sel.indices.tolist() == [3]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100), shift=st.floats(-50, 50))
def test_outside_relevance_counts_up_to_an_affine_map(seed, scale, shift):
    """Relevance is standardised within the pool: a cross-encoder's logits and their
    probabilities' affine rescalings select alike, and cosines given as relevance equal
    no relevance at all."""
    rng = np.random.default_rng(seed)
    q, C = rng.normal(size=6), rng.normal(size=(12, 6))
    rel = rng.normal(size=12)
    one = select(q, C, 5, method="complement", relevance=rel)
    two = select(q, C, 5, method="complement", relevance=scale * rel + shift)
    assert one.indices.tolist() == two.indices.tolist()
    cosines = unit(C) @ unit(q)
    assert (select(q, C, 5, method="complement", relevance=cosines).indices.tolist()
            == select(q, C, 5, method="complement").indices.tolist())


def test_the_prior_moves_relevance():
    q, C = multi_hop()
    prior = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    plain = select(q, C, 1, method="complement")
    tilted = select(q, C, 1, method="complement", prior=prior, prior_weight=0.9)
    assert plain.indices.tolist() == [0] and tilted.indices.tolist() == [3]
    assert tilted.info["prior"] == [1.0]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12))
def test_held_back_are_the_slots_that_differ_from_top_k(seed, k):
    rng = np.random.default_rng(seed)
    q, C = rng.normal(size=5), rng.normal(size=(10, 5))
    C[4] = C[1] + 0.01 * rng.normal(size=5)  # a near-copy
    sel = select(q, C, k, method="complement")
    top = select(q, C, k, method="similarity").indices.tolist()
    picks = sel.indices.tolist()
    held = sel.info["held_back"]
    assert held == [j for j in top if j not in picks]  # in top-k's order


def test_empty_problems():
    q = np.ones(3)
    assert len(select(q, np.ones((4, 3)), 0, method="complement")) == 0
    sel = select(q, np.zeros((0, 3)), 3, method="complement")
    assert len(sel) == 0 and sel.info["held_back"] == sel.info["top_k"] == []


def test_refuses_options_it_does_not_have():
    with pytest.raises(ValueError, match="duplicate_share"):
        select(np.ones(3), np.eye(3), 2, method="complement", duplicate_share=0.3)


def test_held_back_is_the_same_single_and_batched_on_a_tie():
    """Candidate 0 is as close to pick 1 as to pick 3 (cosines equal up to rounding,
    which differs between the single and the batched products): what is held back does
    not depend on that rounding."""
    q = np.array([0.5, 1.0])
    C = np.array([[1.0, 1.0], [0.5, 1.0], [1.0, 0.25], [2.0, 1.0], [2.0, 2.0]])
    one = select(q, C, 2, method="complement")
    many = select_batch(np.stack([q, q]), np.stack([C, C[::-1]]), 2, method="complement")
    assert one.indices.tolist() == many[0].indices.tolist() == [1, 3]
    assert one.info["held_back"] == many[0].info["held_back"] == [0]
    assert one.info["top_k"] == many[0].info["top_k"]


# --- profiles: a second description of each candidate (vrsd_core._prepare.with_word_profiles) ---


@pytest.mark.parametrize("copies", [False, True])
def test_matches_the_reference_with_profiles(copies):
    for q, C, k, rng in cases(21 if copies else 22, 60, copies):
        n = len(C)
        P = rng.random((n, int(rng.integers(1, 5)))) * (rng.random((n, 1)) > 0.1)  # some all 0
        relevance = rng.normal(size=(2, n)) if rng.random() < 0.5 else None
        got = select(q, C, k, profiles=P, relevance=fused(relevance))
        picks, topk, held = reference(q, C, k, relevance=relevance, profiles=P)
        assert got.indices.tolist() == picks
        assert got.info["top_k"] == topk and got.info["held_back"] == held


def test_profiles_tell_apart_two_passages_whose_vectors_agree():
    """Two candidates with one vector: without profiles the second adds nothing (it
    waits, gain 0); with profiles that share nothing, S between them is 1/2, so the
    second adds 1 - 1/4 of its quality; with equal profiles it still adds nothing."""
    q = unit([1.0, 0.2, 0.0])
    C = np.array([unit([1.0, 0.0, 0.0]), unit([1.0, 0.0, 0.0]), unit([0.0, 1.0, 0.3])])
    plain = select(q, C, 2)
    assert plain.indices.tolist() == [0, 2]
    apart = select(q, C, 2, profiles=np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    assert apart.indices.tolist() == [0, 1]
    cos = C @ q
    z = (cos - cos.mean()) / cos.std()
    assert apart.gains[1] == pytest.approx(np.exp(z[1]) * 0.75, rel=1e-9)
    alike = select(q, C, 2, profiles=np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 0.0]]))
    assert alike.indices.tolist() == [0, 2]


def test_profiles_change_the_similarity_only():
    """The relevance and the sum-vector objective stay on the vectors; params shows the
    profiles as given, not the array."""
    rng = np.random.default_rng(5)
    q, C, P = rng.normal(size=6), rng.normal(size=(12, 6)), rng.random((12, 4))
    with_p = select(q, C, 4, profiles=P)
    np.testing.assert_allclose(with_p.relevance, (unit(C) @ unit(q))[with_p.indices],
                               rtol=1e-9, atol=1e-12)
    assert with_p.objective == pytest.approx(
        metrics.sum_vector_similarity(q, C[with_p.indices]), rel=1e-9)
    assert with_p.params["profiles"] == "given"
    assert select(q, C, 4).params["profiles"] is None


def test_profiles_without_normalize_are_the_mean_with_the_inner_products():
    rng = np.random.default_rng(6)
    q, C, P = rng.normal(size=5), rng.normal(size=(10, 5)), rng.normal(size=(10, 3))
    P[4] = 0.0
    rel = C @ q
    got = select(q, C, 4, normalize=False, profiles=P)
    lengths = np.linalg.norm(P, axis=1, keepdims=True)
    A = np.hstack([C, np.divide(P, lengths, out=np.zeros_like(P), where=lengths > 0)])
    want = select(np.append(q, [0, 0, 0]), A / np.sqrt(2), 4, normalize=False, relevance=rel)
    assert got.indices.tolist() == want.indices.tolist()
    np.testing.assert_allclose(got.gains, want.gains, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_profiles_batch_equals_singles_with_padding(dtype):
    rng = np.random.default_rng(7)
    B, n, d, f = 30, 9, 5, 3
    Q, C = rng.normal(size=(B, d)).astype(dtype), rng.normal(size=(B, n, d)).astype(dtype)
    P = rng.random((B, n, f))
    mask = rng.random((B, n)) > 0.25
    mask[:, 0] = True
    P[~mask] = np.nan  # padding may hold anything
    batch = select_batch(Q, C, 4, mask=mask, profiles=P)
    for b in range(B):
        real = np.flatnonzero(mask[b])
        one = select(Q[b], C[b][real], 4, profiles=P[b][real])
        assert real[one.indices].tolist() == batch[b].indices.tolist()
        np.testing.assert_allclose(one.gains, batch[b].gains, rtol=1e-5, atol=1e-7)


def test_profiles_bad_input_names_the_argument():
    q, C = np.ones(3), np.eye(3)
    for bad in (np.ones((2, 2)), np.ones(3), np.ones((1, 3, 2)), [[1, 2], [3]]):
        with pytest.raises(ValueError, match="profiles"):
            select(q, C, 2, profiles=bad)
    with pytest.raises(ValueError, match="profiles"):
        select(q, C, 2, profiles=np.array([[1.0], [np.nan], [0.0]]))
    with pytest.raises(ValueError, match="profiles"):
        select_batch(q[None], C[None], 2, profiles=np.ones((3, 1)))
    for method in ("similarity", "mmr", "dpp", "vrsd"):
        with pytest.raises(ValueError, match="profiles: not an option"):
            select(q, C, 2, method=method, profiles=np.ones((3, 1)))
    P = np.ones((3, 2))
    select(q, C, 2, profiles=P)
    assert (P == 1).all()  # not written


# --- closes: a judge inside the greedy loop ---------------------------------------------


def _closed_from_the_start(q, C, k, closed, **options):
    """The selection in which ``closed`` were never open: a token count above a budget of
    0 that every other candidate fits."""
    tokens = np.zeros(len(C), dtype=np.int64)
    tokens[list(closed)] = 1
    return select(q, C, k, method=DEFAULT_METHOD, max_tokens=0, token_counts=tokens, **options)


def _shut_out(n, shut):
    """``closes`` that shuts the candidates ``shut`` out whatever was picked."""
    copies = np.zeros((n, n), dtype=bool)
    copies[sorted(shut)] = True
    return copies


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 9), st.sets(st.integers(0, 9), max_size=5))
def test_closes_keeps_what_closing_from_the_start_keeps(seed, k, shut):
    """A candidate ``closes`` refuses is never picked, and the run is the one in which it
    was closed from the start (asked only of picks: those it never reaches stay open).
    The first pick follows no pick: it is never closed."""
    rng = np.random.default_rng(seed)
    q, C = rng.normal(size=6), rng.normal(size=(10, 6))
    shut = shut - {int(select(q, C, 1, method=DEFAULT_METHOD).indices[0])}
    got = select(q, C, k, method=DEFAULT_METHOD, closes=_shut_out(10, shut))
    closed = got.info["closed"]
    assert set(closed) <= shut and not set(got.indices.tolist()) & shut
    expected = _closed_from_the_start(q, C, k, closed)
    assert got.indices.tolist() == expected.indices.tolist()
    np.testing.assert_allclose(got.gains, expected.gains, rtol=1e-12, atol=1e-12)
    assert len(got.indices) == min(k, 10 - len(closed))
    picked = got.indices.tolist()
    plain = select(q, C, k, method=DEFAULT_METHOD)
    assert got.info["top_k"] == plain.info["top_k"]  # what plain top-k returns
    assert got.info["held_back"] == [c for c in plain.info["top_k"] if c not in picked]


def test_closes_reads_the_copies_of_the_picks_only():
    """[c, p]: c is closed once p is picked, and only then."""
    q, C = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.9, 0.44], [0.0, 1.0]])
    copies = np.zeros((3, 3), dtype=bool)
    copies[1, 2] = True  # 1 copies 2, which is picked after it: 1 stays
    assert select(q, C, 3, closes=copies).indices.tolist() == \
        select(q, C, 3).indices.tolist()
    copies[1, 0] = True  # 1 copies 0, the first pick: 1 is closed
    got = select(q, C, 3, closes=copies)
    assert 1 not in got.indices.tolist() and got.info["closed"] == [1]


def test_closes_in_a_batch_reads_each_querys_own_rows():
    # 40 pools of 50 x 384 float64: more than one chunk of queries (CHUNK_BYTES)
    rng = np.random.default_rng(3)
    Q, C = rng.normal(size=(40, 384)), rng.normal(size=(40, 50, 384))
    shut = np.stack([_shut_out(50, set(rng.integers(50, size=3).tolist())) for _ in range(40)])
    batch = select_batch(Q, C, 3, method=DEFAULT_METHOD, closes=shut)
    assert any(batch[b].info["closed"] for b in range(40))
    for b in range(40):
        one = select(Q[b], C[b], 3, method=DEFAULT_METHOD, closes=shut[b])
        assert batch[b].indices.tolist() == one.indices.tolist()
        assert batch[b].info["closed"] == one.info["closed"]


@pytest.mark.parametrize("bad", ["yes", np.zeros((4, 4)), np.zeros((3, 3), dtype=bool)])
def test_closes_must_be_booleans_per_pair(bad):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^closes: expected booleans of shape \(4, 4\)"):
        select(rng.normal(size=3), rng.normal(size=(4, 3)), 2, method=DEFAULT_METHOD,
               closes=bad)
