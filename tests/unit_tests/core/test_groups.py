"""The per-source cap: ``groups`` + ``max_per_group`` for every method."""

from __future__ import annotations

import itertools
import zlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import METHOD_INFO, method_defaults, select, select_batch

from .test_properties import problems

ALL_METHODS = list(METHOD_INFO)
GREEDY = ["similarity", "vrsd", "vrsd_exact", "mmr", "dpp"]
VARIANTS = [
    ("similarity", {}),
    ("vrsd", {}),
    ("vrsd", {"refine": "swap"}),
    ("vrsd_exact", {}),
    ("mmr", {"lambda_mult": 0.5}),
    ("mmr", {"lambda_mult": 1.0}),
    ("dpp", {"theta": 0.5}),
    ("threshold", {"seed": 0}),
    ("top_m", {"seed": 0}),
    ("top_p", {"seed": 0, "p": 1.0}),
    ("cluster", {}),
]


def options(method: str) -> dict:
    return {"seed": 3} if method_defaults(method).get("seed", 0) is None else {}


def same_info(a: dict, b: dict) -> bool:
    """Equal info, floats (e.g. greedy_objective) up to batch-vs-single rounding."""
    return set(a) == set(b) and all(
        a[key] == approx_scores(val) if isinstance(val, float)
        else a[key] == val
        for key, val in b.items()
    )


def counts_ok(indices, groups, cap) -> bool:
    return max(Counter(groups[i] for i in indices).values(), default=0) <= cap


def feasible(groups, cap, valid=None) -> int:
    labels = [g for i, g in enumerate(groups) if valid is None or valid[i]]
    return sum(min(cap, c) for c in Counter(labels).values())


# --------------------------------------------------------------------------- hand-built


def three_chunks_of_a():
    """Doc A's three near-duplicate chunks are the most relevant; B, C, D are
    less relevant and point elsewhere."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    C = np.array([
        [1.0, 0.010, 0.0, 0.0],  # A
        [1.0, 0.020, 0.0, 0.0],  # A
        [1.0, 0.015, 0.0, 0.0],  # A
        [0.8, 0.6, 0.0, 0.0],    # B
        [0.7, 0.0, 0.7, 0.0],    # C
        [0.5, 0.0, 0.0, 0.8],    # D
    ])
    return q, C, ["A", "A", "A", "B", "C", "D"]


@pytest.mark.parametrize("method", ALL_METHODS)
def test_one_chunk_per_document(method):
    q, C, groups = three_chunks_of_a()
    sel = select(q, C, 3, method=method, groups=groups, max_per_group=1, **options(method))
    picked = [groups[i] for i in sel.indices]
    assert picked.count("A") <= 1 and len(set(picked)) == len(picked)
    if method in GREEDY:
        assert len(sel) == 3
        assert sel.indices[0] == 0  # the best chunk of A (A's chunks lead every method)
        assert set(picked) <= {"A", "B", "C", "D"} and "A" in picked
    uncapped = select(q, C, 3, method="similarity")
    assert uncapped.indices.tolist() == [0, 2, 1]  # without the cap: all of A


def test_similarity_takes_the_best_of_the_others():
    q, C, groups = three_chunks_of_a()
    sel = select(q, C, 3, method="similarity", groups=groups, max_per_group=1)
    assert sel.indices.tolist() == [0, 3, 4]
    two = select(q, C, 3, method="similarity", groups=groups, max_per_group=2)
    assert two.indices.tolist() == [0, 2, 3]


def test_cap_stops_a_selection_short_and_says_why():
    q, C, groups = three_chunks_of_a()
    for method in ALL_METHODS:
        sel = select(q, C, 6, method=method, groups=groups, max_per_group=1, **options(method))
        assert sel.info["max_per_group"] == 1 and sel.info["feasible"] == 4
        assert sel.info["stopped"] == "max_per_group"
        assert len(sel) <= 4
        if method in GREEDY:
            assert len(sel) == 4
    ok = select(q, C, 4, method="vrsd", groups=groups, max_per_group=1)
    assert "stopped" not in ok.info and len(ok) == 4


def test_label_types_do_not_matter():
    rng = np.random.default_rng(0)
    q, C = rng.standard_normal(5), rng.standard_normal((12, 5))
    ints = rng.integers(0, 4, 12)
    as_str = [f"doc-{i}" for i in ints]
    as_tuple = [("doc", int(i)) for i in ints]
    for method in ALL_METHODS:
        opts = options(method)
        ref = select(q, C, 5, method=method, groups=ints, max_per_group=2, **opts)
        for labels in (ints.tolist(), as_str, np.array(as_str), as_tuple, ints.astype(float)):
            other = select(q, C, 5, method=method, groups=labels, max_per_group=2, **opts)
            assert other.indices.tolist() == ref.indices.tolist(), (method, labels)


def test_no_cap_means_no_change():
    rng = np.random.default_rng(1)
    q, C = rng.standard_normal(6), rng.standard_normal((15, 6))
    groups = rng.integers(0, 3, 15)
    for method, opts in VARIANTS:
        plain = select(q, C, 6, method=method, **opts)
        labels_only = select(q, C, 6, method=method, groups=groups, **opts)
        loose = select(q, C, 6, method=method, groups=groups, max_per_group=15, **opts)
        assert plain.indices.tolist() == labels_only.indices.tolist() == loose.indices.tolist()
        assert_scores_close(plain.gains, labels_only.gains)
        assert labels_only.info == approx_scores(plain.info)
        assert_scores_close(loose.gains, plain.gains)


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("method", GREEDY)
def test_capped_greedy_agrees_with_the_reference(method, cases_for, ref):
    rng = np.random.default_rng(zlib.crc32(method.encode()))
    max_n = 9 if method == "vrsd_exact" else 24
    for case in cases_for(zlib.crc32(method.encode()) + 1, 60, max_n=max_n,
                          with_relevance=method in ("similarity", "mmr", "dpp")):
        n = len(case.candidates)
        groups = rng.integers(0, max(1, n // 2), n).tolist()
        cap = int(rng.integers(1, 4))
        kw = {} if case.relevance is None else {"relevance": case.relevance}
        got = select(case.query, case.candidates, case.k, method=method, normalize=case.normalize,
                     groups=groups, max_per_group=cap, **kw)
        want = ref.by_name[method](case.query, case.candidates, case.k,
                                   normalize=case.normalize, groups=groups,
                                   max_per_group=cap, **kw)
        assert got.indices.tolist() == want.indices, (case, groups, cap)
        assert_scores_close(got.gains, want.gains)
        assert len(got) == min(max(case.k, 0), feasible(groups, cap))
        if method == "vrsd_exact":
            assert got.info["subsets"] == want.info.get("subsets", 0)


def test_capped_swap_is_a_feasible_local_optimum(cases_for, ref):
    rng = np.random.default_rng(5)
    for case in cases_for(77, 60, max_n=14):
        n = len(case.candidates)
        groups = rng.integers(0, max(1, n // 3), n).tolist()
        cap = int(rng.integers(1, 3))
        greedy = select(case.query, case.candidates, case.k, method="vrsd",
                        normalize=case.normalize, groups=groups, max_per_group=cap)
        swap = select(case.query, case.candidates, case.k, method="vrsd",
                      normalize=case.normalize, groups=groups, max_per_group=cap, refine="swap")
        assert counts_ok(swap.indices, groups, cap)
        assert sorted(swap.indices.tolist()) != [] or len(greedy) == 0
        assert len(swap) == len(greedy)
        assert swap.objective >= greedy.objective - 1e-12
        assert_no_better_swap(ref, case, swap.indices.tolist(),
                              lambda trial, g=groups, c=cap: counts_ok(trial, g, c))


def assert_no_better_swap(ref, case, chosen: list[int], allowed) -> None:
    """No exchange of one chosen and one other candidate that ``allowed`` accepts
    raises the objective: ``chosen`` is a local optimum of the feasible sets."""
    q, C = ref.working(case.query, case.candidates, case.normalize)
    current = ref.sum_cos(q, C, chosen)
    for a, j in itertools.product(range(len(chosen)), range(len(C))):
        if j in chosen:
            continue
        trial = chosen[:a] + [j] + chosen[a + 1:]
        if allowed(trial):
            assert ref.sum_cos(q, C, trial) <= current + 1e-9 * max(1.0, abs(current))


# --------------------------------------------------------------------------- properties

@st.composite
def capped_problems(draw, max_n: int = 12):
    """``test_properties``' problems, with a group label per candidate and a cap."""
    Q, X, k = draw(problems(max_n))
    B, n = X.shape[:2]
    groups = draw(hnp.arrays(np.int64, (B, n), elements=st.integers(0, 3)))
    cap = draw(st.integers(1, 3))
    return Q, X, groups, cap, k


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=capped_problems())
def test_no_group_ever_exceeds_its_cap(data):
    Q, X, groups, cap, k = data
    for method, opts in VARIANTS:
        if method == "vrsd_exact" and X.shape[1] > 9:
            continue
        singles = []
        for b in range(len(Q)):
            labels = groups[b].tolist()
            sel = select(Q[b], X[b], k, method=method, groups=labels, max_per_group=cap, **opts)
            idx = sel.indices.tolist()
            assert counts_ok(idx, labels, cap), (method, idx, labels)
            assert len(set(idx)) == len(idx)
            want = min(max(k, 0), feasible(labels, cap))
            assert len(idx) == want if method in GREEDY else len(idx) <= want
            again = select(Q[b], X[b], k, method=method, groups=labels, max_per_group=cap,
                           **opts)
            assert again.indices.tolist() == idx
            f32 = select(Q[b].astype(np.float32), X[b].astype(np.float32), k, method=method,
                         groups=labels, max_per_group=cap, **opts)
            assert counts_ok(f32.indices, labels, cap)
            singles.append(sel)
        batch = select_batch(Q, X, k, method=method, groups=groups, max_per_group=cap, **opts)
        for s, t in zip(batch, singles, strict=True):
            assert s.indices.tolist() == t.indices.tolist()
            assert_scores_close(s.gains, t.gains)
            assert same_info(s.info, t.info)


@pytest.mark.parametrize("method,opts", VARIANTS)
def test_masked_capped_batch_equals_single_calls(method, opts):
    """Padding rows may carry any label (None included); they neither count nor appear."""
    rng = np.random.default_rng(zlib.crc32(repr((method, opts, "cap")).encode()))
    for _ in range(20):
        B, n, d = int(rng.integers(1, 5)), int(rng.integers(1, 10)), int(rng.integers(1, 5))
        Q, X = rng.standard_normal((B, d)), rng.standard_normal((B, n, d))
        mask = rng.random((B, n)) < 0.7
        labels = [[f"s{int(g)}" if mask[b, i] else None for i, g in enumerate(row)]
                  for b, row in enumerate(rng.integers(0, 3, (B, n)))]
        k, cap = int(rng.integers(0, n + 2)), int(rng.integers(1, 3))
        batch = select_batch(Q, X, k, method=method, mask=mask, groups=labels,
                             max_per_group=cap, **opts)
        for b in range(B):
            real = np.flatnonzero(mask[b])
            single = select(Q[b], X[b, real], k, method=method,
                            groups=[labels[b][i] for i in real], max_per_group=cap, **opts)
            assert batch[b].indices.tolist() == real[single.indices].tolist()
            assert same_info(batch[b].info, single.info)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("groups", "cap", "name"),
    [
        ([0, 1], 1, "groups"),            # wrong length
        ([0, 1, None, 2], 1, "groups"),   # a candidate without a label
        ([0, 1, float("nan"), 2], 1, "groups"),
        (np.array([0.0, 1.0, np.nan, 2.0]), 1, "groups"),
        ([0, 1, [2], 3], 1, "groups"),    # unhashable
        ("abcd", 1, "groups"),            # a string is not one label per candidate
        (5, 1, "groups"),
        (np.zeros((2, 2)), 1, "groups"),
        ([0, 1, 2, 3], 0, "max_per_group"),
        ([0, 1, 2, 3], -1, "max_per_group"),
        ([0, 1, 2, 3], 1.0, "max_per_group"),
        ([0, 1, 2, 3], True, "max_per_group"),
        ([0, 1, 2, 3], "1", "max_per_group"),
        (None, 1, "max_per_group"),       # a cap needs labels
    ],
)
def test_bad_group_input(groups, cap, name):
    rng = np.random.default_rng(0)
    q, C = rng.standard_normal(3), rng.standard_normal((4, 3))
    for method in ALL_METHODS:
        with pytest.raises(ValueError, match=f"^{name}:"):
            select(q, C, 2, method=method, groups=groups, max_per_group=cap)


def test_bad_batch_groups():
    Q, X = np.ones((2, 3)), np.ones((2, 4, 3))
    for groups in ([[0, 1, 2, 3]], [[0, 1, 2, 3], [0, 1]], np.zeros((2, 3)), [[0] * 4, "abcd"]):
        with pytest.raises(ValueError, match="^groups:"):
            select_batch(Q, X, 2, groups=groups, max_per_group=1)
    with pytest.raises(ValueError, match="^groups: set 1, candidate 2"):
        select_batch(Q, X, 2, groups=[[0] * 4, [0, 1, None, 3]], max_per_group=1)
