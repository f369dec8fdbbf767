"""Method options declared as data (``vrsd_core.options``): every declared range or
choice is refused outside and accepted inside, by ``check_options`` (nothing runs) and
by ``select`` alike, for every registered method; the declarations agree with the
methods' signatures."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from vrsd_core import METHOD_INFO, OptionSpec, check_options, method_defaults, method_options
from vrsd_core import select as core_select


def inside(spec: OptionSpec) -> list:
    if spec.kind == "unit":
        return [0.0, 0.5, 0.999] + ([] if spec.high_open else [1.0, 1])
    if spec.kind == "real":
        values = [spec.low if math.isfinite(spec.low) and not spec.low_open else None,
                  spec.high if math.isfinite(spec.high) else None,
                  (spec.low + spec.high) / 2 if math.isfinite(spec.low + spec.high) else None,
                  spec.low + 0.5 if math.isfinite(spec.low) else 0.0,
                  math.inf if spec.allow_inf else None]
        return [v for v in values if v is not None]
    if spec.kind == "integer":
        return [int(spec.low), int(spec.low) + 3] + ([None] if spec.allow_none else [])
    if spec.kind == "choice":
        return list(spec.choices)
    if spec.kind == "flag":
        return [True, False, np.bool_(True)]
    if spec.kind == "seed":
        return [None, 0, 7, np.random.default_rng(0)]
    return []  # per_candidate: one row per candidate, checked at query time


def outside(spec: OptionSpec) -> list:
    if spec.kind == "unit":
        return [-0.1, 1.1, math.nan, "0.5", True] + ([1.0] if spec.high_open else [])
    if spec.kind == "real":
        values = [spec.low - 1 if math.isfinite(spec.low) else None,
                  spec.low if spec.low_open else None,
                  spec.high + 1 if math.isfinite(spec.high) else None,
                  None if spec.allow_inf or math.isfinite(spec.high) else math.inf,
                  math.nan, "1", True, None]
        return [v for v in values if v is not None]
    if spec.kind == "integer":
        return [int(spec.low) - 1, 1.5, True, "3"] + ([] if spec.allow_none else [None])
    if spec.kind == "choice":
        return ["not a choice", 1, True]
    if spec.kind == "flag":
        return [1, "yes", None]
    if spec.kind == "seed":
        return [-1, 1.5, True, "abc", [1, 2]]
    return []


CASES = [(method, spec) for method in METHOD_INFO for spec in method_options(method)]


def _select(method, **options):
    rng = np.random.default_rng(0)
    return core_select(rng.normal(size=3), rng.normal(size=(4, 3)), 4, method=method,
                       **options)


@pytest.mark.parametrize(("method", "spec"), CASES, ids=[f"{m}-{s.name}" for m, s in CASES])
def test_every_declared_range_is_refused_outside_and_accepted_inside(method, spec):
    # a prior weight above 0 needs a prior (the one rule between two options)
    prior = {"prior": np.zeros(4)} if spec.name == "prior_weight" else {}
    for value in inside(spec):
        check_options(method, {spec.name: value, **prior})
        spec.check(value)
        _select(method, **{spec.name: value}, **prior)
    for value in outside(spec):
        for refuse in (lambda v: check_options(method, {spec.name: v, **prior}),
                       lambda v: _select(method, **{spec.name: v}, **prior), spec.check):
            with pytest.raises(ValueError, match=f"^{spec.name}: "):
                refuse(value)


@pytest.mark.parametrize("method", list(METHOD_INFO))
def test_the_declarations_are_the_signatures(method):
    info = METHOD_INFO[method]
    signature = {p.name: p.default for p in inspect.signature(info.fn).parameters.values()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert {s.name: s.default for s in info.own_options} == signature
    names = [s.name for s in method_options(method)]
    assert len(names) == len(set(names))
    assert ("prior" in names) == info.takes_prior == ("prior_weight" in names)
    assert ("profiles" in names) == info.takes_profiles
    assert method_defaults(method) == {s.name: s.default for s in method_options(method)}
    for spec in method_options(method):
        assert spec.summary, (method, spec.name)
        if spec.kind in ("unit", "real", "integer", "choice", "flag", "seed"):
            assert spec.check(spec.default) == spec.default or spec.default is None


def test_check_options_runs_nothing(monkeypatch):
    import vrsd_core.api as api

    def refuse(*args, **kwargs):
        raise AssertionError("check_options ran a selection")

    monkeypatch.setattr(api, "prepare", refuse)
    check_options("mmr", {"lambda_mult": 0.3})
    check_options("complement", {"profiles": "per candidate", "prior": "a metadata field",
                                 "prior_weight": 0.2})
    with pytest.raises(ValueError, match="^lambda_mult: "):
        check_options("mmr", {"lambda_mult": 3})


def test_a_typo_gets_a_did_you_mean():
    with pytest.raises(ValueError, match=r"^lamda_mult: .*did you mean lambda_mult\?"):
        check_options("mmr", {"lamda_mult": 0.5})
    with pytest.raises(ValueError, match=r"^tehta: .*did you mean theta\?"):
        check_options("dpp", {"tehta": 0.5})


def test_the_specs_are_data():
    spec = method_options("mmr")[0]
    assert (spec.name, spec.kind, spec.low, spec.high, spec.default) == (
        "lambda_mult", "unit", 0.0, 1.0, 0.5)
    with pytest.raises(AttributeError):
        spec.default = 0.7  # type: ignore[misc]
