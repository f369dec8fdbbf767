"""``vrsd_kit.explain``: "restates" only for a near-copy (word pairs), every held-back
candidate listed once, under the pick it restates or the pick that took its slot."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vrsd_kit.explain import (
    RESTATES,
    excerpt,
    held_back_entries,
    restated_by,
    shared_pairs,
    word_pairs,
)


def test_word_pairs_are_consecutive_case_folded_words():
    assert word_pairs("The cat, the CAT sat") == {("the", "cat"), ("cat", "the"), ("cat", "sat")}
    assert word_pairs("one") == {("one",)}
    assert word_pairs("  ...  ") == frozenset()


def test_a_copy_or_a_chunk_inside_a_passage_restates_it():
    passage = ("Caffeine has a half-life of about five hours, so an afternoon coffee is "
               "still in your blood at bedtime.")
    assert shared_pairs(passage, passage) == 1.0
    chunk = "so an afternoon coffee is still in your blood at bedtime."
    assert restated_by(chunk, ["Unrelated text.", passage]) == (1, 1.0)


def test_templated_pages_and_paraphrases_do_not_restate():
    a = ("The 1987 Georgia Tech Yellow Jackets football team represented the Georgia "
         "Institute of Technology during the 1987 NCAA Division I-A football season.")
    b = a.replace("1987", "1988")
    assert 0.5 < shared_pairs(a, b) < RESTATES
    assert restated_by(a, [b]) == (None, pytest.approx(shared_pairs(a, b)))
    paraphrase = "The half-life of caffeine is roughly five hours."
    assert restated_by(paraphrase, ["Caffeine has a half-life of about five hours."])[0] is None


def test_an_empty_text_adds_nothing_and_no_kept_passage_restates_nothing():
    assert shared_pairs("", "anything") == 1.0
    assert restated_by("some words", []) == (None, 0.0)


def test_excerpt_is_one_line_cut_at_a_word():
    assert excerpt("short\n text") == "short text"
    long = "word " * 60
    cut = excerpt(long, 20)
    assert cut.endswith("…") and len(cut) <= 21 and long.startswith(cut[:-1])


def reference(picked, top_k, held, texts):
    """{pick: [(id, rank, relation)]}, written out directly."""
    def pairs(t):
        w = re.findall(r"\w+", t.casefold())
        return set(zip(w, w[1:], strict=False)) or ({tuple(w)} if w else set())
    newcomers = [p for p in picked if p not in top_k]
    out: dict[int, list] = {}
    for slot, h in enumerate(held):
        a = pairs(texts[h])
        shares = [len(a & pairs(texts[p])) / len(a) if a else 1.0 for p in picked]
        best = max(range(len(picked)), key=lambda i: (shares[i], -i))
        if shares[best] >= RESTATES:
            out.setdefault(picked[best], []).append((h, top_k.index(h) + 1, "restates"))
        else:
            out.setdefault(newcomers[slot], []).append((h, top_k.index(h) + 1, "displaced"))
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
    got = held_back_entries(picked, top_k, held, texts.__getitem__, lambda j: j)
    flat = sorted(e["id"] for entries in got.values() for e in entries)
    assert flat == sorted(held)
    assert {p: [(e["id"], e["rank"], e["relation"]) for e in es] for p, es in got.items()} \
        == reference(picked, top_k, held, texts)


def test_without_texts_every_entry_is_displaced_and_sources_are_named():
    got = held_back_entries([0, 3], [0, 1], [1], None, lambda j: f"id{j}",
                            lambda j: "a.txt")
    assert got == {3: [{"id": "id1", "rank": 2, "relation": "displaced", "source": "a.txt"}]}
