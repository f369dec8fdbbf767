"""vrsd_exact against brute force; refine="swap" never worse than greedy and a local optimum."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from tests.helpers.reference import check_against
from vrsd_core import select
from vrsd_core.methods.vrsd_exact import MAX_SUBSETS

CASES = 240


def test_exact_is_the_brute_force_optimum(ref, cases_for):
    """Objective and set equal the best over itertools.combinations, and no set beats it."""
    for i, case in enumerate(cases_for(811, 200, max_n=10)):
        sel = select(case.query, case.candidates, case.k, method="vrsd_exact",
                     normalize=case.normalize)
        q, C = ref.working(case.query, case.candidates, case.normalize)
        n, kk = len(C), min(max(case.k, 0), len(C))
        values = {s: ref.sum_cos(q, C, s) for s in itertools.combinations(range(n), kk)}
        best = max(values.values())
        assert sel.objective == approx_scores(best), f"case {i}"
        assert values[tuple(sorted(sel.indices.tolist()))] == approx_scores(best)


def test_exact_refuses_past_the_subset_limit():
    rng = np.random.default_rng(0)
    C, q = rng.standard_normal((40, 4)), rng.standard_normal(4)
    assert math.comb(40, 10) > MAX_SUBSETS
    with pytest.raises(ValueError, match=r"max_subsets") as err:
        select(q, C, 10, method="vrsd_exact")
    assert "C(40, 10)" in str(err.value)
    # A lower limit is honoured, and a problem at the limit runs.
    with pytest.raises(ValueError, match="max_subsets"):
        select(q, C[:12], 3, method="vrsd_exact", max_subsets=219)
    assert len(select(q, C[:12], 3, method="vrsd_exact", max_subsets=220)) == 3


@pytest.mark.parametrize("bad", [0, -1, 2.5, "10", True])
def test_exact_rejects_bad_max_subsets(bad):
    with pytest.raises(ValueError, match="max_subsets"):
        select(np.ones(3), np.eye(3), 2, method="vrsd_exact", max_subsets=bad)


def _swap_is_local_optimum(ref, q, C, chosen, objective):
    """No exchange of one chosen and one unchosen candidate improves the objective."""
    chosen = list(chosen)
    others = [j for j in range(len(C)) if j not in chosen]
    for a in range(len(chosen)):
        for j in others:
            trial = chosen[:a] + [j] + chosen[a + 1:]
            value = ref.sum_cos(q, C, trial)
            assert value <= objective + 1e-9 * max(1.0, abs(objective)), (chosen, a, j)


def test_swap_never_lowers_the_greedy_and_ends_at_a_local_optimum(ref, cases_for):
    improved = 0
    for i, case in enumerate(cases_for(912, 240, max_n=20)):
        greedy = select(case.query, case.candidates, case.k, method="vrsd",
                        normalize=case.normalize)
        swap = select(case.query, case.candidates, case.k, method="vrsd", refine="swap",
                      normalize=case.normalize)
        where = f"case {i}: {case!r}"
        assert len(swap) == len(greedy), where
        assert swap.objective >= greedy.objective - 1e-12, where
        q, C = ref.working(case.query, case.candidates, case.normalize)
        _swap_is_local_optimum(ref, q, C, swap.indices.tolist(), swap.objective)
        if len(swap):
            assert swap.info["greedy_objective"] == approx_scores(greedy.objective)
            assert swap.info["swap_limit_reached"] is False
            # The swapped set is listed in the order the greedy would pick it.
            inner = ref.vrsd(q, C[swap.indices], len(swap), normalize=False)
            assert inner.indices == list(range(len(swap))), where
            assert_scores_close(swap.gains, inner.gains)
            assert swap.objective == approx_scores(ref.sum_cos(q, C, swap.indices))
            if swap.info["swaps"]:
                improved += 1
                assert swap.objective > greedy.objective
            else:
                assert swap.indices.tolist() == greedy.indices.tolist(), where
    assert improved >= 5  # the cases include ones where the greedy is not locally optimal


def test_greedy_swap_and_exact_are_ordered(cases_for):
    """greedy <= swap <= exact on every case small enough to enumerate."""
    for case in cases_for(1013, 120, max_n=10):
        args = (case.query, case.candidates, case.k)
        g = select(*args, method="vrsd", normalize=case.normalize).objective
        s = select(*args, method="vrsd", refine="swap", normalize=case.normalize).objective
        e = select(*args, method="vrsd_exact", normalize=case.normalize).objective
        assert g <= s + 1e-12 and s <= e + 1e-9


def test_swap_limit_is_reported():
    for seed in range(50):
        rng = np.random.default_rng(seed)
        C, q = rng.standard_normal((25, 3)), rng.standard_normal(3)
        free = select(q, C, 6, method="vrsd", refine="swap")
        if free.info["swaps"] >= 1:
            capped = select(q, C, 6, method="vrsd", refine="swap", max_swaps=0)
            assert capped.info["swap_limit_reached"] is True and capped.info["swaps"] == 0
            assert capped.objective == pytest.approx(free.info["greedy_objective"])
            return
    pytest.fail("no case where the swap search moves")


@pytest.mark.parametrize("opts", [{"refine": "2opt"}, {"max_swaps": -1}, {"max_swaps": 1.5}])
def test_swap_rejects_bad_options(opts):
    name = next(iter(opts))
    with pytest.raises(ValueError, match=name):
        select(np.ones(3), np.eye(3), 2, method="vrsd", **opts)


def test_vrsd_exact_matches_brute_force(ref, cases_for):
    for i, case in enumerate(cases_for(608, CASES, max_n=11)):
        sel = select(case.query, case.candidates, case.k, method="vrsd_exact",
                     normalize=case.normalize)
        exp = ref.vrsd_exact(case.query, case.candidates, case.k, normalize=case.normalize)
        check_against(sel, exp, case, i)
        if len(sel):
            assert sel.info["subsets"] == exp.info["subsets"]
