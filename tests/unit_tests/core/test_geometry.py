"""Hand-built geometry whose right answer can be read off a drawing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import select, select_batch


def unit(deg: float, *, z: float = 0.0) -> np.ndarray:
    """The unit vector at ``deg`` degrees in the xy-plane, tilted by ``z`` degrees."""
    a, b = math.radians(deg), math.radians(z)
    return np.array([math.cos(a) * math.cos(b), math.sin(a) * math.cos(b), math.sin(b)])


Q = unit(0)


def test_figure_1c_vrsd_takes_the_other_side_mmr_takes_the_far_one():
    """The paper's Figure 1(c): q between d0 and d1, d2 far from both.

    d0 (10 deg) is the most relevant. d0 + d1 (d1 at -20 deg) points at -5 deg,
    d0 + d2 (d2 at 80 deg) at 45 deg, so VRSD adds d1; MMR with a small lambda
    prefers d2 because it is farther from d0.
    """
    d0, d1, d2 = unit(10), unit(-20), unit(80)
    C = np.stack([d0, d1, d2])
    vrsd = select(Q, C, 2, method="vrsd")
    assert vrsd.indices.tolist() == [0, 1]
    assert vrsd.objective == pytest.approx(math.cos(math.radians(5)))
    mmr = select(Q, C, 2, method="mmr", lambda_mult=0.2)
    assert mmr.indices.tolist() == [0, 2]
    # With lambda near 1 MMR is relevance order again.
    assert select(Q, C, 2, method="mmr", lambda_mult=0.9).indices.tolist() == [0, 1]
    assert vrsd.objective > mmr.objective
    # The same picture in the store's other order: the answer follows the vectors.
    perm = select(Q, C[[2, 1, 0]], 2, method="vrsd")
    assert perm.indices.tolist() == [2, 1]


def test_figure_1c_in_many_dimensions():
    """The same picture embedded in 384 dimensions with a random rotation."""
    rng = np.random.default_rng(1)
    basis, _ = np.linalg.qr(rng.standard_normal((384, 3)))
    C = np.stack([unit(10), unit(-20), unit(80)]) @ basis.T
    q = Q @ basis.T
    assert select(q, C, 2, method="vrsd").indices.tolist() == [0, 1]
    assert select(q, C, 2, method="mmr", lambda_mult=0.2).indices.tolist() == [0, 2]


def test_orthogonal_candidates_come_in_relevance_order():
    """Orthogonal candidates: no penalty, no redundancy; every method ranks by relevance,
    and the VRSD gains are the prefix cosines sum(q_i) / (|q| sqrt(t))."""
    weights = np.array([4.0, 3.0, 2.0, 1.0, 0.5])
    q = weights.copy()
    C = np.eye(5)[[3, 0, 4, 2, 1]]  # the store's order is not the relevance order
    expected = [1, 4, 3, 0, 2]
    for method, opts in [("similarity", {}), ("vrsd", {}), ("mmr", {"lambda_mult": 0.5}),
                         ("dpp", {"theta": 0.5})]:
        sel = select(q, C, 5, method=method, **opts)
        assert sel.indices.tolist() == expected, method
    vrsd = select(q, C, 5, method="vrsd")
    ranked = np.sort(weights)[::-1]
    prefix = np.cumsum(ranked) / (np.linalg.norm(weights) * np.sqrt(np.arange(1, 6)))
    assert_scores_close(vrsd.gains, prefix)
    # MMR gains: lambda * rel, the penalty is 0 for orthogonal vectors.
    mmr = select(q, C, 5, method="mmr", lambda_mult=0.5)
    np.testing.assert_allclose(mmr.gains, 0.5 * np.sort(weights)[::-1] / np.linalg.norm(weights))


def test_equally_relevant_orthogonal_candidates_tie_toward_lower_index():
    q = np.ones(6)
    C = np.eye(6)
    for method in ("similarity", "vrsd", "mmr", "dpp", "vrsd_exact"):
        assert select(q, C, 4, method=method).indices.tolist() == [0, 1, 2, 3], method


def near_duplicate_pair():
    """a (10 deg) and its twin a' (0.5 deg away, a little less relevant); b on the
    other side of q at -25 deg, less relevant than both."""
    a = unit(10)
    twin = unit(10, z=0.5)
    b = unit(-25)
    return np.stack([a, twin, b])


@pytest.mark.parametrize("method,opts", [
    ("vrsd", {}), ("vrsd", {"refine": "swap"}), ("vrsd_exact", {}),
    ("mmr", {"lambda_mult": 0.5}), ("dpp", {"theta": 0.5}),
])
def test_near_duplicate_twin_is_avoided(method, opts):
    C = near_duplicate_pair()
    assert select(Q, C, 2, method="similarity").indices.tolist() == [0, 1]
    assert select(Q, C, 2, method=method, **opts).indices.tolist() == [0, 2]


def test_exact_duplicates_are_skipped_by_diverse_methods():
    """Three copies of the best vector (one scaled by 2: the same after normalising)
    and two distinct ones. Plain similarity takes all three copies in the store's
    order; MMR and DPP take one copy only."""
    a, b, c = unit(5), unit(-30), unit(40, z=-10)
    C = np.stack([b, a, a * 2.0, c, a])
    copies = {1, 2, 4}
    assert select(Q, C, 3, method="similarity").indices.tolist() == [1, 2, 4]
    mmr = select(Q, C, 3, method="mmr", lambda_mult=0.3)
    assert mmr.indices.tolist() == [1, 0, 3]
    dpp = select(Q, C, 3, method="dpp", theta=0.5)
    assert dpp.indices[0] == 1 and len(copies & set(dpp.indices.tolist())) == 1
    assert dpp.info["filled_by_relevance"] == 0
    # VRSD is not a duplicate filter: a copy keeps the sum at 5 degrees (cos 0.996),
    # better than a + b at -12.5 degrees, so it takes the first copy...
    assert select(Q, C, 2, method="vrsd").indices.tolist() == [1, 2]
    # ...but a candidate that brings the sum closer to q than a copy does wins.
    C[0] = unit(-8)
    assert select(Q, C, 2, method="vrsd").indices.tolist() == [1, 0]


def test_dpp_with_k_above_the_dimension_fills_by_relevance():
    """In 3 dimensions the kernel has rank 3: picks 4..6 have zero gain and come in
    relevance order among the rest, with gain 0, and the result says so."""
    rng = np.random.default_rng(7)
    C = rng.standard_normal((8, 3))
    q = rng.standard_normal(3)
    sel = select(q, C, 6, method="dpp", theta=0.5)
    assert len(sel) == 6 and len(set(sel.indices.tolist())) == 6
    assert sel.info["filled_by_relevance"] == 3
    assert np.all(sel.gains[:3] > 1e-6) and np.all(sel.gains[3:] == 0.0)
    cos = (C / np.linalg.norm(C, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    rest = [j for j in np.argsort(-cos, kind="stable") if j not in sel.indices[:3]]
    assert sel.indices[3:].tolist() == rest[:3]
    np.testing.assert_allclose(sel.relevance, cos[sel.indices])


def test_dpp_fill_after_only_duplicates_remain():
    q = np.array([1.0, 0.2, 0.0, 0.0])
    a, b = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0])
    C = np.stack([a, b, a, b * 3.0, a * 0.5])
    sel = select(q, C, 5, method="dpp", theta=0.3)
    assert sel.indices.tolist() == [0, 1, 2, 4, 3]
    assert sel.info["filled_by_relevance"] == 3


def test_dpp_theta_zero_is_pure_diversity_and_high_theta_is_relevance():
    """theta=0 ignores relevance (kernel S): after the first pick it takes the vector
    most orthogonal to it; theta near 1 follows relevance."""
    C = np.stack([unit(0), unit(5), unit(90), unit(3)])
    q = unit(2)
    assert select(q, C, 2, method="dpp", theta=0.0).indices.tolist()[1] == 2
    assert select(q, C, 3, method="dpp", theta=0.999).indices.tolist() == [3, 0, 1]


def test_mmr_penalises_the_closest_selected_item_not_only_the_last():
    """x is a near-twin of the first pick a but far from the second pick: an MMR that
    looks only at the last pick (LlamaIndex's) takes x third; the max over all picks
    takes y."""
    q = unit(-5)
    a, far, x, y = unit(0), unit(-60), unit(1, z=1), unit(-5, z=60)
    C = np.stack([a, far, x, y])
    lam = 0.3
    sel = select(q, C, 3, method="mmr", lambda_mult=lam)
    assert sel.indices.tolist() == [0, 1, 3]
    # The last-pick-only rule on the same vectors would have chosen x (index 2).
    last_only = {j: lam * (C[j] @ q) - (1 - lam) * (C[j] @ far) for j in (2, 3)}
    assert max(last_only, key=last_only.get) == 2


def test_mmr_lambda_one_is_similarity_order():
    rng = np.random.default_rng(3)
    C, q = rng.standard_normal((30, 8)), rng.standard_normal(8)
    sim = select(q, C, 10, method="similarity")
    assert select(q, C, 10, method="mmr", lambda_mult=1.0).indices.tolist() == sim.indices.tolist()


def test_vrsd_first_pick_is_the_most_relevant_and_objective_is_the_sum_cosine():
    rng = np.random.default_rng(4)
    C, q = rng.standard_normal((40, 16)), rng.standard_normal(16)
    sel = select(q, C, 6, method="vrsd")
    Cn = C / np.linalg.norm(C, axis=1, keepdims=True)
    qn = q / np.linalg.norm(q)
    assert sel.indices[0] == int(np.argmax(Cn @ qn))
    s = Cn[sel.indices].sum(axis=0)
    assert sel.objective == approx_scores(s @ qn / np.linalg.norm(s))


def test_normalize_false_uses_raw_vectors():
    """normalize=False: the objective is the cosine of the raw (unnormalised) sum."""
    q = np.array([1.0, 0.0])
    C = np.array([[10.0, 3.0], [1.0, -0.9], [1.0, 0.9]])
    norm = select(q, C, 2, method="vrsd")
    raw = select(q, C, 2, method="vrsd", normalize=False)
    assert norm.indices.tolist() == [0, 1]
    assert raw.indices.tolist() == [0, 1]
    s = C[raw.indices].sum(axis=0)
    assert raw.objective == pytest.approx(s[0] / np.linalg.norm(s))
    assert norm.objective != pytest.approx(raw.objective)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sum_of_zero_length_scores_zero(dtype, ref):
    """A candidate opposite to the sum so far leaves a sum with no direction, whose
    cosine the core defines as 0 (the references do the same): here 0 beats every
    negative alternative, so VRSD takes it; also when rounding makes the zero length
    a tiny positive or negative number (the float32 case hypothesis found)."""
    q = np.array([1.0, 0.0], dtype=dtype)
    C = np.array([[1.0, 0.0], [-1.0, 0.0], [-1.5, 0.1]], dtype=dtype)
    sel = select(q, C, 2, method="vrsd", normalize=False)
    assert sel.indices.tolist() == [0, 1]
    np.testing.assert_allclose(sel.gains, [1.0, 0.0], atol=1e-6)
    assert ref.vrsd(q, C, 2, normalize=False).indices == [0, 1]
    batch = select_batch(np.stack([q, q]), np.stack([C, C[[0, 2, 1]]]), 2, method="vrsd",
                         normalize=False)
    assert [s.indices.tolist() for s in batch] == [[0, 1], [0, 2]]
    # One dimension: after x (normalised to 1) only -1 is left and 1 + -1 = 0, but in
    # float32 the parts of |s + c|^2 cancel to +-1e-8 or so. It is still picked once.
    for x in (0.12097611, 0.6405921, 0.27708885, 0.91362804):
        C1 = np.array([[x], [-1.0]], dtype=dtype)
        sel = select(np.array([1.0], dtype=dtype), C1, 2, method="vrsd")
        assert sel.indices.tolist() == [0, 1], x
        assert abs(sel.gains[1]) < 1e-3


@pytest.mark.parametrize("method", ["similarity", "vrsd", "mmr"])
def test_float32_exact_duplicates_tie_toward_the_lower_index(method):
    """float32 products of two identical rows can differ in the last bit (BLAS
    blocking); the tie tolerance follows the input dtype, so the store's rank
    still decides which twin comes first."""
    rng = np.random.default_rng(7)
    misordered = []
    for case in range(150):
        n, d = int(rng.integers(5, 300)), int(rng.integers(3, 400))
        C = rng.normal(size=(n, d)).astype(np.float32)
        q = rng.normal(size=d).astype(np.float32)
        i, j = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        C[j] = C[i]
        order = select(q, C, n, method=method).indices.tolist()
        if order.index(j) < order.index(i):
            misordered.append((case, n, d, i, j))
    assert misordered == []


def test_similarity_near_ties_keep_the_store_order_where_a_sort_would_not():
    """Scores 1e-12 apart tie (float64 tolerance 1e-10): the lower index first, though a
    sort would put the larger score first; distinct scores come in score order."""
    rng = np.random.default_rng(0)
    q, C = rng.normal(size=4), rng.normal(size=(5, 4))
    # the ranking reads these given scores as they are (no product computes them), so the
    # picked indices are the same on every machine; 1e-12 is 100 times inside the tolerance
    rel = np.array([0.5, 0.9, 0.9 + 1e-12, 0.1, 0.7])
    assert select(q, C, 3, method="similarity", relevance=rel).indices.tolist() == [1, 2, 4]
    assert select(q, C, 3, method="similarity", relevance=rel[[0, 3, 4, 1, 2]]
                  ).indices.tolist() == [3, 4, 2]


@pytest.mark.parametrize("method", ["similarity", "complement", "mmr", "dpp"])
def test_scores_at_the_bottom_of_the_float_range_still_give_distinct_picks(method):
    """Relevance of -1.8e308 everywhere: the tie threshold would overflow to -inf, the
    mark of a candidate already picked, and the first candidate would be picked again;
    the threshold stays finite (``_prepare.tie_threshold``), so the picks are distinct."""
    rng = np.random.default_rng(0)
    q, C = rng.normal(size=3), rng.normal(size=(10, 3))
    rel = np.full(10, np.finfo(np.float64).min)
    for sel in (select(q, C, 4, method=method, relevance=rel),
                select_batch(q[None], C[None], 4, method=method, relevance=rel[None])[0]):
        picks = sel.indices.tolist()
        assert len(picks) == 4 and len(set(picks)) == 4
