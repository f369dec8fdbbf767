"""``complement``, the recommended method: a direct reference implementation, hand-built
geometry with an obvious answer, batch equals singles, options and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import DEFAULT_METHOD, METHOD_INFO, select, select_batch


def pool_threshold(C, share):
    """The cosine at which a pair's squared distance is ``share`` of the mean squared
    distance between two of the (unit) candidates, pair by pair."""
    n = len(C)
    if n < 2 or share == 0:
        return np.inf
    distances = [np.sum((C[i] - C[j]) ** 2) for i in range(n) for j in range(n) if i != j]
    return 1 - share * np.mean(distances) / 2  # |a - b|^2 = 2 (1 - cos)


def told_apart(C, p, j, rms):
    """Whether the pool's other (unit) candidates tell C[p] and C[j] apart, vector by
    vector: the mean squared cosine between (C[p] - C[j]) and each other candidate's
    direction from the pool's mean against rms^2 times the mean squared cosine
    between two of those directions (every ordered pair, self-pairs included)."""
    n = len(C)
    m = C.mean(axis=0)
    dirs = []
    for i in range(n):
        w = C[i] - m
        dirs.append(w / np.linalg.norm(w) if np.linalg.norm(w) > 1e-12 else 0 * w)
    own = np.mean([(dirs[i] @ dirs[h]) ** 2 for i in range(n) for h in range(n)])
    e = C[p] - C[j]
    if n < 3 or own <= 1e-12 or np.linalg.norm(e) <= 1e-12:
        return True
    e = e / np.linalg.norm(e)
    energy = np.mean([(e @ dirs[i]) ** 2 for i in range(n) if i not in (p, j)])
    return energy >= rms**2 * own


def reference(q, C, k, duplicate_cos=None, complement_steps=1, groups=None, max_per_group=None,
              strict_head=5, centred=True, duplicate_share=0.3, indistinct_share=0.5,
              indistinct_rms=1 / 3, raw_gate=True):
    """The method written out with explicit vectors, one candidate at a time."""
    q = np.asarray(q, float) / np.linalg.norm(q)
    C = np.asarray(C, float)
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    n = len(C)
    rel = C @ q
    thr = duplicate_cos
    band = np.inf  # the close band: a restatement unless the pool tells the two apart
    if n and duplicate_cos is None:
        thr = min((1 + rel.max()) / 2, pool_threshold(C, duplicate_share))
        if duplicate_share > 0 and indistinct_share > duplicate_share:
            band = pool_threshold(C, indistinct_share)

    def restates(j, p):
        s = C[j] @ C[p]
        return s > thr or (s > band and not told_apart(C, p, j, indistinct_rms))

    sigma = rel.std() if n else 0.0
    if centred and n:  # the step's geometry: seen from the pool's mean scaled by the
        m = C.mean(axis=0)  # pool's concentration |mean| (unit rows), unit length
        m = np.linalg.norm(m) * m
        W, u = C - m, q - m
        lengths = np.linalg.norm(W, axis=1)
        W = np.where(lengths[:, None] > 1e-12, W / np.maximum(lengths, 1e-300)[:, None], 0.0)
        u = u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-12 else 0 * u
    else:
        W, u = C, q
    picks: list[int] = []
    used: dict = {}

    def cos_sum(idx):
        s = W[idx].sum(axis=0)
        length = np.linalg.norm(s)
        return float(s @ u / length) if length > 1e-12 else 0.0

    def raw_cos_sum(idx):
        s = C[idx].sum(axis=0)
        length = np.linalg.norm(s)
        return float(s @ q / length) if length > 1e-12 else 0.0

    for t in range(k):
        avail = [j for j in range(n) if j not in picks and (
            groups is None or used.get(groups[j], 0) < max_per_group)]
        if not avail:
            break
        restated = {j for j in avail if any(restates(j, p) for p in picks)}
        if t < strict_head:
            pool = [j for j in avail if j not in restated] or avail
            score = {j: rel[j] for j in pool}
        else:
            pool = avail
            score = {j: rel[j] - sigma * (j in restated) for j in pool}
        best = max(pool, key=lambda j: (score[j], -j))  # ties: the lower index
        if 1 <= t <= complement_steps:
            v = max(pool, key=lambda j: (cos_sum([*picks, j]), -j))
            # taken if it raises the sum's cosine in the step's geometry and VRSD's
            # own step, in raw cosines, picks the same candidate
            raw_v = max(pool, key=lambda j: (raw_cos_sum([*picks, j]), -j))
            if cos_sum([*picks, v]) > cos_sum(picks) and (not raw_gate or raw_v == v):
                best = v
        picks.append(best)
        if groups is not None:
            used[groups[best]] = used.get(groups[best], 0) + 1
    return picks


def cases(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n, d = int(rng.integers(1, 30)), int(rng.integers(2, 12))
        q = rng.normal(size=d)
        C = q + rng.normal(scale=rng.uniform(0.3, 2.0), size=(n, d))
        if i % 3 == 0 and n > 2:  # near-duplicates of some rows
            C[n // 2:] = C[: n - n // 2] + rng.normal(scale=0.01, size=(n - n // 2, d))
        yield q, C, int(rng.integers(0, n + 2))


def test_is_the_adapters_default():
    assert DEFAULT_METHOD == "complement" and "complement" in METHOD_INFO
    assert not METHOD_INFO["complement"].takes_relevance  # geometric, like vrsd


@pytest.mark.parametrize("options", [{}, {"duplicate_cos": 0.8}, {"complement_steps": 0},
                                     {"complement_steps": 2}, {"duplicate_cos": 1.0},
                                     {"strict_head": 0}, {"strict_head": 2},
                                     {"centred": False}, {"centred": False, "complement_steps": 3},
                                     {"duplicate_share": 0.0}, {"duplicate_share": 0.6},
                                     {"duplicate_share": 0.5, "duplicate_cos": 0.9},
                                     {"indistinct_share": 0.0}, {"indistinct_share": 0.3},
                                     {"indistinct_share": 0.9, "indistinct_rms": 0.6},
                                     {"duplicate_share": 0.0, "indistinct_share": 0.9}])
def test_matches_the_reference(options):
    for q, C, k in cases(1, 150):
        got = select(q, C, k, method="complement", **options)
        assert got.indices.tolist() == reference(q, C, k, **options)


def test_the_raw_gate_decides_some_steps():
    # the centred step's candidate is taken only when VRSD's own step in raw cosines
    # picks it too; on these cases the gate changes the picks of some queries, and
    # the core follows the gated reference
    changed = 0
    for q, C, k in [*cases(1, 150), *cases(5, 150)]:
        gated = reference(q, C, k)
        changed += gated != reference(q, C, k, raw_gate=False)
        assert select(q, C, k, method="complement").indices.tolist() == gated
    assert changed >= 5


def test_matches_the_reference_with_a_group_cap():
    rng = np.random.default_rng(3)
    for q, C, k in cases(2, 80):
        groups = rng.integers(0, 4, size=len(C)).tolist()
        got = select(q, C, k, method="complement", groups=groups, max_per_group=2)
        assert got.indices.tolist() == reference(q, C, k, groups=groups, max_per_group=2)


def test_batch_equals_singles_with_padding():
    rng = np.random.default_rng(4)
    B, n, d = 12, 20, 8
    Q = rng.normal(size=(B, d))
    C = Q[:, None, :] + rng.normal(size=(B, n, d))
    mask = rng.random((B, n)) > 0.2
    mask[:, 0] = True
    for k in (1, 3, 7):
        batch = select_batch(Q, C, k, method="complement", mask=mask)
        for b in range(B):
            single = select(Q[b], C[b][mask[b]], k, method="complement")
            assert np.flatnonzero(mask[b])[single.indices].tolist() == batch[b].indices.tolist()
            assert_scores_close(batch[b].gains, single.gains)


def paraphrased_pools(rng, B, n, d):
    """Queries whose candidates come in pairs: a passage and a restatement of it that
    leans, at a random cosine of 0.4 to 0.95, into a direction of its own (the last
    d // 2 coordinates, which no passage uses) or into the passages' shared ones."""
    half, own = d - d // 2, d // 2
    Q = np.concatenate([rng.normal(size=(B, half)), np.zeros((B, own))], axis=1)
    base = Q[:, None, :half] + rng.normal(scale=1.5, size=(B, n // 2, half))
    base = np.concatenate([base, np.zeros((B, n // 2, own))], axis=2)
    base /= np.linalg.norm(base, axis=2, keepdims=True)
    lean = rng.normal(size=(B, n // 2, d))
    private = rng.random((B, n // 2, 1)) < 0.5
    lean[..., :half] *= ~private
    lean[..., half:] *= private
    lean -= np.sum(lean * base, axis=2, keepdims=True) * base
    lean /= np.linalg.norm(lean, axis=2, keepdims=True)
    c = rng.uniform(0.4, 0.95, size=(B, n // 2, 1))
    C = np.concatenate([base, c * base + np.sqrt(1 - c**2) * lean], axis=1)
    order = rng.permuted(np.tile(np.arange(C.shape[1]), (B, 1)), axis=1)
    return Q, np.take_along_axis(C, order[:, :, None], axis=1)


def test_witness_test_matches_the_reference_batched_and_single():
    rng = np.random.default_rng(8)
    B, n, d = 16, 24, 12
    Q, C = paraphrased_pools(rng, B, n, d)
    mask = rng.random((B, n)) > 0.15
    mask[:, 0] = True
    ran = 0
    for k in (2, 5, 9):
        batch = select_batch(Q, C, k, method="complement", mask=mask)
        for b in range(B):
            rows = np.flatnonzero(mask[b])
            single = select(Q[b], C[b][rows], k, method="complement")
            assert rows[single.indices].tolist() == batch[b].indices.tolist()
            assert single.indices.tolist() == reference(Q[b], C[b][rows], k)
            assert batch[b].info["indistinct_cos"] == pytest.approx(single.info["indistinct_cos"])
            unit = C[b][rows] / np.linalg.norm(C[b][rows], axis=1, keepdims=True)
            band = (unit @ unit.T > single.info["indistinct_cos"]) & (
                unit @ unit.T <= single.info["duplicate_cos"])
            ran += int(band[single.indices[:-1]].any())
    assert ran > 10  # the close band (and so the witness test) is exercised


def test_anchor_then_its_complement_not_its_duplicate():
    # The query lies between x and y. a leans to x and is the most relevant; a2 is a
    # near-copy of a; b leans to y: the pair a + b points at the query, a + a2 does not.
    q = np.array([1.0, 1.0, 0.0])
    a = np.array([1.0, 0.35, 0.0])
    a2 = np.array([1.0, 0.34, 0.02])
    b = np.array([0.2, 1.0, 0.0])
    off = np.array([0.0, 0.1, 1.0])
    C = np.array([a, a2, b, off])
    sel = select(q, C, 2, method="complement")
    assert sel.indices.tolist() == [0, 2]
    assert sel.info["complement_at"] == [1]
    assert select(q, C, 2, method="similarity").indices.tolist() == [0, 1]  # top-k: a, a2
    # the complement's gain is the pair's cosine with the query, in the step's geometry:
    # seen from the candidates' mean scaled by its own length (the pool's
    # concentration), unit length (raw cosines with centred=False)
    unit = C / np.linalg.norm(C, axis=1, keepdims=True)
    mean = np.linalg.norm(unit.mean(axis=0)) * unit.mean(axis=0)
    w = (unit - mean) / np.linalg.norm(unit - mean, axis=1, keepdims=True)
    u = (q / np.linalg.norm(q) - mean) / np.linalg.norm(q / np.linalg.norm(q) - mean)
    assert sel.gains[1] == pytest.approx((w[0] + w[2]) @ u / np.linalg.norm(w[0] + w[2]))
    raw = select(q, C, 2, method="complement", centred=False)
    pair = (a / np.linalg.norm(a) + b / np.linalg.norm(b))
    assert raw.indices.tolist() == [0, 2]
    assert raw.gains[1] == pytest.approx(pair @ q / (np.linalg.norm(pair) * np.linalg.norm(q)))
    # at k = 3 the copy a2 is skipped for a relevant distinct passage when one exists
    c = np.array([0.6, 0.6, 0.5])  # relevant, distinct, less relevant than a2
    sel3 = select(q, np.array([a, a2, b, c]), 3, method="complement")
    assert sel3.indices.tolist() == [0, 2, 3]


def test_restatement_threshold_is_half_way_between_the_best_match_and_identity():
    q = np.array([1.0, 0.0, 0.0])
    top = np.array([0.6, 0.8, 0.0])  # r1 = 0.6, so the threshold is 0.8
    rng = np.random.default_rng(0)

    def at_cosine(target):  # a unit vector with cos(top, v) = target, less relevant
        w = np.array([0.0, 0.0, 1.0])  # keeps the twin more relevant than the filler
        v = target * top + np.sqrt(1 - target**2) * w
        return v

    above, below = at_cosine(0.81), at_cosine(0.79)
    filler = np.array([0.3, -0.5, 0.8]) + rng.normal(scale=0.01, size=3)
    for twin, skipped in ((above, True), (below, False)):
        C = np.array([top, twin, filler])
        sel = select(q, C, 3, method="complement", complement_steps=0, duplicate_share=0.0)
        assert sel.info["duplicate_cos"] == pytest.approx(0.8)
        assert (sel.indices.tolist()[1] == 2) is skipped  # the twin waits behind the filler


def test_restatement_threshold_follows_the_pool_spread():
    # four mutually orthogonal candidates and a twin of the first at cosine 0.75: the
    # pool's mean pairwise cosine is 2 * 0.75 / 20 = 0.075, so a pair is a restatement
    # above 1 - 0.3 * (1 - 0.075) = 0.7225; the (1 + r_1)/2 rule alone would let the
    # twin through (r_1 is about 0.84 here, so that threshold is about 0.92)
    e = np.eye(6)
    twin = 0.75 * e[0] + np.sqrt(1 - 0.75**2) * e[4]
    C = np.array([e[0], twin, e[1], e[2], e[3]])
    q = np.array([0.8, 0.3, 0.29, 0.28, 0.1, 0.0])
    rel = C @ q / np.linalg.norm(q)
    assert rel[0] == rel.max() and rel[1] > rel[2:].max()  # relevance order: e1, twin, ...
    assert (1 + rel[0]) / 2 > 0.75
    sel = select(q, C, 5, method="complement", complement_steps=0)
    assert sel.info["duplicate_cos"] == pytest.approx(1 - 0.3 * (1 - 0.075))
    assert sel.indices.tolist() == [0, 2, 3, 4, 1]  # the twin waits until only it is left
    alone = select(q, C, 5, method="complement", complement_steps=0, duplicate_share=0.0)
    assert alone.info["duplicate_cos"] == pytest.approx((1 + rel[0]) / 2)
    assert alone.indices.tolist() == [0, 1, 2, 3, 4]
    # the share scales the distance: 1 - 0.28 * 0.925 = 0.741 < 0.75 < 1 - 0.25 * 0.925
    assert select(q, C, 5, method="complement", complement_steps=0,
                  duplicate_share=0.28).indices.tolist() == [0, 2, 3, 4, 1]
    assert select(q, C, 5, method="complement", complement_steps=0, duplicate_share=0.25,
                  indistinct_share=0.0).indices.tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("shared", [False, True])
def test_a_close_pair_is_a_restatement_unless_the_pool_tells_it_apart(shared):
    # four orthogonal candidates e0..e3 and b at cosine 0.6 to e0: inside the close
    # band (under half the pool's mean squared distance) but outside the 0.3 share.
    # b leans either into a direction no other candidate has (e5: a restatement of
    # e0 that no witness tells apart) or towards e1..e3 (content the others carry)
    e = np.eye(6)
    lean = e[5] if not shared else (e[1] + e[2] + e[3]) / np.sqrt(3)
    b = 0.6 * e[0] + 0.8 * lean
    C = np.array([e[0], b, e[1], e[2], e[3]])
    q = np.array([0.9, 0.1, 0.09, 0.08, 0.0, 0.0])
    sel = select(q, C, 5, method="complement", complement_steps=0)
    assert sel.info["indistinct_cos"] < 0.6 < sel.info["duplicate_cos"]
    assert bool(told_apart(C, 0, 1, 1 / 3)) is shared
    assert sel.indices.tolist() == ([0, 1, 2, 3, 4] if shared else [0, 2, 3, 4, 1])
    assert sel.indices.tolist() == reference(q, C, 5, complement_steps=0)
    # without the band (or with no witness test) b is an ordinary candidate
    off = select(q, C, 5, method="complement", complement_steps=0, indistinct_share=0.3)
    assert off.indices.tolist() == [0, 1, 2, 3, 4] and off.info["indistinct_cos"] is None


def test_step_is_centred_by_the_pools_concentration():
    # a pool with no common direction (every candidate beside its opposite: mean 0)
    # keeps raw cosines, the step of centred=False exactly; a concentrated pool
    # (candidates near one direction) is seen from close to its mean
    rng = np.random.default_rng(5)
    half = rng.normal(size=(6, 5))
    balanced = np.vstack([half, -half])
    q = half[0] + 0.8 * half[3]
    for k in (2, 3):
        centred = select(q, balanced, k, method="complement", duplicate_share=0.0)
        raw = select(q, balanced, k, method="complement", duplicate_share=0.0, centred=False)
        assert centred.indices.tolist() == raw.indices.tolist()
        assert_scores_close(centred.gains, raw.gains)
    tight = np.array([1.0, 0, 0, 0, 0]) + 0.05 * rng.normal(size=(12, 5))
    q = tight[0] + tight[1]
    assert select(q, tight, 3, method="complement").indices.tolist() == reference(q, tight, 3)


def test_only_restatements_left_are_still_returned():
    q = np.array([1.0, 0.0])
    C = np.array([[1.0, 0.0], [1.0, 0.001], [1.0, -0.001]])
    assert sorted(select(q, C, 3, method="complement").indices.tolist()) == [0, 1, 2]


def test_gate_keeps_relevance_when_no_complement_helps():
    # q = the anchor's direction: adding anything moves the sum away from q.
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([[1.0, 0.0, 0.0], [0.7, 0.7, 0.0], [0.6, -0.1, 0.79]])
    sel = select(q, C, 2, method="complement")
    assert sel.info["complement_at"] == []
    assert sel.indices.tolist() == [0, 1]  # the more relevant of the two


@pytest.mark.parametrize(
    ("options", "name"),
    [({"duplicate_cos": 1.5}, "duplicate_cos"), ({"duplicate_cos": -1.0}, "duplicate_cos"),
     ({"duplicate_cos": "high"}, "duplicate_cos"), ({"duplicate_cos": float("nan")},
                                                    "duplicate_cos"),
     ({"complement_steps": -1}, "complement_steps"), ({"complement_steps": 1.5},
                                                      "complement_steps"),
     ({"complement_steps": True}, "complement_steps"), ({"strict_head": -1}, "strict_head"),
     ({"strict_head": 2.5}, "strict_head"), ({"centred": "yes"}, "centred"),
     ({"duplicate_share": -0.1}, "duplicate_share"), ({"duplicate_share": 1.5},
                                                      "duplicate_share"),
     ({"duplicate_share": "half"}, "duplicate_share"),
     ({"indistinct_share": -0.1}, "indistinct_share"), ({"indistinct_share": 1.2},
                                                        "indistinct_share"),
     ({"indistinct_share": None}, "indistinct_share"),
     ({"indistinct_rms": -0.5}, "indistinct_rms"), ({"indistinct_rms": float("nan")},
                                                    "indistinct_rms"),
     ({"indistinct_rms": "third"}, "indistinct_rms"),
     ({"centred": None}, "centred")],
)
def test_bad_options_are_named(options, name):
    with pytest.raises(ValueError, match=name):
        select(np.ones(3), np.eye(3), 2, method="complement", **options)


def test_refuses_outside_relevance():
    with pytest.raises(ValueError, match="relevance"):
        select(np.ones(3), np.eye(3), 2, method="complement", relevance=[1, 2, 3])


def test_no_candidates_or_k_zero_is_empty():
    # both paths, with no candidates or nothing to pick (the single path must not take
    # the max of an empty relevance row)
    for C, k in ((np.zeros((0, 3)), 2), (np.eye(3), 0), (np.eye(3), -1)):
        sel = select(np.ones(3), C, k, method="complement")
        assert sel.indices.tolist() == [] and sel.info["complement_at"] == []
    assert [s.indices.tolist() for s in select_batch(
        np.ones((2, 3)), np.zeros((2, 0, 3)), 2, method="complement")] == [[], []]


def test_info_matches_single_calls_for_empty_problems():
    # select_batch reports what select reports: the threshold at k = 0 too, and None
    # (not -inf) for a query whose candidates are all masked
    rng = np.random.default_rng(3)
    q, X = rng.normal(size=(2, 4)), rng.normal(size=(2, 5, 4))
    for k in (0, 2):
        batch = select_batch(q, X, k, method="complement")
        single = [select(q[b], X[b], k, method="complement") for b in range(2)]
        assert [s.info for s in batch] == approx_scores([s.info for s in single])
        assert all(s.info["duplicate_cos"] is not None for s in single)
    mask = np.ones((2, 5), dtype=bool)
    mask[1] = False
    batch = select_batch(q, X, 2, method="complement", mask=mask)
    assert batch[1].info["duplicate_cos"] is None
    assert batch[0].info == approx_scores(select(q[0], X[0], 2, method="complement").info)


def test_a_sum_of_zero_length_scores_zero():
    # a candidate opposite the anchor makes the pair's sum (near) zero length: as in
    # vrsd, such a sum scores 0 (not an infinite cosine that would take the opposite
    # candidate as the complement), on the batched and the single path alike
    q = np.array([0.7355106472969055])
    C = np.array([[1.0]] * 10 + [[-3.0]])
    # (share 0: the copies would otherwise be restatements, held out of the head)
    sel = select(q, C, 2, method="complement", duplicate_share=0.0)
    assert sel.indices.tolist() == [0, 1] and np.isfinite(sel.gains).all()
    Q = np.array([[1.0], [0.7355106472969055], [1.0]])
    X = np.ones((3, 11, 1))
    X[1, 0], X[1, 10] = -3.0, -1.0
    batch = select_batch(Q, X, 2, method="complement", duplicate_share=0.0)
    singles = [select(Q[b], X[b], 2, method="complement", duplicate_share=0.0) for b in range(3)]
    assert [s.indices.tolist() for s in batch] == [s.indices.tolist() for s in singles]
    assert all(np.isfinite(s.gains).all() for s in batch)


def test_restatements_are_held_out_of_the_head_and_demoted_after_it():
    # a, its near-copy a2, then distinct candidates d1..d4 in falling relevance
    q = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    a = np.array([0.9, 0.436, 0.0, 0.0, 0.0, 0.0])
    a2 = a + np.array([0.0, 0.0, 0.02, 0.0, 0.0, 0.0])
    ds = [np.array([r, 0.0, 0.0, 0.0, 0.0, 0.0]) + np.sqrt(1 - r * r) * np.eye(6)[3 + i % 3]
          for i, r in enumerate((0.85, 0.84, 0.83, 0.2))]
    C = np.array([a, a2, *ds])
    opts = {"complement_steps": 0}
    # a strict head of 5: the copy waits until only it is left (a weak d4 comes first)
    assert select(q, C, 6, method="complement", **opts).indices.tolist() == [0, 2, 3, 4, 5, 1]
    # a head of 2: after it, the copy competes with relevance - sigma: it beats d4 (0.2)
    # but not the close distinct passages (0.83..0.85)
    sel = select(q, C, 6, method="complement", strict_head=2, **opts)
    assert sel.indices.tolist() == [0, 2, 3, 4, 1, 5]
    rel = (C / np.linalg.norm(C, axis=1, keepdims=True)) @ q
    assert sel.info["demotion"] == pytest.approx(rel.std())
    assert rel[1] - rel.std() > rel[5] and rel[1] - rel.std() < rel[4]



def test_restatements_do_not_move_with_a_common_offset():
    # a constant extra coordinate (renormalised) maps every cosine c to (c + s)/(1 + s):
    # a compressed cosine band like e5's. Relevance order, the (1 + r_1)/2 bound, the
    # pool's share and the witness test follow the geometry, not the band, so without
    # the complement step the picks are the same
    rng = np.random.default_rng(11)
    Q, C = paraphrased_pools(rng, 12, 24, 12)
    for s in (1.0, 3.0):
        for b in range(len(Q)):
            q = np.append(Q[b] / np.linalg.norm(Q[b]), np.sqrt(s))
            X = C[b] / np.linalg.norm(C[b], axis=1, keepdims=True)
            X = np.hstack([X, np.full((len(X), 1), np.sqrt(s))])
            plain = select(Q[b], C[b], 8, method="complement", complement_steps=0)
            offset = select(q, X, 8, method="complement", complement_steps=0)
            assert offset.indices.tolist() == plain.indices.tolist()
            assert (offset.info["indistinct_cos"] * (1 + s) - s
                    == pytest.approx(plain.info["indistinct_cos"]))
