"""The settings (``vrsd_kit.settings``): declared once as data, checked once into a frozen
object, at construction and at every assignment."""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys

import numpy as np
import pytest

from vrsd_core import check_count, check_options, select
from vrsd_kit import settings as kit
from vrsd_kit.tokens import approx_token_count


def test_the_table_and_the_frozen_object_name_the_same_settings():
    names = [f.name for f in dataclasses.fields(kit.Settings) if f.name != "names"]
    assert names == [s.name for s in kit.SETTINGS]
    built = kit.build_settings({})
    assert {s.name: getattr(built, s.name) for s in kit.SETTINGS if s.name != "token_counter"} \
        == {s.name: s.default for s in kit.SETTINGS if s.name != "token_counter"}
    assert built.token_counter is approx_token_count
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.k = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        built.options["lambda_mult"] = 0.5  # type: ignore[index]


def test_build_settings_copies_what_it_is_given():
    options = {"lambda_mult": 0.5}
    built = kit.build_settings({"method": "mmr", "options": options})
    options["lambda_mult"] = 2.0
    assert built.options == {"lambda_mult": 0.5}


@pytest.mark.parametrize(("values", "name"), [
    ({"k": 0}, "k"), ({"k": True}, "k"), ({"k": 2.0}, "k"), ({"k": "2"}, "k"),
    ({"fetch_k": -1}, "fetch_k"), ({"k": 5, "fetch_k": 4}, "fetch_k"),
    ({"method": "nope"}, "method"), ({"options": [1]}, "options"),
    ({"relevance": 3}, "relevance"), ({"method": "vrsd", "relevance": "score"}, "relevance"),
    ({"group_by": "source"}, "max_per_group"), ({"max_per_group": 1}, "group_by"),
    ({"group_by": "s", "max_per_group": 0}, "max_per_group"),
    ({"max_tokens": 0}, "max_tokens"), ({"token_counter": 3}, "token_counter"),
    ({"lexical": 1}, "lexical"), ({"lexical": "no"}, "lexical"),
    ({"metadata_key": ""}, "metadata_key"), ({"reembed": "never"}, "reembed"),
    ({"search": "filter"}, "search"),
])
def test_a_bad_value_names_its_setting(values, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        kit.build_settings(values)


def test_the_adapters_names_are_used_in_messages():
    names = {"k": "top_n", "options": "method_kwargs"}
    with pytest.raises(ValueError, match=r"^fetch_k: must be >= top_n .*fetch_k=2 < top_n=3"):
        kit.build_settings({"k": 3, "fetch_k": 2}, names=names)
    with pytest.raises(ValueError, match="^top_n: expected an integer >= 1, got 0"):
        kit.build_settings({"k": 0}, names=names)
    with pytest.raises(ValueError, match="^method_kwargs: profiles are read per query"):
        kit.build_settings({"options": {"profiles": np.ones((2, 1))}}, names=names)
    built = kit.build_settings({"k": 3}, names=names)
    with pytest.raises(ValueError, match="^top_n: expected an integer >= 1"):
        built.with_counts(k=0)


def test_options_and_typos():
    with pytest.raises(ValueError, match=r"^lamda: not an option .*did you mean lambda_mult"):
        kit.build_settings({"method": "mmr", "options": {"lamda": 0.5}})
    with pytest.raises(ValueError, match="lambda_mult"):
        kit.build_settings({"method": "mmr", "options": {"lambda_mult": 2.0}})
    with pytest.raises(ValueError, match=r"^fetchk: unknown keyword .*did you mean fetch_k"):
        kit.build_settings({"fetchk": 3})
    with pytest.raises(ValueError, match=r"^method: unknown method 'mmrr'.*did you mean mmr"):
        kit.build_settings({"method": "mmrr"})


@pytest.mark.parametrize("name", ["vrsd_swap", "vrsd+swap"])
def test_the_unreleased_swap_names_are_refused_as_unknown_methods(name):
    with pytest.raises(ValueError, match=rf"^method: unknown method {re.escape(repr(name))}"):
        kit.build_settings({"method": name})
    built = kit.build_settings({"method": "vrsd", "options": {"refine": "swap"}})
    assert built.method == "vrsd" and built.options == {"refine": "swap"}


def test_with_counts_checks_only_the_counts():
    built = kit.build_settings({"k": 3, "fetch_k": 10})
    assert built.with_counts(k=5).k == 5 and built.with_counts(fetch_k=20).fetch_k == 20
    with pytest.raises(ValueError, match="^fetch_k: must be >= k"):
        built.with_counts(k=11)
    assert kit.build_settings({"fetch_k": None}).with_counts(k=30).fetch_k is None


@pytest.mark.parametrize(
    ("k", "fetch_k", "name"),
    [(-1, 5, "k"), (2, -1, "fetch_k"), (True, 5, "k"), (2, 5.0, "fetch_k"), ("2", 5, "k"),
     (5, 4, "fetch_k")],
)
def test_check_counts_refuses(k, fetch_k, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        kit.check_counts(k, fetch_k)


def test_the_adapters_count_rule_refuses_zero():
    """One rule for the adapters and the CLI, written once: k < 1 is a ValueError naming
    the argument (the core's select(k=0) stays an empty selection)."""
    for name in ("k", "top_n", "top_k", "fetch_k"):
        with pytest.raises(ValueError, match=f"^{name}: expected an integer >= 1, got 0"):
            check_count(0, name)
        with pytest.raises(ValueError, match=f"^{name}: expected an integer >= 1, got 0"):
            kit.check_counts(0, 5, k_name=name)
    rng = np.random.default_rng(11)
    assert len(select(rng.standard_normal(6), rng.standard_normal((9, 6)), 0)) == 0


def test_keywords_checked_keeps_the_signature_and_refuses_typos():
    class Ranker:
        @kit.keywords_checked
        def __init__(self, top_k: int = 4, method: str = "x") -> None:
            self.top_k, self.method = top_k, method

    assert list(inspect.signature(Ranker.__init__).parameters) == ["self", "top_k", "method"]
    assert Ranker(3, method="y").top_k == 3
    with pytest.raises(ValueError, match=r"^topk: unknown keyword for Ranker; did you mean top_k"):
        Ranker(topk=2)


def test_method_options_name_the_closest_option():
    with pytest.raises(ValueError, match=r"^lamda_mult: not an option .*did you mean lambda_mult"):
        check_options("mmr", {"lamda_mult": 0.5})
    assert kit.did_you_mean("zzz", ["lambda_mult"]) == ""


def test_check_item_spec():
    for ok in (None, "source", len):
        kit.check_item_spec(ok, "group_by", "(item) -> label")
    with pytest.raises(ValueError, match=r"^group_by: .*\(item\) -> label.*got 3"):
        kit.check_item_spec(3, "group_by", "(item) -> label")


class Plain(kit.SettingsFields):
    """A framework class that is not a pydantic model (as Haystack's components are)."""

    SETTING_FIELDS = frozenset({"top_k", "method_kwargs"})

    def __init__(self, top_k=4, method_kwargs=None):
        self.top_k, self.method_kwargs = top_k, dict(method_kwargs or {})
        self._keep_settings()

    def _checked_settings(self, fields):
        return kit.build_settings({"k": fields["top_k"], "fetch_k": None, "method": "mmr",
                                   "options": fields["method_kwargs"]},
                                  names={"k": "top_k", "options": "method_kwargs"})


def test_an_assignment_is_checked_and_a_refusal_changes_nothing():
    ranker = Plain(top_k=3)
    kept = ranker.settings()
    with pytest.raises(ValueError, match="^top_k: expected an integer >= 1, got -1"):
        ranker.top_k = -1
    assert ranker.top_k == 3 and ranker.settings() is kept
    with pytest.raises(ValueError, match="did you mean lambda_mult"):
        ranker.method_kwargs = {"lamda": 0.5}
    assert ranker.method_kwargs == {} and ranker.settings() is kept
    ranker.top_k = 5
    assert ranker.settings().k == 5
    ranker.other = "not a setting"  # any other attribute: as Python does


def test_a_dict_changed_in_place_is_checked_at_the_next_read():
    ranker = Plain()
    ranker.method_kwargs["lambda_mult"] = 0.3
    assert ranker.settings().options == {"lambda_mult": 0.3}
    ranker.method_kwargs["lamda"] = 0.3
    with pytest.raises(ValueError, match="did you mean lambda_mult"):
        ranker.settings()


def test_settings_never_checked_are_a_runtime_error():
    ranker = Plain.__new__(Plain)
    with pytest.raises(RuntimeError, match="Plain: its settings were never checked"):
        ranker.settings()


def test_the_kit_imports_no_framework():
    code = (
        "import sys, vrsd_kit.settings, vrsd_kit.rerank; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'pydantic', 'torch', 'haystack')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_dict_holding_an_array_is_checked_again_rather_than_compared():
    ranker = Plain(method_kwargs={"prior": "q"})
    ranker.method_kwargs["prior"] = "score"
    assert ranker.settings().options == {"prior": "score"}

    class WithArray(Plain):
        SETTING_FIELDS = frozenset({"top_k", "method_kwargs", "search"})

        def __init__(self):
            self.search = {"ids": np.arange(3)}
            super().__init__()

        def _checked_settings(self, fields):
            return kit.build_settings({"k": fields["top_k"], "fetch_k": None,
                                       "search": fields["search"]})

    holder = WithArray()
    assert holder.settings().search["ids"].tolist() == [0, 1, 2]  # no "truth value" error


def test_settings_pickle_and_copy():
    import copy
    import pickle

    built = kit.build_settings({"method": "mmr", "options": {"lambda_mult": 0.4},
                                "search": {"filter": {"a": 1}}}, names={"k": "top_n"})
    for again in (pickle.loads(pickle.dumps(built)), copy.deepcopy(built), copy.copy(built)):
        assert again == built and again.names == {"k": "top_n"}
        with pytest.raises(TypeError, match="frozen"):
            again.options["lambda_mult"] = 0.5  # type: ignore[index]
