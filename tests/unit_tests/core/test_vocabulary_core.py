"""One vocabulary of method names, resolved in one place (``vrsd_core.resolve_method``):
a registered name is itself, the deprecated ``"vrsd_swap"`` is ``"vrsd"`` with
``refine="swap"`` everywhere the core takes a method name, and says so."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from vrsd_core import (
    METHOD_ALIASES,
    METHOD_INFO,
    check_options,
    method_defaults,
    method_info,
    resolve_method,
    select,
    select_batch,
)

# The README's geometry: 1 duplicates 0, 2 is as relevant from the other side.
QUERY = np.array([1.0, 0.0, 0.0])
CANDIDATES = np.array([
    [0.90, 0.40, 0.10],
    [0.88, 0.42, 0.12],
    [0.85, -0.45, 0.05],
    [0.30, 0.10, 0.90],
])


def test_a_registered_name_is_itself_and_says_nothing():
    options = {"lambda_mult": 0.3}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in METHOD_INFO:
            got, opts = resolve_method(name, options if name == "mmr" else {})
            assert got == name
    assert resolve_method("mmr", options)[1] == options
    assert resolve_method("mmr", options)[1] is not options  # a copy: inputs never mutated


@pytest.mark.parametrize("alias", ["vrsd+swap"])
def test_every_alias_of_swap_refined_vrsd_resolves_alike(alias):
    with pytest.warns(DeprecationWarning, match=f"'{re.escape(alias)}' is deprecated"):
        assert resolve_method(alias) == ("vrsd", {"refine": "swap"})


def test_vrsd_swap_is_vrsd_with_refine_swap_and_warns_at_the_callers_line():
    with pytest.warns(DeprecationWarning, match=r"'vrsd_swap' is deprecated.*method='vrsd'.*"
                                                r"refine='swap'") as caught:
        assert resolve_method("vrsd_swap") == ("vrsd", {"refine": "swap"})
    assert caught[0].filename == __file__  # attributed to the user's line, not vrsd's
    with pytest.warns(DeprecationWarning):
        assert resolve_method("vrsd_swap", {"max_swaps": 3}) == (
            "vrsd", {"refine": "swap", "max_swaps": 3})


def test_an_alias_contradicted_by_its_options_is_refused():
    with pytest.raises(ValueError, match=r"^refine: method 'vrsd_swap' means method='vrsd' "
                                         r"with refine='swap', got refine=None"):
        resolve_method("vrsd_swap", {"refine": None})


@pytest.mark.parametrize("bad", ["nope", "", None, 3, ["vrsd"], "VRSD"])
def test_an_unknown_name_is_a_value_error_naming_method(bad):
    with pytest.raises(ValueError, match="^method: unknown method"):
        resolve_method(bad)


def test_method_info_refuses_an_alias_and_says_where_it_is_resolved():
    with pytest.raises(ValueError, match="deprecated alias.*resolve_method"):
        method_info("vrsd_swap")


def test_every_core_entry_point_accepts_the_alias_as_its_meaning():
    want = select(QUERY, CANDIDATES, 2, method="vrsd", refine="swap")
    with pytest.warns(DeprecationWarning) as caught:
        got = select(QUERY, CANDIDATES, 2, method="vrsd_swap")
        batch = select_batch(QUERY[None], CANDIDATES[None], 2, method="vrsd_swap")
        check_options("vrsd_swap", {"max_swaps": 5})
        defaults = method_defaults("vrsd_swap")
    assert len(caught) == 4 and {w.filename for w in caught} == {__file__}
    assert got.method == "vrsd" and got.params == want.params
    assert got.indices.tolist() == want.indices.tolist() == batch[0].indices.tolist()
    assert defaults == {**method_defaults("vrsd"), "refine": "swap"}


def test_the_alias_table_points_at_registered_methods_and_their_options():
    for alias, (target, implied) in METHOD_ALIASES.items():
        assert alias not in METHOD_INFO and target in METHOD_INFO
        assert set(implied) <= set(method_defaults(target))
