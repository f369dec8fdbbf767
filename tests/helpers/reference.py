"""The checks of a selection against a plain reference's answer (``tests/unit_tests/core/
conftest.py``'s ``ref``): indices exactly, scores within float64 rounding."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.helpers.approx import approx_scores, assert_scores_close


def check_against(sel: Any, expected: Any, case: Any, i: int) -> None:
    """``sel`` (a ``Selection``) has the reference's picks, gains and objective."""
    where = f"case {i}: {case!r}"
    assert sel.indices.tolist() == expected.indices, where
    assert_scores_close(sel.gains, expected.gains, err_msg=where)
    assert sel.objective == approx_scores(expected.objective), where
    assert sel.indices.dtype == np.int64 and sel.gains.dtype == np.float64


def check_relevance(sel: Any, case: Any, ref: Any, i: int) -> None:
    """Selection.relevance is each pick's cosine to the query (or the given relevance)."""
    q, C = ref.working(case.query, case.candidates, case.normalize)
    want = (
        [float(case.relevance[j]) for j in sel.indices]
        if case.relevance is not None
        else [float(C[j] @ q) for j in sel.indices]
    )
    assert_scores_close(sel.relevance, want, err_msg=f"case {i}")


def matches_reference(ref: Any, case: Any, i: int, method: str, **options: Any) -> tuple[Any, Any]:
    """``select(..., method=method, **options)`` and the plain reference of that method on
    one case (its relevance, when it has one, and its normalisation), checked alike
    (``check_against``, ``check_relevance``); returns (the selection, the reference's)."""
    from vrsd_core import select

    given = {"normalize": case.normalize, **options}
    if case.relevance is not None:
        given["relevance"] = case.relevance
    sel = select(case.query, case.candidates, case.k, method=method, **given)
    expected = getattr(ref, method)(case.query, case.candidates, case.k, **given)
    check_against(sel, expected, case, i)
    check_relevance(sel, case, ref, i)
    return sel, expected
