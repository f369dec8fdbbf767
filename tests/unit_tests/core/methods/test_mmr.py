"""``mmr`` against the plain reference (``conftest.py``'s ``ref``) over every lambda.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.reference import check_against, check_relevance
from vrsd_core import select

CASES_PER_METHOD = 240


@pytest.mark.parametrize("lambdas", [(0.0, 0.2, 0.5, 0.8, 1.0), "uniform"])
def test_mmr_matches_reference(ref, cases_for, lambdas):
    rng = np.random.default_rng(303)
    for i, case in enumerate(cases_for(304, CASES_PER_METHOD, with_relevance=True)):
        lam = float(rng.uniform()) if lambdas == "uniform" else float(rng.choice(lambdas))
        sel = select(case.query, case.candidates, case.k, method="mmr", lambda_mult=lam,
                     relevance=case.relevance, normalize=case.normalize)
        exp = ref.mmr(case.query, case.candidates, case.k, lambda_mult=lam,
                      relevance=case.relevance, normalize=case.normalize)
        check_against(sel, exp, case, i)
        check_relevance(sel, case, ref, i)
        assert sel.params["lambda_mult"] == lam
