"""The entry on each result (``vrsd_kit.rerank``): one payload for every adapter; in it,
"restates" only for a near-copy (word pairs), every held-back candidate listed once, under
the pick it restates or the pick that took its slot."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.copies import weighed_by_the_pool
from tests.helpers.reading import word_pairs
from vrsd_core import select
from vrsd_kit.lexical import RESTATES, Judge, PoolRelevance, restated_by, shared_pairs
from vrsd_kit.rerank import METADATA_KEY, entries, excerpt, held_back_entries

rng = np.random.default_rng(11)
Q, C = rng.standard_normal(6), rng.standard_normal((9, 6))  # a query and 9 candidates


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


def test_entries_without_a_judge_name_a_copy_by_the_judge_of_the_whole_pool():
    # H (1) restates P (0) by the pool's weights, not among the few picks and H alone;
    # H's vector is P's, so the default by the vectors holds it back
    texts, query, vectors = weighed_by_the_pool()
    vectors[1] = vectors[0]
    sel = select(query, vectors, 2)
    assert sel.indices.tolist() == [0, 2] and sel.info["held_back"] == [1]
    assert Judge(texts[:3]).copy_of(1, [0, 2]) is None
    [held] = entries(sel, texts=texts)[0]["held_back"]
    assert (held["id"], held["rank"], held["relation"]) == (1, 2, "restates")


def test_the_entry_carries_the_prior_when_one_was_used():
    prior = np.linspace(0.0, 1.0, len(C))
    sel = select(Q, C, 3, method="similarity", prior=prior, prior_weight=0.5)
    for i, entry in enumerate(entries(sel)):
        assert entry["prior"] == pytest.approx(prior[sel.indices[i]])


def test_the_entry_shows_the_parts_of_the_relevance_when_the_words_were_read():
    signals = PoolRelevance(np.linspace(0.1, 0.9, len(C)), np.arange(len(C), dtype=float),
                            np.eye(len(C)))
    sel = select(Q, C, 3, **signals.select_keywords())
    for i, entry in enumerate(entries(sel, signals=signals)):
        pick = int(sel.indices[i])
        assert entry["cosine"] == pytest.approx(signals.cosine[pick])
        assert entry["lexical"] == pytest.approx(signals.lexical[pick])
        # the relevance is the pool units of the two parts: z of the sum of their z-scores
        assert entry["relevance"] == pytest.approx(
            float(signals.select_keywords()["relevance"][pick]))


# --- held back: restates or displaced ---


def test_word_pairs_are_consecutive_case_folded_words():
    assert word_pairs("The cat, the CAT sat") == {("the", "cat"), ("cat", "the"), ("cat", "sat")}
    assert word_pairs("one") == {("one",)}
    assert word_pairs("  ...  ") == frozenset()


def test_a_copy_or_a_chunk_inside_a_passage_restates_it():
    passage = ("Caffeine has a half-life of about five hours, so an afternoon coffee is "
               "still in your blood at bedtime.")
    assert shared_pairs(passage, passage) == 1.0
    chunk = "so an afternoon coffee is still in your blood at bedtime."
    assert restated_by(chunk, ["Unrelated text.", passage]) == (1, pytest.approx(1.0))


def test_templated_pages_and_paraphrases_do_not_restate():
    a = ("The 1987 Georgia Tech Yellow Jackets football team represented the Georgia "
         "Institute of Technology during the 1987 NCAA Division I-A football season.")
    b = a.replace("1987", "1988")
    assert 0.5 < shared_pairs(a, b) < RESTATES
    assert restated_by(a, [b]) == (None, pytest.approx(shared_pairs(a, b)))
    paraphrase = "The half-life of caffeine is roughly five hours."
    assert restated_by(paraphrase, ["Caffeine has a half-life of about five hours."])[0] is None


def test_a_text_without_words_has_nothing_to_compare_and_no_kept_passage_restates_nothing():
    for wordless in ("", "!!!", "🙂🙂 🎉", "  ...  "):
        assert shared_pairs(wordless, "anything at all") == pytest.approx(0.0, abs=1e-12)
        assert restated_by(wordless, ["anything at all", wordless]) == (None, 0.0)
    assert restated_by("some words", []) == (None, 0.0)


def test_excerpt_is_one_line_cut_at_a_word():
    assert excerpt("short\n text") == "short text"
    long = "word " * 60
    cut = excerpt(long, 20)
    assert cut.endswith("…") and len(cut) <= 21 and long.startswith(cut[:-1])


def reference(picked, top_k, held, texts):
    """{pick: [(id, rank, relation)]}, written out directly: each word pair weighs 1 / the
    number of the pool's candidates holding it; a held candidate is a copy of the
    pick whose share, its pairs in the pick ("restates") or the pick's in it
    ("contains"), is largest and at least RESTATES (the first such on a tie)."""
    def pairs(t):
        w = re.findall(r"\w+", t.casefold())
        return set(zip(w, w[1:], strict=False)) or ({tuple(w)} if w else set())
    held_by: dict = {}
    for c in range(len(texts)):
        for pair in pairs(texts[c]):
            held_by[pair] = held_by.get(pair, 0) + 1

    def share(a, b):
        mine = pairs(texts[a])
        weight = sum(1 / held_by[p] for p in mine)
        return sum(1 / held_by[p] for p in mine & pairs(texts[b])) / weight if mine else 0.0

    newcomers = [p for p in picked if p not in top_k]
    out: dict[int, list] = {}
    for slot, h in enumerate(held):
        best = None
        for p in picked:
            for relation, s in (("restates", share(h, p)), ("contains", share(p, h))):
                if s >= RESTATES and (best is None or s > best[2]):
                    best = (p, relation, s)
        if best is not None:
            out.setdefault(best[0], []).append((h, top_k.index(h) + 1, best[1]))
        else:
            owner = newcomers[min(slot, len(newcomers) - 1)]
            out.setdefault(owner, []).append((h, top_k.index(h) + 1, "displaced"))
    return out


WORDS = st.sampled_from(["ada", "wrote", "the", "first", "program", "engine", "of", "1843"])


@given(st.lists(st.lists(WORDS, min_size=1, max_size=6).map(" ".join), min_size=3,
                max_size=8), st.data())
def test_every_held_back_candidate_is_listed_once_as_the_reference_says(texts, data):
    n = len(texts)
    k = data.draw(st.integers(1, n - 1))
    top_k = data.draw(st.permutations(range(n)))[:k]
    others = [i for i in range(n) if i not in top_k]
    kept_top = data.draw(st.lists(st.sampled_from(top_k), unique=True,
                                  min_size=max(0, k - len(others)), max_size=k - 1))
    picked = kept_top + others[: k - len(kept_top)]
    held = [c for c in top_k if c not in picked]
    got = held_back_entries(picked, top_k, held, texts.__getitem__, lambda j: j,
                            judge=Judge(texts))
    flat = sorted(e["id"] for entries in got.values() for e in entries)
    assert flat == sorted(held)
    assert {p: [(e["id"], e["rank"], e["relation"]) for e in es] for p, es in got.items()} \
        == reference(picked, top_k, held, texts)


def test_without_texts_every_entry_is_displaced_and_sources_are_named():
    got = held_back_entries([0, 3], [0, 1], [1], None, lambda j: f"id{j}",
                            lambda j: "a.txt")
    assert got == {3: [{"id": "id1", "rank": 2, "relation": "displaced", "source": "a.txt"}]}


def test_restated_by_reads_the_pool_it_is_given_and_refuses_one_without_the_texts():
    a, b = "the cache keeps 512 entries", "In short, the cache keeps 512 entries."
    assert restated_by(a, [b], pool=[b, "other words", a]) == (0, pytest.approx(1.0))
    with pytest.raises(ValueError, match="^pool: "):
        restated_by(a, [b], pool=[b, "other words"])
