"""One vocabulary of method names, read from one table (``vrsd_core.METHOD_INFO``): a
registered name is itself, any other name is a ValueError naming ``method`` wherever the
core takes one. Swap-refined VRSD is ``method="vrsd", refine="swap"``; the names
``"vrsd_swap"`` and ``"vrsd+swap"`` were never released and are refused like any other."""

from __future__ import annotations

import re

import numpy as np
import pytest

from vrsd_core import (
    check_options,
    method_defaults,
    method_info,
    method_options,
    select,
    select_batch,
)

UNRELEASED = ["vrsd_swap", "vrsd+swap"]

# Greedy takes candidate 0 first (the most similar); 1 and 2 sum exactly to the query,
# so the swap search exchanges 0 for 2.
SWAP_QUERY = np.array([1.0, 0.0, 0.0])
SWAP_CANDIDATES = np.array([
    [0.95, 0.0, 0.31],
    [0.90, 0.43, 0.0],
    [0.90, -0.43, 0.0],
    [0.30, 0.10, 0.90],
])


def seeded_pool(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """12 candidates in 6 dimensions leaning towards the query."""
    rng = np.random.default_rng(seed)
    query = rng.normal(size=6)
    return query, rng.normal(size=(12, 6)) + 0.5 * query


# The picks of ``method="vrsd_swap"`` (and ``"vrsd+swap"``, the same) before the names
# were removed, at k = 2 on the hand-built pool and k = 4 on the seeded ones; each differs
# from plain greedy VRSD's.
ALIAS_PICKS = {
    "hand-built": [2, 1],
    2: [0, 2, 11, 9],
    5: [5, 0, 8, 3],
    6: [2, 11, 4, 5],
    7: [9, 10, 11, 3],
}


def pool(key: str | int) -> tuple[np.ndarray, np.ndarray, int]:
    if key == "hand-built":
        return SWAP_QUERY, SWAP_CANDIDATES, 2
    return (*seeded_pool(int(key)), 4)


@pytest.mark.parametrize("key", list(ALIAS_PICKS))
def test_vrsd_with_refine_swap_picks_what_the_removed_alias_picked(key):
    query, candidates, k = pool(key)
    swap = select(query, candidates, k, method="vrsd", refine="swap")
    greedy = select(query, candidates, k, method="vrsd")
    assert swap.indices.tolist() == ALIAS_PICKS[key]
    assert greedy.indices.tolist() != ALIAS_PICKS[key]  # the refinement is what changed them
    assert swap.objective >= greedy.objective - 1e-12
    assert swap.method == "vrsd" and swap.params["refine"] == "swap"
    batch = select_batch(query[None], candidates[None], k, method="vrsd", refine="swap")
    assert batch[0].indices.tolist() == ALIAS_PICKS[key]


@pytest.mark.parametrize("name", UNRELEASED)
def test_the_unreleased_names_are_refused_by_every_core_entry_point(name):
    calls = [
        lambda: select(SWAP_QUERY, SWAP_CANDIDATES, 2, method=name),
        lambda: select_batch(SWAP_QUERY[None], SWAP_CANDIDATES[None], 2, method=name),
        lambda: check_options(name, {}),
        lambda: method_defaults(name),
        lambda: method_options(name),
        lambda: method_info(name),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=rf"^method: unknown method {re.escape(repr(name))};"):
            call()


@pytest.mark.parametrize("bad", ["nope", "", None, 3, ["vrsd"], "VRSD"])
def test_an_unknown_name_is_a_value_error_naming_method(bad):
    with pytest.raises(ValueError, match="^method: unknown method"):
        method_info(bad)


def test_an_unknown_name_is_told_the_closest_registered_one():
    with pytest.raises(ValueError, match=r"unknown method 'mmmr'.*; did you mean mmr\?$"):
        select(SWAP_QUERY, SWAP_CANDIDATES, 2, method="mmmr")


@pytest.mark.parametrize(("name", "hint"), [
    ("vrsd_swap", "method='vrsd' with refine='swap'"),  # the evaluation tables' row name
    ("VRSD_Swap", "method='vrsd' with refine='swap'"),
    ("MMR", "mmr"),
    ("vrsd_swapp", "vrsd_exact"),  # no choice of vrsd: the closest name
])
def test_an_unknown_name_is_told_how_to_write_it(name, hint):
    wanted = rf"unknown method '{name}'.*; did you mean {re.escape(hint)}\?$"
    with pytest.raises(ValueError, match=wanted):
        method_info(name)


def test_method_defaults_is_a_copy():
    defaults = method_defaults("vrsd")
    defaults["refine"] = "swap"
    assert method_defaults("vrsd")["refine"] is None
