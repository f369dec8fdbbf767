"""The method contract (``vrsd_core.methods``), checked for every registered method.

A new method registered in ``vrsd_core.registry`` is picked up here with its default
options (plus a fixed seed when it samples): only real candidates, no duplicates,
the count, ties toward the lower index, the per-group cap, the token budget, the
batch equal to single calls (with padding anywhere) and no input written.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.helpers.approx import assert_scores_close
from vrsd_core import METHOD_INFO, select, select_batch

from .test_groups import same_info
from .test_properties import problems


def options(name: str) -> dict:
    return {"seed": 0} if METHOD_INFO[name].seeded else {}


def exact_count(name: str) -> bool:
    """A deterministic method that does not sample returns every pick it may."""
    info = METHOD_INFO[name]
    return info.deterministic and not info.seeded


@st.composite
def constrained(draw):
    """``test_properties``' problems with, each maybe, labels and a cap, token counts
    and a budget, and padding rows at random places of the batch."""
    Q, X, k = draw(problems(10))
    B, n = X.shape[:2]
    kw: dict = {}
    if draw(st.booleans()):
        kw["groups"] = draw(hnp.arrays(np.int64, (B, n), elements=st.integers(0, 3)))
        kw["max_per_group"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        kw["token_counts"] = draw(hnp.arrays(np.int64, (B, n), elements=st.integers(0, 30)))
        kw["max_tokens"] = draw(st.integers(0, 90))
    real = draw(hnp.arrays(bool, (B, n), elements=st.booleans()))
    return Q, X, min(k, 4), kw, real


@pytest.mark.parametrize("name", list(METHOD_INFO))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=constrained())
def test_method_contract(name, problem):
    Q, X, k, kw, real = problem
    B, n = X.shape[:2]
    saved = [Q.copy(), X.copy(), real.copy(), *(np.copy(v) for v in kw.values())]
    singles = []
    for b in range(B):
        one = {key: (v[b] if isinstance(v, np.ndarray) else v) for key, v in kw.items()}
        sel = select(Q[b], X[b], k, method=name, **one, **options(name))
        idx = sel.indices.tolist()
        assert len(set(idx)) == len(idx) and all(0 <= i < n for i in idx)
        most = min(max(k, 0), n)
        if "groups" in one:
            labels = one["groups"].tolist()
            assert max(Counter(labels[i] for i in idx).values(), default=0) <= one[
                "max_per_group"]
            most = min(most, sum(min(one["max_per_group"], c)
                                 for c in Counter(labels).values()))
        if "token_counts" in one:
            assert sel.info["tokens_used"] == int(one["token_counts"][idx].sum())
            assert sel.info["tokens_used"] <= one["max_tokens"]
        assert len(idx) <= most
        if exact_count(name) and "token_counts" not in one:
            assert len(idx) == most
        singles.append(sel)
    batch = select_batch(Q, X, k, method=name, **kw, **options(name))
    for one, many in zip(singles, batch, strict=True):
        assert many.indices.tolist() == one.indices.tolist()
        assert_scores_close(many.gains, one.gains)
        assert same_info(many.info, one.info)
    # padding anywhere: the real rows' result is that of a call on the real rows alone
    if real.any():
        padded = select_batch(Q, X, k, method=name, mask=real, **kw, **options(name))
        for b in range(B):
            rows = np.flatnonzero(real[b])
            one = {key: (v[b][rows] if isinstance(v, np.ndarray) else v)
                   for key, v in kw.items()}
            alone = select(Q[b], X[b][rows], k, method=name, **one, **options(name))
            assert padded[b].indices.tolist() == rows[alone.indices].tolist()
    for before, after in zip(saved, [Q, X, real, *kw.values()], strict=True):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("name", [n for n in METHOD_INFO if exact_count(n)])
def test_ties_go_to_the_lower_index(name):
    """Two copies of the most relevant candidate at rows 2 and 5: the first pick is 2."""
    rng = np.random.default_rng(4)
    q = np.array([1.0, 0.0, 0.0, 0.0])
    C = rng.uniform(-1, 1, (8, 4)) * [0.3, 1, 1, 1]  # all clearly less relevant
    C[2] = C[5] = [1.0, 0.1, 0.0, 0.0]
    assert select(q, C, 1, method=name, **options(name)).indices.tolist() == [2]
    assert select(q, C[::-1].copy(), 1, method=name, **options(name)).indices.tolist() == [2]
