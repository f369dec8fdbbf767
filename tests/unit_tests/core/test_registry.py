"""The method table (``vrsd_core.METHOD_INFO``) says what each method really does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vrsd_core import (
    METHOD_INFO,
    MethodInfo,
    method_defaults,
    method_info,
    methods_where,
    select,
)
from vrsd_core.registry import FLAGS

rng = np.random.default_rng(3)
Q = rng.standard_normal(8)
C = rng.standard_normal((12, 8))


def test_the_table_is_keyed_by_name():
    for name, info in METHOD_INFO.items():
        assert isinstance(info, MethodInfo)
        assert info.name == name and callable(info.fn)
        assert info.summary and "\n" not in info.summary
    with pytest.raises(TypeError):  # rows are built with keywords only
        MethodInfo("x", METHOD_INFO["vrsd"].fn, "summary")  # type: ignore[misc]


def test_the_table_is_read_only():
    with pytest.raises(TypeError):
        METHOD_INFO["new"] = METHOD_INFO["vrsd"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        METHOD_INFO["vrsd"].seeded = True  # type: ignore[misc]


@pytest.mark.parametrize("name", list(METHOD_INFO))
def test_flags_match_the_options(name):
    info = METHOD_INFO[name]
    options = method_defaults(name)
    assert info.takes_prior == ("prior" in options)
    assert info.seeded == ("seed" in options)


@pytest.mark.parametrize("name", list(METHOD_INFO))
def test_takes_relevance_matches_select(name):
    relevance = np.linspace(1.0, 0.0, len(C))
    if METHOD_INFO[name].takes_relevance:
        select(Q, C, 3, method=name, relevance=relevance)
    else:
        with pytest.raises(ValueError, match="relevance"):
            select(Q, C, 3, method=name, relevance=relevance)


@pytest.mark.parametrize("name", methods_where(deterministic=True))
def test_deterministic_methods_repeat_with_default_options(name):
    a = select(Q, C, 4, method=name)
    b = select(Q, C, 4, method=name)
    assert a.indices.tolist() == b.indices.tolist()


def test_nondeterministic_methods_are_seeded_with_a_fresh_default():
    for name in methods_where(deterministic=False):
        assert METHOD_INFO[name].seeded
        assert method_defaults(name)["seed"] is None


def test_methods_where_reads_the_flags():
    assert {"takes_relevance", "seeded", "exhaustive"} <= FLAGS
    for flag in FLAGS:
        for value in (True, False):
            want = tuple(n for n, info in METHOD_INFO.items() if getattr(info, flag) == value)
            assert methods_where(**{flag: value}) == want
    both = methods_where(takes_relevance=True, seeded=True)
    assert both == tuple(n for n in methods_where(seeded=True)
                         if METHOD_INFO[n].takes_relevance)
    assert method_info("mmr") is METHOD_INFO["mmr"]
    with pytest.raises(ValueError, match="method"):
        method_info("nope")
    with pytest.raises(ValueError, match="colour"):
        methods_where(colour=True)


@pytest.mark.parametrize("name", methods_where(exhaustive=True))
def test_exhaustive_methods_refuse_large_problems(name):
    big = np.random.default_rng(0).standard_normal((60, 4))
    with pytest.raises(ValueError, match="^k: "):
        select(Q[:4], big, 30, method=name)
