"""The quality prior (RAGSys Algorithm 1) in ``similarity``, ``mmr`` and ``dpp``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.approx import assert_scores_close
from vrsd_core import method_defaults, select, select_batch


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 31))
    d = int(rng.integers(2, 13))
    k = int(rng.integers(1, n + 1))
    q = rng.normal(size=d)
    E = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))  # unnormalised rows
    b = rng.normal(size=n) * rng.choice([0.1, 1.0, 5.0])
    lambda_d = float(rng.choice([0.0, 1.0, rng.uniform()]))
    lambda_b = float(rng.choice([0.0, 1.0, rng.uniform()]))
    return q, E, b, k, lambda_d, lambda_b


@pytest.mark.parametrize("seed", range(240))
def test_mmr_with_prior_is_ragsys_algorithm1(seed, helpers):
    q, E, b, k, lambda_d, lambda_b = _case(seed)
    want, scores = helpers.ragsys_algorithm1(q, E, b, k, lambda_d, lambda_b)
    sel = select(q, E, k, method="mmr", lambda_mult=lambda_d, prior=b, prior_weight=1 - lambda_b)
    assert sel.indices.tolist() == want
    assert_scores_close(sel.gains, scores)


@pytest.mark.parametrize("seed", range(40))
def test_prior_weight_zero_is_plain_mmr(seed):
    q, E, b, k, lambda_d, _ = _case(seed)
    plain = select(q, E, k, method="mmr", lambda_mult=lambda_d)
    for opts in ({"prior": b}, {"prior": b, "prior_weight": 0.0}, {"prior_weight": 0}):
        sel = select(q, E, k, method="mmr", lambda_mult=lambda_d, **opts)
        assert sel.indices.tolist() == plain.indices.tolist()
        assert_scores_close(sel.gains, plain.gains)


def test_similarity_ranks_by_the_blend():
    rng = np.random.default_rng(7)
    q, E = rng.normal(size=8), rng.normal(size=(25, 8))
    b = rng.normal(size=25)
    cos = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
    for w in (0.0, 0.3, 0.7, 1.0):
        sel = select(q, E, 6, method="similarity", prior=b, prior_weight=w)
        v = (1 - w) * cos + w * b
        assert sel.indices.tolist() == np.argsort(-v)[:6].tolist()
        assert_scores_close(sel.gains, v[sel.indices])
        # Selection.relevance stays the plain cosine; the prior is reported per pick.
        assert_scores_close(sel.relevance, cos[sel.indices])
        np.testing.assert_allclose(sel.info["prior"], b[sel.indices])


def test_prior_can_overrule_relevance_in_similarity():
    # Candidate 0 is the query itself, candidate 1 is orthogonal but has a high prior.
    q = np.array([1.0, 0.0])
    E = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.array([0.0, 3.0])
    assert select(q, E, 1, method="similarity").indices.tolist() == [0]
    assert select(q, E, 1, method="similarity", prior=b, prior_weight=0.5).indices.tolist() == [1]


def test_dpp_prior_is_dpp_on_the_blended_relevance():
    rng = np.random.default_rng(11)
    for _ in range(30):
        n, d = int(rng.integers(3, 25)), int(rng.integers(2, 10))
        q, E, b = rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=n)
        w, theta, k = float(rng.uniform()), float(rng.uniform(0, 0.95)), int(rng.integers(1, n))
        cos = (E @ q) / (np.linalg.norm(E, axis=1) * np.linalg.norm(q))
        with_prior = select(q, E, k, method="dpp", theta=theta, prior=b, prior_weight=w)
        by_hand = select(q, E, k, method="dpp", theta=theta, relevance=(1 - w) * cos + w * b)
        assert with_prior.indices.tolist() == by_hand.indices.tolist()
        assert_scores_close(with_prior.gains, by_hand.gains)


def test_dpp_quality_weights_follow_the_prior():
    # Two orthogonal, equally relevant candidates: the prior decides which comes first.
    q = np.array([1.0, 1.0, 0.0])
    E = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    first = select(q, E, 1, method="dpp", theta=0.5, prior=[0.0, 1.0], prior_weight=0.5)
    assert first.indices.tolist() == [1]
    first = select(q, E, 1, method="dpp", theta=0.5, prior=[1.0, 0.0], prior_weight=0.5)
    assert first.indices.tolist() == [0]


def test_prior_combines_with_given_relevance():
    rng = np.random.default_rng(3)
    q, E = rng.normal(size=6), rng.normal(size=(12, 6))
    rel, b = rng.uniform(size=12), rng.normal(size=12)
    sel = select(q, E, 4, method="similarity", relevance=rel, prior=b, prior_weight=0.25)
    assert sel.indices.tolist() == np.argsort(-(0.75 * rel + 0.25 * b))[:4].tolist()
    np.testing.assert_allclose(sel.relevance, rel[sel.indices])


@pytest.mark.parametrize("method", ["similarity", "mmr", "dpp"])
def test_batch_prior_equals_single_calls(method):
    rng = np.random.default_rng(5)
    B, n, d = 4, 15, 7
    Q, X, P = rng.normal(size=(B, d)), rng.normal(size=(B, n, d)), rng.normal(size=(B, n))
    mask = np.ones((B, n), dtype=bool)
    mask[1, 10:] = False
    P[1, 10:] = np.nan  # padding may hold anything
    sels = select_batch(Q, X, 5, method=method, mask=mask, prior=P, prior_weight=0.4)
    for b in range(B):
        keep = np.flatnonzero(mask[b])
        one = select(Q[b], X[b, keep], 5, method=method, prior=P[b, keep], prior_weight=0.4)
        assert keep[one.indices].tolist() == sels[b].indices.tolist()
        assert_scores_close(sels[b].gains, one.gains)


def test_params_show_the_weight_not_the_array():
    rng = np.random.default_rng(0)
    q, E, b = rng.normal(size=4), rng.normal(size=(9, 4)), rng.normal(size=9)
    sel = select(q, E, 3, method="mmr", prior=b, prior_weight=0.2)
    assert sel.params == {"lambda_mult": 0.5, "prior": "given", "prior_weight": 0.2}
    assert select(q, E, 3, method="mmr").params["prior"] is None
    assert method_defaults("dpp") == {"theta": 0.5, "prior": None, "prior_weight": 0.0}
    assert "prior" not in method_defaults("vrsd")


def test_prior_is_not_mutated():
    rng = np.random.default_rng(0)
    q, E = rng.normal(size=4), rng.normal(size=(9, 4))
    b = rng.normal(size=9)
    keep_b, keep_E = b.copy(), E.copy()
    for method in ("similarity", "mmr", "dpp"):
        select(q, E, 3, method=method, prior=b, prior_weight=0.6)
    np.testing.assert_array_equal(b, keep_b)
    np.testing.assert_array_equal(E, keep_E)


@pytest.mark.parametrize("method", ["vrsd", "vrsd_exact"])
@pytest.mark.parametrize("option", [{"prior": np.zeros(5)}, {"prior_weight": 0.5}])
def test_geometric_methods_refuse_a_prior(method, option):
    rng = np.random.default_rng(0)
    name = next(iter(option))
    with pytest.raises(ValueError, match=f"^{name}: method '{method}' takes no quality prior"):
        select(rng.normal(size=3), rng.normal(size=(5, 3)), 2, method=method, **option)


@pytest.mark.parametrize("method", ["threshold", "top_m", "top_p", "cluster"])
def test_sampling_methods_take_no_prior(method):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^prior: "):
        select(rng.normal(size=3), rng.normal(size=(5, 3)), 2, method=method, prior=np.zeros(5))


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"prior_weight": 0.5}, "prior_weight"),  # a weight without a prior
        ({"prior": np.zeros(5), "prior_weight": 1.5}, "prior_weight"),
        ({"prior": np.zeros(5), "prior_weight": -0.1}, "prior_weight"),
        ({"prior": np.zeros(5), "prior_weight": "0.5"}, "prior_weight"),
        ({"prior": np.zeros(4), "prior_weight": 0.5}, "prior"),
        ({"prior": np.zeros((1, 5)), "prior_weight": 0.5}, "prior"),
        ({"prior": [0, 0, np.nan, 0, 0], "prior_weight": 0.5}, "prior"),
        ({"prior": [0, 0, np.inf, 0, 0], "prior_weight": 0.0}, "prior"),
        ({"prior": ["a"] * 5, "prior_weight": 0.5}, "prior"),
    ],
)
@pytest.mark.parametrize("method", ["similarity", "mmr", "dpp"])
def test_bad_prior_options(method, options, name):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=f"^{name}: "):
        select(rng.normal(size=3), rng.normal(size=(5, 3)), 2, method=method, **options)


def test_batch_prior_must_be_per_query():
    rng = np.random.default_rng(0)
    Q, X = rng.normal(size=(2, 3)), rng.normal(size=(2, 5, 3))
    with pytest.raises(ValueError, match=r"^prior: expected shape \(2, 5\)"):
        select_batch(Q, X, 2, method="mmr", prior=np.zeros(5), prior_weight=0.5)
