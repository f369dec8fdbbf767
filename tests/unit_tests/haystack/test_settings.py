"""``DiverseRanker``'s settings, checked by the kit (``vrsd_kit.settings.SettingsFields``):
when built, at every assignment (a bad value refused there, naming it, with the closest
name for a typo; the ranker unchanged and still working) and per run (``top_k``); what
the settings resolve is what the ranker shows and saves."""

from __future__ import annotations

import copy
import warnings

import pytest

from tests.helpers.haystack_pipeline import candidates
from vrsd_haystack import DiverseRanker
from vrsd_kit.tokens import approx_token_count

K = 4
QUERY = "water vapor from liquid water"


def picks(ranker: DiverseRanker, docs, query_vector, **run) -> list[str]:
    return [d.id for d in ranker.run(documents=docs, query_embedding=query_vector,
                                     query=QUERY, **run)["documents"]]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("top_k", -1, "^top_k: "), ("top_k", "3", "^top_k: "), ("top_k", 2.0, "^top_k: "),
    ("method", "mmmr", "^method: .*did you mean mmr"),
    ("method_kwargs", {"lamda_mult": 0.5}, "lamda_mult.*did you mean lambda_mult"),
    ("method_kwargs", {"lambda_mult": 2}, "lambda_mult"),
    ("method_kwargs", None, "^method_kwargs: "),
    ("relevance", 3, "^relevance: .*\\(Document\\) -> float"),
    ("max_per_group", 2, "^group_by: "), ("max_tokens", 0, "^max_tokens: "),
    ("token_counter", 3, "^token_counter: "), ("lexical", "no", "^lexical: "),
    ("metadata_key", "", "^metadata_key: "), ("reembed", "never", "reembed"),
    ("document_embedder", 3, "^document_embedder: "),
])
def test_a_bad_assignment_is_refused_and_changes_nothing(in_memory_store, query_vectors,
                                                         field, value, message):
    ranker = DiverseRanker(top_k=K, method="mmr")
    docs = candidates(in_memory_store, query_vectors[0])
    before, settings, picked = ranker.to_dict(), ranker.settings(), picks(
        ranker, docs, query_vectors[0])
    with pytest.raises(ValueError, match=message):
        setattr(ranker, field, value)
    assert ranker.to_dict() == before
    assert ranker.settings() is settings  # the kept settings, not rebuilt
    assert picks(ranker, docs, query_vectors[0]) == picked  # still works, as before


def test_a_good_assignment_is_checked_into_new_settings(in_memory_store, query_vectors):
    ranker = DiverseRanker(top_k=K, method="mmr")
    docs = candidates(in_memory_store, query_vectors[0])
    settings = ranker.settings()
    assert ranker.settings() is settings  # kept between runs
    ranker.top_k = 2
    assert ranker.settings() is not settings and ranker.settings().k == 2
    assert len(picks(ranker, docs, query_vectors[0])) == 2
    ranker.method_kwargs = {"lambda_mult": 0.2}
    assert ranker.settings().options == {"lambda_mult": 0.2}
    ranker.lexical = False
    assert ranker.settings().lexical is False


def test_group_by_alone_is_refused_until_both_are_given():
    ranker = DiverseRanker(top_k=K)
    with pytest.raises(ValueError, match="^max_per_group: "):
        ranker.group_by = "source"  # a pair: each assignment is checked with the other
    assert ranker.group_by is None
    capped = DiverseRanker(top_k=K, group_by="source", max_per_group=1)
    capped.max_per_group = 2
    assert capped.settings().max_per_group == 2


def test_a_dict_changed_in_place_is_checked_at_the_next_run(in_memory_store, query_vectors):
    ranker = DiverseRanker(top_k=K, method="mmr", method_kwargs={"lambda_mult": 0.3})
    docs = candidates(in_memory_store, query_vectors[0])
    ranker.method_kwargs["lambda_mult"] = 0.9  # cannot be intercepted: seen at the run
    assert ranker.settings().options == {"lambda_mult": 0.9}
    ranker.method_kwargs["lambda_mult"] = 7
    with pytest.raises(ValueError, match="lambda_mult"):
        picks(ranker, docs, query_vectors[0])


def test_a_value_is_stored_as_given_and_the_settings_hold_what_it_means():
    ranker = DiverseRanker(method="vrsd", method_kwargs={"refine": "swap"})
    assert ranker.token_counter is None and ranker.settings().token_counter is approx_token_count
    saved = ranker.to_dict()
    assert saved["init_parameters"]["token_counter"] is None  # loads anywhere
    assert (saved["init_parameters"]["method"], saved["init_parameters"]["method_kwargs"]) == (
        "vrsd", {"refine": "swap"})
    assert DiverseRanker.from_dict(saved).to_dict() == saved
    ranker.token_counter = len
    assert ranker.to_dict()["init_parameters"]["token_counter"] == {"callable": "builtins.len"}


def test_a_runs_top_k_is_checked_and_is_that_runs_only(in_memory_store, query_vectors):
    ranker = DiverseRanker(top_k=K, method="mmr")
    docs = candidates(in_memory_store, query_vectors[0])
    settings = ranker.settings()
    for bad in (0, -1, "2", 2.5, True):
        with pytest.raises(ValueError, match="^top_k: "):
            ranker.run(documents=docs, query_embedding=query_vectors[0], top_k=bad)
    assert len(picks(ranker, docs, query_vectors[0], top_k=2)) == 2
    assert ranker.settings() is settings and len(picks(ranker, docs, query_vectors[0])) == K


def test_a_relevance_callable_scores_one_document_with_or_without_a_query(in_memory_store,
                                                                          query_vectors):
    from vrsd_core import select

    docs = candidates(in_memory_store, query_vectors[1])
    ranker = DiverseRanker(top_k=K, method="mmr", relevance=lambda d: float(d.meta["row"]))
    want = select(query_vectors[1], [d.embedding for d in docs], K, method="mmr",
                  relevance=[float(d.meta["row"]) for d in docs])
    for query in (None, QUERY):
        got = ranker.run(documents=docs, query_embedding=query_vectors[1], query=query)
        assert [d.id for d in got["documents"]] == [docs[i].id for i in want.indices]


@pytest.mark.parametrize(("settings", "warns"), [
    ({}, True),  # the default reads the words: it needs the query text
    ({"lexical": False}, False), ({"method": "mmr"}, False),
    ({"method": "mmr", "relevance": "score"}, False), ({"relevance": "score"}, False),
])
def test_no_query_text_warns_once_where_the_method_would_read_the_words(
        in_memory_store, query_vectors, settings, warns):
    ranker = DiverseRanker(top_k=K, **settings)
    docs = candidates(in_memory_store, query_vectors[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            ranker.run(documents=docs, query_embedding=query_vectors[0])
    said = [w for w in caught if "no query text" in str(w.message)]
    assert len(said) == (1 if warns else 0)


def test_from_dict_leaves_the_callers_dict_as_it_was():
    saved = DiverseRanker(token_counter=len, method="mmr",
                          method_kwargs={"lambda_mult": 0.7}).to_dict()
    before = copy.deepcopy(saved)
    again = DiverseRanker.from_dict(saved)
    assert saved == before  # the saved callables stay saved, not turned into functions
    assert again.token_counter is len
    assert again.to_dict() == before
