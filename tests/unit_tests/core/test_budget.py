"""The token budget: ``max_tokens`` + ``token_counts`` for every method."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from tests.helpers.approx import assert_scores_close
from vrsd_core import METHOD_INFO, method_defaults, select, select_batch

from .test_groups import VARIANTS, assert_no_better_swap, counts_ok, same_info

GREEDY = ["similarity", "vrsd", "vrsd_exact", "mmr", "dpp"]


def options(method: str) -> dict:
    return {"seed": 3} if method_defaults(method).get("seed", 0) is None else {}


def fits(indices, tokens, budget) -> bool:
    return int(np.asarray(tokens)[list(indices)].sum()) <= budget


# --------------------------------------------------------------------------- hand-built


def long_best_passage():
    """The most relevant passage is long; two shorter ones follow."""
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([
        [1.0, 0.05, 0.0],  # 0: best, 300 tokens
        [0.9, 0.4, 0.0],   # 1: 100 tokens
        [0.8, 0.0, 0.5],   # 2: 100 tokens
        [0.6, 0.3, 0.3],   # 3: 120 tokens
    ])
    return q, C, np.array([300, 100, 100, 120])


def test_similarity_fills_while_items_fit():
    q, C, tokens = long_best_passage()
    sel = select(q, C, 4, method="similarity", max_tokens=250, token_counts=tokens)
    # 0 never fits (300 > 250); 1 and 2 fit (200); 3 does not fit the 50 left
    assert sel.indices.tolist() == [1, 2]
    assert sel.info["tokens_used"] == 200 and sel.info["max_tokens"] == 250
    assert sel.info["stopped"] == "max_tokens"
    roomy = select(q, C, 4, method="similarity", max_tokens=420, token_counts=tokens)
    # 0 (300) then 1 (400); 2 and 3 do not fit the 20 left
    assert roomy.indices.tolist() == [0, 1] and roomy.info["tokens_used"] == 400


def test_a_skipped_pick_lets_a_later_shorter_one_in():
    q, C, tokens = long_best_passage()
    tokens = np.array([100, 200, 150, 50])
    sel = select(q, C, 4, method="similarity", max_tokens=210, token_counts=tokens)
    # 0 (100), 1 does not fit (300), 2 does not fit (250), 3 fits (150)
    assert sel.indices.tolist() == [0, 3]


@pytest.mark.parametrize("method", list(METHOD_INFO))
def test_budget_that_cannot_bind_changes_nothing(method):
    rng = np.random.default_rng(zlib.crc32(method.encode()))
    q, C = rng.standard_normal(6), rng.standard_normal((11, 6))
    tokens = rng.integers(0, 40, 11)
    k = 4 if method == "vrsd_exact" else 6
    for opts in [o for m, o in VARIANTS if m == method] or [options(method)]:
        plain = select(q, C, k, method=method, **opts)
        loose = select(q, C, k, method=method, max_tokens=int(tokens.sum()),
                       token_counts=tokens, **opts)
        assert loose.indices.tolist() == plain.indices.tolist()
        # a budget takes the batched path: gains equal up to its rounding
        assert_scores_close(loose.gains, plain.gains)
        added = {"max_tokens", "tokens_used", "filled_by_relevance"} - set(plain.info)
        assert same_info({key: v for key, v in loose.info.items() if key not in added},
                         plain.info)
        assert loose.info.get("filled_by_relevance", 0) == plain.info.get("filled_by_relevance", 0)
        assert "stopped" not in loose.info


@pytest.mark.parametrize("method", list(METHOD_INFO))
def test_zero_budget_picks_only_empty_passages(method):
    rng = np.random.default_rng(2)
    q, C = rng.standard_normal(4), rng.standard_normal((7, 4))
    tokens = np.array([5, 0, 3, 0, 9, 1, 2])
    sel = select(q, C, 5, method=method, max_tokens=0, token_counts=tokens, **options(method))
    assert set(sel.indices.tolist()) <= {1, 3}
    assert sel.info["tokens_used"] == 0
    if method in GREEDY:
        assert sorted(sel.indices.tolist()) == [1, 3]


def test_cap_and_budget_combine():
    q = np.array([1.0, 0.0])
    C = np.array([[1.0, 0.0], [1.0, 0.01], [1.0, 0.02], [0.9, 0.4], [0.8, 0.6]])
    groups = ["A", "A", "B", "B", "C"]
    tokens = [10, 10, 50, 10, 10]
    sel = select(q, C, 5, method="similarity", groups=groups, max_per_group=1,
                 max_tokens=30, token_counts=tokens)
    # 0 (A); 1 is A (full); 2 (B) too long for the 20 left; 3 (B); 4 (C)
    assert sel.indices.tolist() == [0, 3, 4]
    assert sel.info["tokens_used"] == 30


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("method", GREEDY)
def test_budgeted_greedy_agrees_with_the_reference(method, cases_for, ref):
    rng = np.random.default_rng(zlib.crc32(method.encode()) + 7)
    max_n = 9 if method == "vrsd_exact" else 24
    for case in cases_for(zlib.crc32(method.encode()) + 3, 60, max_n=max_n,
                          with_relevance=method in ("similarity", "mmr", "dpp")):
        n = len(case.candidates)
        tokens = rng.integers(0, 60, n).tolist()
        budget = int(rng.integers(0, 200))
        extra = {}
        if rng.random() < 0.5:  # half the cases with a cap as well
            extra = {"groups": rng.integers(0, max(1, n // 2), n).tolist(),
                     "max_per_group": int(rng.integers(1, 3))}
        kw = {} if case.relevance is None else {"relevance": case.relevance}
        got = select(case.query, case.candidates, case.k, method=method,
                     normalize=case.normalize, token_counts=tokens, max_tokens=budget,
                     **extra, **kw)
        want = ref.by_name[method](case.query, case.candidates, case.k,
                                   normalize=case.normalize, token_counts=tokens,
                                   max_tokens=budget, **extra, **kw)
        assert got.indices.tolist() == want.indices, (case, tokens, budget, extra)
        assert_scores_close(got.gains, want.gains)
        assert got.info["tokens_used"] == sum(tokens[i] for i in want.indices) <= budget
        if method == "vrsd_exact":
            assert got.info["subsets"] == want.info.get("subsets", 0)


def test_budgeted_swap_is_a_feasible_local_optimum(cases_for, ref):
    rng = np.random.default_rng(11)
    for case in cases_for(78, 60, max_n=14):
        n = len(case.candidates)
        tokens = rng.integers(1, 40, n).tolist()
        budget = int(rng.integers(20, 150))
        groups = rng.integers(0, max(1, n // 3), n).tolist()
        kw = {"token_counts": tokens, "max_tokens": budget}
        if rng.random() < 0.5:
            kw.update(groups=groups, max_per_group=2)
        greedy = select(case.query, case.candidates, case.k, method="vrsd",
                        normalize=case.normalize, **kw)
        swap = select(case.query, case.candidates, case.k, method="vrsd",
                      normalize=case.normalize, refine="swap", **kw)
        assert len(swap) == len(greedy)
        assert fits(swap.indices, tokens, budget)
        assert swap.objective >= greedy.objective - 1e-12
        capped = "groups" in kw
        assert_no_better_swap(
            ref, case, swap.indices.tolist(),
            lambda trial, t=tokens, b=budget, g=groups, c=capped: fits(trial, t, b)
            and (not c or counts_ok(trial, g, 2)))


# --------------------------------------------------------------------------- properties


# Every method keeping the budget on random problems (with caps, padding, batches):
# test_method_contract.


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"max_tokens": 10}, "max_tokens"),
    ({"token_counts": [1, 2, 3]}, "token_counts"),
    ({"max_tokens": -1, "token_counts": [1, 2, 3]}, "max_tokens"),
    ({"max_tokens": 2.5, "token_counts": [1, 2, 3]}, "max_tokens"),
    ({"max_tokens": True, "token_counts": [1, 2, 3]}, "max_tokens"),
    ({"max_tokens": 10, "token_counts": [1, -2, 3]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, 2]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, 2, 3, 4]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, float("nan"), 3]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, float("inf"), 3]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, 2.5, 3]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": ["1", "2", "3"]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [True, False, True]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [[1, 2, 3]]}, "token_counts"),
    ({"max_tokens": 10, "token_counts": [1, [2], 3]}, "token_counts"),
])
def test_bad_budget_input_names_the_argument(kwargs, name):
    q, C = np.ones(2), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=f"^{name}:"):
        select(q, C, 2, method="similarity", **kwargs)


def test_integral_floats_are_counts():
    q, C, tokens = long_best_passage()
    a = select(q, C, 4, method="mmr", max_tokens=250, token_counts=tokens)
    b = select(q, C, 4, method="mmr", max_tokens=250, token_counts=tokens.astype(float))
    assert a.indices.tolist() == b.indices.tolist()


def test_batch_checks_the_shape_per_query():
    Q, X = np.ones((2, 2)), np.ones((2, 3, 2))
    with pytest.raises(ValueError, match="^token_counts:"):
        select_batch(Q, X, 2, max_tokens=5, token_counts=[1, 2, 3])
    with pytest.raises(ValueError, match="^token_counts:"):  # a real row's NaN is refused
        select_batch(Q, X, 2, max_tokens=5, token_counts=[[1, 2, 3], [1, np.nan, 3]],
                     mask=[[True, True, False], [True, True, True]])
