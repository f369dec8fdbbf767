"""The method table (``vrsd_core.METHOD_INFO``) says what each method really does."""

from __future__ import annotations

import importlib
import pkgutil
import typing

import numpy as np
import pytest

import vrsd_core.methods
from vrsd_core import (
    METHOD_INFO,
    MethodInfo,
    MethodName,
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


def test_method_name_is_the_table_s_names():
    """The ``Literal`` type checkers read is the table's keys, in its order."""
    assert typing.get_args(MethodName) == tuple(METHOD_INFO)


# the modules holding more than one method: the family that shares one loop
SHARED_MODULES: dict[str, set[str]] = {}


def test_every_method_module_has_its_row_and_every_row_its_module():
    """A method is a function of its name in a module of ``vrsd_core.methods`` (its own,
    or its family's when methods share a loop), and one row of the table naming that
    function: a module without a row (or a row naming another module's function) is a
    method ``select`` cannot run."""
    modules = {m.name for m in pkgutil.iter_modules(vrsd_core.methods.__path__)
               if not m.name.startswith("_")}
    home = {name: name for name in modules - set(SHARED_MODULES)}
    home.update({method: module for module, methods in SHARED_MODULES.items()
                 for method in methods})
    assert set(home) == set(METHOD_INFO)
    for name, info in METHOD_INFO.items():
        module = importlib.import_module(f"vrsd_core.methods.{home[name]}")
        assert info.fn is getattr(module, name), name
        assert select(Q, C, 2, method=name).method == name


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


def _accepts(name: str, **arguments) -> bool:
    """``select`` runs ``name`` with these arguments (a ValueError: it refuses them)."""
    try:
        select(Q, C, 3, method=name, **arguments)
    except ValueError:
        return False
    return True


def test_methods_where_names_the_methods_that_behave_so():
    """Each flag, and a pair of them, against what ``select`` does with every method
    (in table order): the methods a caller filters for are the ones that take it."""
    relevance = np.linspace(1.0, 0.0, len(C))
    prior = {"prior": np.linspace(0.0, 1.0, len(C)), "prior_weight": 0.5}
    behaves = {
        "takes_relevance": {n for n in METHOD_INFO if _accepts(n, relevance=relevance)},
        "takes_prior": {n for n in METHOD_INFO if _accepts(n, **prior)},
        "seeded": {n for n in METHOD_INFO if _accepts(n, seed=1)},
    }
    for flag, names in behaves.items():
        assert methods_where(**{flag: True}) == tuple(n for n in METHOD_INFO if n in names)
        assert methods_where(**{flag: False}) == tuple(n for n in METHOD_INFO if n not in names)
    both = behaves["takes_relevance"] & behaves["seeded"]
    assert methods_where(takes_relevance=True, seeded=True) == tuple(
        n for n in METHOD_INFO if n in both)
    assert methods_where() == tuple(METHOD_INFO)
    assert {"takes_relevance", "seeded", "exhaustive", "deterministic"} <= FLAGS
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
