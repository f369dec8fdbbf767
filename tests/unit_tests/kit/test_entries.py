"""The entry on each result (``vrsd_kit.entries``): one payload for every adapter."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_core import select
from vrsd_kit.entries import METADATA_KEY, entries
from vrsd_kit.inputs import PoolSignals

rng = np.random.default_rng(11)
Q = rng.standard_normal(6)
C = rng.standard_normal((9, 6))


def test_metadata_key():
    assert METADATA_KEY == "vrsd"


def test_one_entry_per_pick():
    sel = select(Q, C, 4, method="mmr", lambda_mult=0.7)
    found = entries(sel)
    assert [e["rank"] for e in found] == [0, 1, 2, 3]
    for i, entry in enumerate(found):
        assert set(entry) == {"rank", "relevance", "gain", "method"}
        assert entry["relevance"] == pytest.approx(float(sel.relevance[i]))
        assert entry["gain"] == pytest.approx(float(sel.gains[i]))
        assert entry["method"] == "mmr"
        assert type(entry["relevance"]) is float and type(entry["rank"]) is int
    json.dumps(found)  # plain Python values
    assert entries(select(Q, C, 0)) == []


def test_the_entries_name_what_the_default_held_back():
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([[0.9, 0.3, 0.0], [0.9, 0.31, 0.0], [0.5, -0.6, 0.2], [0.1, 0.2, 0.9]])
    sel = select(q, C, 2, method="complement")
    assert sel.indices.tolist() == [0, 2] and sel.info["held_back"] == [1]
    assert sel.info["top_k"] == [0, 1]
    # without texts nothing can be said to restate: candidate 1 made room for pick 2
    named = entries(sel, ids=["a", "a2", "b", None])
    assert [e["held_back"] for e in named] == [
        [], [{"id": "a2", "rank": 2, "relation": "displaced"}]]
    assert entries(sel, ids=None)[1]["held_back"][0]["id"] == 1  # the fetched rank
    # with texts: candidate 1 says what pick 0 says (a copy), and is listed under it
    texts = ["Ada Lovelace wrote the first program.", "Ada Lovelace wrote the first program",
             "Babbage designed the engine.", "Unrelated."]
    read = entries(sel, ["a", "a2", "b", None], texts=texts,
                   sources=["a.txt", "a.txt", None, None])
    assert [e["held_back"] for e in read] == [
        [{"id": "a2", "rank": 2, "relation": "restates", "share": 1.0, "source": "a.txt",
          "excerpt": "Ada Lovelace wrote the first program"}], []]
    assert "held_back" not in entries(select(q, C, 2, method="mmr"))[0]


def test_the_entry_carries_the_prior_when_one_was_used():
    prior = np.linspace(0.0, 1.0, len(C))
    sel = select(Q, C, 3, method="similarity", prior=prior, prior_weight=0.5)
    for i, entry in enumerate(entries(sel)):
        assert entry["prior"] == pytest.approx(prior[sel.indices[i]])


def test_the_entry_shows_the_parts_of_the_relevance_when_the_words_were_read():
    signals = PoolSignals(np.linspace(0.1, 0.9, len(C)), np.arange(len(C), dtype=float),
                          np.eye(len(C)))
    sel = select(Q, C, 3, **signals.select_keywords())
    for i, entry in enumerate(entries(sel, signals=signals)):
        pick = int(sel.indices[i])
        assert entry["cosine"] == pytest.approx(signals.cosine[pick])
        assert entry["lexical"] == pytest.approx(signals.lexical[pick])
        # the relevance is the pool units of the two parts: z of the sum of their z-scores
        assert entry["relevance"] == pytest.approx(
            float(signals.select_keywords()["relevance"][pick]))
