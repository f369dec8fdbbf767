"""``mmr`` against the plain reference (``conftest.py``'s ``ref``) over every lambda.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.reference import matches_reference

CASES_PER_METHOD = 240


@pytest.mark.parametrize("lambdas", [(0.0, 0.2, 0.5, 0.8, 1.0), "uniform"])
def test_mmr_matches_reference(ref, cases_for, lambdas):
    rng = np.random.default_rng(303)
    for i, case in enumerate(cases_for(304, CASES_PER_METHOD, with_relevance=True)):
        lam = float(rng.uniform()) if lambdas == "uniform" else float(rng.choice(lambdas))
        sel, _ = matches_reference(ref, case, i, "mmr", lambda_mult=lam)
        assert sel.params["lambda_mult"] == lam
