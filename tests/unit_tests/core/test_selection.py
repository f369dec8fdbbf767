"""``Selection``: its objective is computed when first read, from copies taken at the
call, and the result stays a plain frozen value (equal, copied, pickled, refused
assignment) whatever the method."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from vrsd_core import METHOD_INFO, Selection, select, select_batch
from vrsd_core.metrics import sum_vector_similarity


def pool(seed: int = 0, n: int = 12, d: int = 6, dtype: type = np.float64):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d).astype(dtype), rng.standard_normal((n, d)).astype(dtype)


@pytest.mark.parametrize("method", sorted(set(METHOD_INFO) - {"vrsd_exact"}))
@pytest.mark.parametrize("normalize", [True, False])
def test_objective_is_the_cosine_of_the_picks_sum(method, normalize):
    q, C = pool()
    options = {"seed": 0} if method in {"top_m", "top_p"} else {}
    sel = select(q, C, 4, method=method, normalize=normalize, **options)
    assert len(sel)
    rows = C[sel.indices]
    if normalize:
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    expect = sum_vector_similarity(q, rows.sum(axis=0, keepdims=True), normalize=True)
    assert sel.objective == pytest.approx(expect, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_later_changes_to_the_callers_arrays_do_not_reach_the_objective(normalize, dtype):
    q, C = pool(dtype=dtype)
    expect = select(q.copy(), C.copy(), 4, method="similarity", normalize=normalize).objective
    sel = select(q, C, 4, method="similarity", normalize=normalize)
    q[:] = 1.0
    C[:] = -C
    assert sel.objective == pytest.approx(expect, rel=1e-9)  # mutated, it is far from this
    Q, Cs = (a[None].copy() for a in pool(dtype=dtype))
    batch = select_batch(Q, Cs, 4, method="similarity", normalize=normalize)[0]
    Q[:] = 1.0
    Cs[:] = -Cs
    assert batch.objective == pytest.approx(expect, rel=1e-6)


def test_an_empty_selection_has_objective_zero():
    q, C = pool()
    assert select(q, C, 0).objective == pytest.approx(0.0, abs=1e-15)


def test_a_selection_is_a_frozen_value():
    q, C = pool()
    sel = select(q, C, 4, method="vrsd")  # vrsd sets its objective at once
    lazy = select(q, C, 4, method="similarity")  # the others on first read
    for s in (sel, lazy):
        with pytest.raises(dataclasses.FrozenInstanceError):
            s.objective = 0.5  # type: ignore[misc]
        for twin in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
            assert isinstance(twin.objective, float)
            assert twin.objective == pytest.approx(s.objective, rel=1e-12)
            assert twin.indices.tolist() == s.indices.tolist()
        assert s.to_dict()["objective"] == pytest.approx(s.objective, rel=1e-12)
        assert dataclasses.asdict(s)["objective"] == pytest.approx(s.objective, rel=1e-12)
        assert "objective=" in repr(s)
    assert [f.name for f in dataclasses.fields(Selection)] == [
        "indices", "gains", "relevance", "objective", "method", "params", "info"]


def test_a_selection_built_by_hand_keeps_its_float():
    made = Selection(indices=np.array([0]), gains=np.array([1.0]), relevance=np.array([1.0]),
                     objective=0.25, method="similarity")
    assert isinstance(made.objective, float)
    assert made.objective == pytest.approx(0.25, rel=1e-12)
    with pytest.raises(TypeError):
        Selection(indices=np.array([0]), gains=np.array([1.0]),  # objective is required
                  relevance=np.array([1.0]), method="similarity")  # type: ignore[call-arg]
