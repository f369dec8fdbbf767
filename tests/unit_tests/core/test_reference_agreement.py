"""The core against plain reference implementations on hundreds of random cases.

Cases cycle through Gaussian, clustered, exact-duplicate, small-integer lattice
(many exact ties) and mirrored (equal relevance) candidate sets, with k from 0
to n + 2 and 15% unnormalised geometry. Indices must agree exactly; gains and
objectives within float64 rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, assert_scores_close
from vrsd_core import select

CASES_PER_METHOD = 240


def _check(sel, expected, case, i, *, relevance=None):
    where = f"case {i}: {case!r}"
    assert sel.indices.tolist() == expected.indices, where
    assert_scores_close(sel.gains, expected.gains, err_msg=where)
    assert sel.objective == approx_scores(expected.objective), where
    assert sel.indices.dtype == np.int64 and sel.gains.dtype == np.float64


def _rel_check(sel, case, ref, i):
    """Selection.relevance is each pick's cosine to the query (or the given relevance)."""
    q, C = ref.working(case.query, case.candidates, case.normalize)
    want = (
        [float(case.relevance[j]) for j in sel.indices]
        if case.relevance is not None
        else [float(C[j] @ q) for j in sel.indices]
    )
    assert_scores_close(sel.relevance, want, err_msg=f"case {i}")


def test_similarity_matches_reference(ref, cases_for):
    for i, case in enumerate(cases_for(101, CASES_PER_METHOD, with_relevance=True)):
        sel = select(case.query, case.candidates, case.k, method="similarity",
                     relevance=case.relevance, normalize=case.normalize)
        exp = ref.similarity(case.query, case.candidates, case.k,
                             relevance=case.relevance, normalize=case.normalize)
        _check(sel, exp, case, i)
        _rel_check(sel, case, ref, i)


def test_vrsd_matches_algorithm_1(ref, cases_for):
    for i, case in enumerate(cases_for(202, CASES_PER_METHOD)):
        sel = select(case.query, case.candidates, case.k, method="vrsd", normalize=case.normalize)
        exp = ref.vrsd(case.query, case.candidates, case.k, normalize=case.normalize)
        _check(sel, exp, case, i)
        _rel_check(sel, case, ref, i)
        # For vrsd the gain of the last pick is the objective of the set.
        if len(sel):
            assert sel.gains[-1] == approx_scores(sel.objective)


@pytest.mark.parametrize("lambdas", [(0.0, 0.2, 0.5, 0.8, 1.0), "uniform"])
def test_mmr_matches_reference(ref, cases_for, lambdas):
    rng = np.random.default_rng(303)
    for i, case in enumerate(cases_for(304, CASES_PER_METHOD, with_relevance=True)):
        lam = float(rng.uniform()) if lambdas == "uniform" else float(rng.choice(lambdas))
        sel = select(case.query, case.candidates, case.k, method="mmr", lambda_mult=lam,
                     relevance=case.relevance, normalize=case.normalize)
        exp = ref.mmr(case.query, case.candidates, case.k, lambda_mult=lam,
                      relevance=case.relevance, normalize=case.normalize)
        _check(sel, exp, case, i)
        _rel_check(sel, case, ref, i)
        assert sel.params["lambda_mult"] == lam


@pytest.mark.parametrize("thetas", [(0.0, 0.3, 0.5, 0.8, 0.95), "uniform"])
def test_dpp_matches_fast_greedy_map(ref, cases_for, thetas):
    rng = np.random.default_rng(405)
    fills = 0
    for i, case in enumerate(cases_for(406, CASES_PER_METHOD, with_relevance=True)):
        theta = float(rng.uniform(0, 0.99)) if thetas == "uniform" else float(rng.choice(thetas))
        sel = select(case.query, case.candidates, case.k, method="dpp", theta=theta,
                     relevance=case.relevance, normalize=case.normalize)
        exp = ref.dpp(case.query, case.candidates, case.k, theta=theta,
                      relevance=case.relevance, normalize=case.normalize)
        _check(sel, exp, case, i)
        _rel_check(sel, case, ref, i)
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


def test_vrsd_exact_matches_brute_force(ref, cases_for):
    for i, case in enumerate(cases_for(608, CASES_PER_METHOD, max_n=11)):
        sel = select(case.query, case.candidates, case.k, method="vrsd_exact",
                     normalize=case.normalize)
        exp = ref.vrsd_exact(case.query, case.candidates, case.k, normalize=case.normalize)
        _check(sel, exp, case, i)
        if len(sel):
            assert sel.info["subsets"] == exp.info["subsets"]


def test_float32_input_agrees_on_clear_cases(cases_for, ref):
    """float32 arrays give the float64 answer whenever the float64 scores have no near-tie."""
    agreed = 0
    for case in cases_for(709, 100):
        if case.kind != "gaussian":
            continue
        exp = ref.vrsd(case.query, case.candidates, case.k, normalize=case.normalize)
        sel = select(case.query.astype(np.float32), case.candidates.astype(np.float32), case.k,
                     method="vrsd", normalize=case.normalize)
        if sel.indices.tolist() == exp.indices:
            agreed += 1
        np.testing.assert_allclose(sel.objective, exp.objective, atol=1e-3)
    assert agreed >= 15
