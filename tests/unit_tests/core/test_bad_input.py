"""Every malformed input raises ValueError naming the argument; edge sizes behave."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import METHOD_INFO, method_defaults, select, select_batch

CORE_METHODS = ("similarity", "vrsd", "vrsd_exact", "mmr", "dpp")
Q = np.array([1.0, 0.5, 0.0])
C = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 0.0]])


def raises(name: str):
    """ValueError whose message starts with the argument's name."""
    return pytest.raises(ValueError, match=rf"^{name}\b")


def nan_at(arr: np.ndarray, pos, value=np.nan) -> np.ndarray:
    out = np.array(arr, dtype=np.float64)
    out[pos] = value
    return out


@pytest.mark.parametrize("method", CORE_METHODS)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_query_or_candidates(method, value):
    with raises("query"):
        select(nan_at(Q, 1, value), C, 2, method=method)
    with raises("candidates"):
        select(Q, nan_at(C, (2, 1), value), 2, method=method)
    with raises("queries"):
        select_batch(nan_at(Q[None], (0, 0), value), C[None], 2, method=method)
    with raises("candidates"):
        select_batch(Q[None], nan_at(C[None], (0, 3, 2), value), 2, method=method)


@pytest.mark.parametrize("method", CORE_METHODS)
def test_zero_vectors(method):
    with raises("query") as err:
        select(np.zeros(3), C, 2, method=method)
    assert "zero" in str(err.value)
    with raises("candidates") as err:
        select(Q, nan_at(C, 2, 0.0), 2, method=method)
    assert "row 2" in str(err.value)
    with raises("candidates") as err:
        select_batch(np.stack([Q, Q]), np.stack([C, nan_at(C, 1, 0.0)]), 2, method=method)
    assert "set 1, row 1" in str(err.value)


def test_zero_vectors_are_fine_without_normalising_only_if_not_candidates():
    # Zero vectors have no direction in either geometry.
    with raises("candidates"):
        select(Q, nan_at(C, 0, 0.0), 2, normalize=False)


@pytest.mark.parametrize("query,cands,name", [
    (Q, [[1.0, 0.0, 0.0], [1.0, 0.0]], "candidates"),  # ragged rows
    ([1.0, [0.5, 0.0]], C, "query"),  # ragged query
    (Q, C[:, :2], "candidates"),  # dimension mismatch
    (Q[:2], C, "candidates"),
    (Q[None, :], C, "query"),  # wrong ndim
    (Q, C[0], "candidates"),
    (Q, C[None], "candidates"),
    (np.float64(1.0), C, "query"),
    (np.zeros(0), np.zeros((2, 0)), "query"),  # no dimensions
    (Q.astype(str), C, "query"),  # strings
    (Q, C.astype(complex), "candidates"),  # complex
    (["a", "b", "c"], C, "query"),
    (Q, [[None, 1.0, 2.0]] * 4, "candidates"),
])
def test_malformed_arrays(query, cands, name):
    with raises(name):
        select(query, cands, 2)


@pytest.mark.parametrize("queries,cands,name", [
    (Q, C[None], "queries"),  # 1-D queries
    (Q[None], C, "candidates"),  # 2-D candidate stack
    (np.stack([Q, Q]), C[None], "candidates"),  # B mismatch
    (Q[None, :2], C[None], "candidates"),  # d mismatch
])
def test_malformed_batches(queries, cands, name):
    with raises(name):
        select_batch(queries, cands, 2)


@pytest.mark.parametrize("k", [2.5, "2", None, [2], np.nan, 1j])
def test_k_must_be_an_integer(k):
    with raises("k"):
        select(Q, C, k)


def test_integral_k_forms_are_accepted():
    for k in (2, np.int64(2), np.int32(2), 2.0, np.float32(2.0)):
        assert len(select(Q, C, k)) == 2
    with raises("k"):
        select(Q, C, True)


@pytest.mark.parametrize("value", [-0.01, 1.01, np.nan, np.inf, "0.5", None, True])
def test_lambda_mult_range(value):
    with raises("lambda_mult"):
        select(Q, C, 2, method="mmr", lambda_mult=value)


@pytest.mark.parametrize("value", [-0.01, 1.0, 1.5, np.nan, "0.5", None])
def test_theta_range(value):
    with raises("theta"):
        select(Q, C, 2, method="dpp", theta=value)


def test_boundary_parameters_are_accepted():
    assert len(select(Q, C, 2, method="mmr", lambda_mult=0)) == 2
    assert len(select(Q, C, 2, method="mmr", lambda_mult=1)) == 2
    assert len(select(Q, C, 2, method="dpp", theta=0.0)) == 2
    assert len(select(Q, C, 2, method="dpp", theta=0.999999)) == 2


@pytest.mark.parametrize("method", ["VRSD", "maximal_marginal_relevance", "", None, 3])
def test_unknown_method(method):
    with raises("method") as err:
        select(Q, C, 2, method=method)
    assert "vrsd" in str(err.value)  # the message lists the choices
    with raises("method"):
        select_batch(Q[None], C[None], 2, method=method)


@pytest.mark.parametrize("method,option", [
    ("vrsd", "lambda_mult"), ("mmr", "theta"), ("dpp", "lambda_mult"), ("similarity", "refine"),
    ("vrsd_exact", "refine"), ("vrsd", "fetch_k"),
])
def test_unknown_option(method, option):
    with raises(option) as err:
        select(Q, C, 2, method=method, **{option: 0.5})
    assert method in str(err.value)


@pytest.mark.parametrize("method", ["vrsd", "vrsd_exact"])
def test_relevance_is_refused_by_geometric_methods(method):
    with raises("relevance"):
        select(Q, C, 2, method=method, relevance=np.ones(4))
    with raises("relevance"):
        select_batch(Q[None], C[None], 2, method=method, relevance=np.ones((1, 4)))


@pytest.mark.parametrize("relevance", [np.ones(3), np.ones((1, 3)), np.ones((2, 2, 4)),
                                       [[1, 2, 3, 4], [1, np.nan, 2, 3]], [1, 2, np.nan, 3],
                                       ["a", "b", "c", "d"], [1, 2, 3, [4]]])
def test_bad_relevance(relevance):
    with raises("relevance"):
        select(Q, C, 2, method="mmr", relevance=relevance)


@pytest.mark.parametrize("mask", [
    np.ones((1, 3), bool), np.ones(4, bool), [[1, 2, 0, 1]], [[0.5, 1.0, 1.0, 1.0]],
    [["a", "b", "c", "d"]],
])
def test_bad_mask(mask):
    with raises("mask"):
        select_batch(Q[None], C[None], 2, mask=mask)


def test_empty_and_oversized_requests():
    for method in CORE_METHODS:
        for k in (0, -3):
            sel = select(Q, C, k, method=method)
            assert len(sel) == 0 and sel.objective == 0.0 and sel.gains.shape == (0,)
        for empty in (np.zeros((0, 3)), []):
            assert len(select(Q, empty, 3, method=method)) == 0
        for k in (4, 5, 100):
            sel = select(Q, C, k, method=method)
            assert sorted(sel.indices.tolist()) == [0, 1, 2, 3], (method, k)


def test_every_registered_method_refuses_bad_input_too():
    """Methods added later share the same checks (they live in prepare and _run)."""
    for method in METHOD_INFO:
        with raises("candidates"):
            select(Q, nan_at(C, (0, 0)), 2, method=method)
        with raises("k"):
            select(Q, C, 1.5, method=method)
        with raises("no_such_option"):
            select(Q, C, 2, method=method, no_such_option=1)
        assert isinstance(method_defaults(method), dict)


@pytest.mark.parametrize(
    "method,options,name",
    [
        ("mmr", {"normalize": False}, "normalize"),  # select's own argument, not an option
        ("mmr", {"relevance": [1.0]}, "relevance"),
        ("mmr", {"lambda_mult": 2}, "lambda_mult"),
        ("vrsd", {"theta": 0.5}, "theta"),
        ("vrsd", {"prior": "field"}, "prior"),
        ("dpp", {"prior_weight": 0.5}, "prior_weight"),  # a weight needs a prior
        ("nope", {}, "method"),
    ],
)
def test_check_options_refuses_what_select_would(method, options, name):
    from vrsd_core import check_options

    with pytest.raises(ValueError, match=f"^{name}"):
        check_options(method, options)


def test_check_options_accepts_a_prior_before_the_candidates_are_known():
    from vrsd_core import check_options

    check_options("dpp", {"prior": "any per-candidate source", "prior_weight": 0.3})
    check_options("vrsd", {"refine": "swap"})


@pytest.mark.parametrize("value", [2.0, "3", True, -1, None])
def test_check_count_is_strict(value):
    from vrsd_core import check_count

    with pytest.raises(ValueError, match="^top_n"):
        check_count(value, "top_n")
