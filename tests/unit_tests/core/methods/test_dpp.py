"""``dpp``: the greedy MAP loop against the plain reference (``conftest.py``'s ``ref``),
its gains as determinant ratios, and a run a budget stops short.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.reference import matches_reference
from vrsd_core import select

CASES_PER_METHOD = 240


@pytest.mark.parametrize("thetas", [(0.0, 0.3, 0.5, 0.8, 0.95), "uniform"])
def test_dpp_matches_fast_greedy_map(ref, cases_for, thetas):
    rng = np.random.default_rng(405)
    fills = 0
    for i, case in enumerate(cases_for(406, CASES_PER_METHOD, with_relevance=True)):
        theta = float(rng.uniform(0, 0.99)) if thetas == "uniform" else float(rng.choice(thetas))
        sel, exp = matches_reference(ref, case, i, "dpp", theta=theta)
        assert sel.info["filled_by_relevance"] == exp.info["filled_by_relevance"], f"case {i}"
        fills += exp.info["filled_by_relevance"] > 0
    # The cases must exercise the relevance fill (k > d, duplicates), not only plain steps.
    assert fills >= 20


def test_dpp_gains_are_determinant_ratios(ref, cases_for):
    """Each dpp gain equals det(L_{Y+j}) / det(L_Y) computed from two determinants
    (on well-conditioned Gaussian cases, where the direct form is accurate)."""
    checked = 0
    for case in cases_for(507, 60):
        if case.kind != "gaussian" or case.relevance is not None:
            continue
        sel = select(case.query, case.candidates, case.k, method="dpp", theta=0.6,
                     normalize=case.normalize)
        idx = sel.indices.tolist()
        for t, (j, g) in enumerate(zip(idx, sel.gains, strict=True)):
            if g < 1e-4:
                break  # near the kernel's rank: two tiny determinants, not accurate
            want = ref.det_ratio(case.query, case.candidates, idx[:t], j, theta=0.6,
                                 normalize=case.normalize)
            assert g == pytest.approx(want, rel=1e-6)
            checked += 1
    assert checked >= 30


@pytest.mark.parametrize("method", ["dpp", "complement"])
def test_a_budget_stops_the_loop_short_with_real_picks(method):
    """A budget that runs out before k picks ends the run there: every index a real,
    distinct candidate, the tokens within the budget."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        n = int(rng.integers(3, 25))
        C, tokens = rng.normal(size=(n, 6)), rng.integers(1, 20, size=n)
        sel = select(rng.normal(size=6), C, n, method=method, token_counts=tokens, max_tokens=30)
        picks = sel.indices.tolist()
        assert len(set(picks)) == len(picks) and all(0 <= p < n for p in picks)
        assert tokens[picks].sum() <= 30 and (len(picks) < n or tokens.sum() <= 30)
