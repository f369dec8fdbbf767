"""The core's MMR is LangChain's MMR rule: same picks, same order, on the same arrays.

LangChain's ``maximal_marginal_relevance`` is the reference users know; the
core only adds speed, scores and tie handling. Random float64 data has no
near-ties, so the pick lists must agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from vrsd_core import select


@pytest.mark.parametrize("lambda_mult", [0.0, 0.2, 0.5, 0.7, 1.0])
def test_core_mmr_picks_what_langchain_picks(lambda_mult):
    rng = np.random.default_rng(int(lambda_mult * 10))
    for _ in range(40):
        n, d = int(rng.integers(1, 60)), int(rng.integers(2, 40))
        k = int(rng.integers(1, n + 2))
        centres = rng.normal(size=(3, d))
        C = centres[rng.integers(0, 3, n)] + 0.3 * rng.normal(size=(n, d))
        q = rng.normal(size=d)
        expected = maximal_marginal_relevance(q, C.tolist(), lambda_mult=lambda_mult, k=k)
        got = select(q, C, k, method="mmr", lambda_mult=lambda_mult).indices.tolist()
        assert got == expected, (n, d, k)
