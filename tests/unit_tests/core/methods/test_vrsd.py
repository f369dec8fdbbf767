"""``vrsd``: the paper's Algorithm 1 (the plain reference, ``conftest.py``'s ``ref``), and
float32 input giving the float64 answer where no two scores nearly tie.
"""

from __future__ import annotations

import numpy as np

from tests.helpers.approx import approx_scores
from tests.helpers.reference import matches_reference
from vrsd_core import select

CASES_PER_METHOD = 240


def test_vrsd_matches_algorithm_1(ref, cases_for):
    for i, case in enumerate(cases_for(202, CASES_PER_METHOD)):
        sel, _ = matches_reference(ref, case, i, "vrsd")
        # For vrsd the gain of the last pick is the objective of the set.
        if len(sel):
            assert sel.gains[-1] == approx_scores(sel.objective)


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
