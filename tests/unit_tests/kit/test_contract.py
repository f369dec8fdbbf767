"""The adapter contract (``vrsd_kit.contract``): one payload, one set of checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_core import select
from vrsd_kit import contract

rng = np.random.default_rng(11)
Q = rng.standard_normal(6)
C = rng.standard_normal((9, 6))


def test_metadata_key():
    assert contract.METADATA_KEY == "vrsd"


def test_payload_per_pick():
    sel = select(Q, C, 4, method="mmr", lambda_mult=0.7)
    entries = contract.selection_metadata_all(sel)
    assert [e["rank"] for e in entries] == [0, 1, 2, 3]
    for i, entry in enumerate(entries):
        assert entry == contract.selection_metadata(sel, i)
        assert set(entry) == {"rank", "relevance", "gain", "method"}
        assert entry["relevance"] == pytest.approx(float(sel.relevance[i]))
        assert entry["gain"] == pytest.approx(float(sel.gains[i]))
        assert entry["method"] == "mmr"
        assert type(entry["relevance"]) is float and type(entry["rank"]) is int
    json.dumps(entries)  # plain Python values


def test_payload_names_what_the_default_held_back():
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([[0.9, 0.3, 0.0], [0.9, 0.31, 0.0], [0.5, -0.6, 0.2], [0.1, 0.2, 0.9]])
    sel = select(q, C, 2, method="complement")
    assert sel.indices.tolist() == [0, 2] and sel.info["held_back"] == [1]
    assert sel.info["top_k"] == [0, 1]
    # without texts nothing can be said to restate: candidate 1 made room for pick 2
    named = contract.selection_metadata_all(sel, ids=["a", "a2", "b", None])
    assert [e["held_back"] for e in named] == [
        [], [{"id": "a2", "rank": 2, "relation": "displaced"}]]
    by_rank = contract.selection_metadata_all(sel, ids=None)
    assert by_rank[1]["held_back"][0]["id"] == 1  # the fetched rank, without ids
    # with texts: candidate 1 says what pick 0 says (a copy), and is listed under it
    texts = ["Ada Lovelace wrote the first program.", "Ada Lovelace wrote the first program",
             "Babbage designed the engine.", "Unrelated."]
    sources = ["a.txt", "a.txt", None, None]
    read = contract.selection_metadata_all(sel, ["a", "a2", "b", None], texts=texts,
                                           sources=sources)
    assert [e["held_back"] for e in read] == [
        [{"id": "a2", "rank": 2, "relation": "restates", "share": 1.0, "source": "a.txt",
          "excerpt": "Ada Lovelace wrote the first program"}], []]
    assert "held_back" not in contract.selection_metadata(select(q, C, 2, method="mmr"), 0)


def test_payload_carries_the_prior_when_one_was_used():
    prior = np.linspace(0.0, 1.0, len(C))
    sel = select(Q, C, 3, method="similarity", prior=prior, prior_weight=0.5)
    for i, entry in enumerate(contract.selection_metadata_all(sel)):
        assert entry["prior"] == pytest.approx(prior[sel.indices[i]])


def test_payload_position_is_checked():
    sel = select(Q, C, 2)
    for bad in (2, -1, 1.0, True, "0"):
        with pytest.raises(ValueError, match="position"):
            contract.selection_metadata(sel, bad)
    assert contract.selection_metadata(sel, np.int64(1))["rank"] == 1
    assert contract.selection_metadata_all(select(Q, C, 0)) == []


def test_check_query_text():
    assert contract.check_query_text("what is vrsd?") == "what is vrsd?"
    for blank in ("", "   ", "\n\t"):  # nothing to be relevant to: refused, as by the CLI
        with pytest.raises(ValueError, match="^query: the query is empty or only whitespace"):
            contract.check_query_text(blank)
    for bad, kind in ((None, "NoneType"), (b"q", "bytes"), (3, "int")):
        with pytest.raises(ValueError, match=f"^query: expected a string, got {kind}"):
            contract.check_query_text(bad)
    with pytest.raises(ValueError, match=r"^query_bundle: not valid Unicode.*position 2"):
        contract.check_query_text("ab\udcff", "query_bundle")


@pytest.mark.parametrize(
    ("k", "fetch_k", "name"),
    [(-1, 5, "k"), (2, -1, "fetch_k"), (True, 5, "k"), (2, 5.0, "fetch_k"), ("2", 5, "k"),
     (5, 4, "fetch_k")],
)
def test_check_counts_refuses(k, fetch_k, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        contract.check_counts(k, fetch_k)


def test_check_counts_accepts_and_renames():
    assert contract.check_counts(1, 1) == (1, 1)
    assert contract.check_counts(0, 0, minimum=0) == (0, 0)
    assert contract.check_counts(np.int64(3), 3) == (3, 3)
    with pytest.raises(ValueError, match=r"^fetch_k: must be >= top_n .*fetch_k=2 < top_n=3"):
        contract.check_counts(3, 2, k_name="top_n")
    with pytest.raises(ValueError, match="^top_n: expected an integer >= 1, got 0"):
        contract.check_counts(0, 2, k_name="top_n")


def test_the_adapters_count_rule_refuses_zero():
    """One rule for the adapters and the CLI, written once: k < 1 is a ValueError naming
    the argument (the core's select(k=0) stays an empty selection)."""
    from vrsd_core import check_count, select

    for name in ("k", "top_n", "top_k", "fetch_k"):
        with pytest.raises(ValueError, match=f"^{name}: expected an integer >= 1, got 0"):
            check_count(0, name)
        with pytest.raises(ValueError, match=f"^{name}: expected an integer >= 1, got 0"):
            contract.check_counts(0, 5, k_name=name)
    assert check_count(1, "k") == 1
    assert len(select(Q, C, 0)) == 0


def test_check_keywords_names_the_closest_valid_keyword():
    valid = ["k", "fetch_k", "method", "method_kwargs"]
    with pytest.raises(ValueError, match=r"^fetchk: unknown keyword for R; did you mean fetch_k\?"):
        contract.check_keywords({"k": 2, "fetchk": 4}, valid, "R")
    with pytest.raises(ValueError, match=r"^methd: unknown keyword for R; did you mean method\?$"):
        contract.check_keywords(["methd"], valid, "R")
    # nothing close: every valid keyword is listed instead
    with pytest.raises(ValueError, match=r"^zzz: .*its keywords: fetch_k, k, method, method_k"):
        contract.check_keywords(["zzz"], valid, "R")
    contract.check_keywords(["k", "method"], valid, "R")  # all known: no error
    assert contract.did_you_mean("lamda_mult", ["lambda_mult", "theta"]) == (
        "; did you mean lambda_mult?")
    assert contract.did_you_mean("zzz", ["lambda_mult"]) == ""


def test_keywords_checked_keeps_the_signature_and_refuses_typos():
    import inspect

    class Ranker:
        @contract.keywords_checked
        def __init__(self, top_k: int = 4, method: str = "x") -> None:
            self.top_k, self.method = top_k, method

    assert list(inspect.signature(Ranker.__init__).parameters) == ["self", "top_k", "method"]
    assert Ranker(3, method="y").top_k == 3
    with pytest.raises(ValueError, match=r"^topk: unknown keyword for Ranker; did you mean top_k"):
        Ranker(topk=2)


def test_method_options_name_the_closest_option():
    from vrsd_core import check_options

    with pytest.raises(ValueError, match=r"^lamda_mult: not an option .*did you mean lambda_mult"):
        check_options("mmr", {"lamda_mult": 0.5})


def test_check_prior_values():
    out = contract.check_prior_values([1, 0.5, np.float32(2.0), np.int64(-1)], 4)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.5, 2.0, -1.0]
    with pytest.raises(ValueError, match="prior: expected 3 values"):
        contract.check_prior_values([1.0, 2.0], 3)
    for bad in ("0.5", None, True, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="^prior: candidate 1 has"):
            contract.check_prior_values([0.0, bad], 2)


def test_contract_imports_no_framework():
    import subprocess
    import sys

    code = (
        "import sys, vrsd_kit.contract; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'pydantic', 'torch')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_check_item_spec():
    for ok in (None, "source", len):
        contract.check_item_spec(ok, "group_by", "(item) -> label")
    with pytest.raises(ValueError, match=r"^group_by: .*\(item\) -> label.*got 3"):
        contract.check_item_spec(3, "group_by", "(item) -> label")


def test_item_values():
    items = [{"id": "a", "meta": {"src": 1}}, {"id": "b", "meta": {"src": 2}}]
    read = {"metadata_of": lambda it: it["meta"], "describe": lambda it: it["id"]}
    assert contract.item_values("src", items, "group_by", **read) == [1, 2]
    assert contract.item_values(lambda it: it["id"], items, "group_by", **read) == ["a", "b"]
    with pytest.raises(ValueError, match="^prior: candidate 'b' has no metadata field 'q'"):
        contract.item_values("q", [{"id": "b", "meta": {}}], "prior", **read)


def test_check_group_options():
    assert contract.check_group_options(None, None) is None
    assert contract.check_group_options("source", 2) == 2
    for group_by, cap, name in (("source", None, "max_per_group"), (None, 1, "group_by"),
                                ("source", 0, "max_per_group"), ("source", True, "max_per_group"),
                                ("source", 1.0, "max_per_group"), (3, 1, "group_by")):
        with pytest.raises(ValueError, match=f"^{name}:"):
            contract.check_group_options(group_by, cap)


def test_group_cap_from_the_contract_matches_select():
    """What an adapter does: labels read per item, cap checked by the contract, then select."""
    items = [{"src": s} for s in ("a", "a", "a", "b", "c", "d", "e", "f", "g")]
    labels = contract.item_values("src", items, "group_by", metadata_of=lambda it: it,
                                  describe=str)
    cap = contract.check_group_options("src", 1)
    sel = select(Q, C, 4, method="mmr", groups=labels, max_per_group=cap)
    assert len({labels[i] for i in sel.indices}) == len(sel)


def test_selection_inputs_reads_prior_relevance_and_groups_per_candidate():
    items = [{"q": 0.5, "s": 1, "src": "a"}, {"q": 0.25, "s": 2, "src": "b"}]

    def values(spec, name):
        return [spec(i) for i in items] if callable(spec) else [i[spec] for i in items]

    out = contract.selection_inputs(
        {"lambda_mult": 0.7, "prior": "q", "prior_weight": 0.3}, 2, values,
        relevance=lambda query, its: [len(query) * i["s"] for i in its],
        score=lambda fn: fn("ab", items), group_by="src", max_per_group=1,
    )
    assert out["lambda_mult"] == 0.7 and out["prior_weight"] == 0.3
    np.testing.assert_array_equal(out["prior"], [0.5, 0.25])
    np.testing.assert_array_equal(out["relevance"], [2.0, 4.0])
    assert out["groups"] == ["a", "b"] and out["max_per_group"] == 1
    # a field name for relevance; nothing given -> the options unchanged (a copy)
    opts = {"lambda_mult": 0.5}
    assert contract.selection_inputs(opts, 2, values, relevance="s")["relevance"].tolist() == [
        1.0, 2.0]
    same = contract.selection_inputs(opts, 2, values)
    assert same == opts and same is not opts


def test_selection_inputs_give_the_default_the_words_relevance_and_profiles():
    from vrsd_kit.lexical import pool_relevance

    texts = ["Caffeine has a half-life of five hours.", "Alcohol fragments sleep."]
    words = pool_relevance("caffeine", texts, np.ones(2), np.eye(2))
    out = contract.selection_inputs({}, 2, lambda spec, name: [], words=words)
    np.testing.assert_array_equal(out["relevance"], words.signals)
    np.testing.assert_array_equal(out["profiles"], words.profiles)
    select(np.ones(2), np.eye(2), 2, **out)  # what the default takes


def test_profiles_are_not_a_setting():
    with pytest.raises(ValueError, match="profiles: built per query"):
        contract.check_method_options("complement", {"profiles": np.ones((2, 1))}, "(x) -> float")


def test_selection_inputs_names_what_is_wrong():
    def values(spec, name):
        return ["x", 1.0]

    with pytest.raises(ValueError, match="prior: candidate 0 has 'x'"):
        contract.selection_inputs({"prior": "q"}, 2, values)
    with pytest.raises(ValueError, match="relevance: expected 2 values"):
        contract.selection_inputs({}, 2, values, relevance=lambda q, d: [1.0],
                                  score=lambda fn: fn("q", []))
    with pytest.raises(ValueError, match="relevance: this call has no query"):
        contract.selection_inputs({}, 2, values, relevance=lambda q, d: [1.0, 2.0])
