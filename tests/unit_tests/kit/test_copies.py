"""The one judge of copies (``vrsd_kit.lexical.Judge``) and the default that obeys it, on the
shapes a real folder holds: a short chunk inside a longer one, the same file in two
packages, a shared disclaimer, passages without words. Through the one rerank body, as
every adapter runs it: the default never keeps a copy of a pick while something else
is left, copies never fill empty slots unless asked, and what the entries say is what
the judge says about what was kept.

Vectors: a bag of the passage's words hashed into 64 dimensions (a copy has its
original's vector, a chunk one close to it), so nothing loads a model.
"""

from __future__ import annotations

import zlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.helpers.copies import closing_copies, first_copy, two_run_reference
from tests.helpers.items import Passage, PassageView
from tests.helpers.reading import word_pairs
from vrsd_core import DEFAULT_METHOD, method_options, select
from vrsd_kit.lexical import (
    RESTATES,
    Judge,
    pool_relevance,
    restated_by,
    shared_pairs,
    tokenize,
)
from vrsd_kit.rerank import NO_WORDS, rerank
from vrsd_kit.settings import build_settings

DIM = 64


def embed(text: str) -> np.ndarray:
    vector = np.zeros(DIM)
    for word in tokenize(text):
        vector[zlib.crc32(word.encode()) % DIM] += 1.0
    vector[zlib.crc32(text.encode()) % DIM] += 0.05  # no zero vector for a word-less text
    return vector




def run(passages, query, k, **values):
    vectors = np.array([embed(p.text) for p in passages])
    return rerank(PassageView(), passages, query=query, query_vector=embed(query),
                  vectors=vectors, settings=build_settings({"k": k, "fetch_k": None, **values}))


def check_agreement(passages, kept):
    """What the default kept and what its entries say agree with the pool's judge: no
    kept passage is a copy of another kept one, every held-back entry has the relation
    the judge gives it against what was kept, and nothing is listed twice."""
    judge = Judge([p.text for p in passages])
    index = {p.id: i for i, p in enumerate(passages)}
    picked = [index[p.id] for p in kept]
    fills = [p for p in kept if "copy_of" in p.meta["vrsd"]]
    distinct = [index[p.id] for p in kept if p not in fills]
    for t, c in enumerate(distinct):
        assert judge.copy_of(c, distinct[:t]) is None, (passages[c].id, "is a copy of a pick")
        assert judge.copy_of(distinct[t - 1] if t else c, [c] if t else []) is None
    for a in distinct:
        for b in distinct:
            if a != b:
                assert judge.share(a, b) < RESTATES, (passages[a].id, passages[b].id)
    listed = []
    for pick in kept:
        for entry in pick.meta["vrsd"].get("held_back", []):
            listed.append(entry["id"])
            found = judge.copy_of(index[entry["id"]], picked)
            if found is None:
                assert entry["relation"] == "displaced"
            else:
                assert entry["relation"] == found.relation
                assert passages[picked[found.of]].id == pick.id
                assert entry["share"] == pytest.approx(found.share, abs=1e-3)
    assert len(listed) == len(set(listed))
    for pick in fills:
        assert pick.meta["vrsd"]["copy_of"]["relation"] in ("restates", "contains")


# --- the shapes of a real folder -------------------------------------------------------

REDISTRIBUTION = (
    "4. Redistribution. You may reproduce and distribute copies of the Work or Derivative "
    "Works thereof in any medium, with or without modifications, and in Source or Object "
    "form, provided that You meet the following conditions: (a) You must give any other "
    "recipients of the Work or Derivative Works a copy of this License; and (b) You must "
    "cause any modified files to carry prominent notices stating that You changed the "
    "files; and (c) You must retain, in the Source form of any Derivative Works that You "
    "distribute, all copyright, patent, trademark, and attribution notices from the "
    "Source form of the Work.")
CONDITIONS = (
    "You must give any other recipients of the Work or Derivative Works a copy of this "
    "License; and (b) You must cause any modified files to carry prominent notices "
    "stating that You changed the files")
GRANT = (
    "2. Grant of Copyright License. Subject to the terms and conditions of this License, "
    "each Contributor hereby grants to You a perpetual, worldwide, non-exclusive, "
    "no-charge, royalty-free, irrevocable copyright license to reproduce, prepare "
    "Derivative Works of, publicly display, publicly perform, sublicense, and distribute "
    "the Work and such Derivative Works in Source or Object form.")
PATENT = (
    "3. Grant of Patent License. Each Contributor hereby grants to You a perpetual, "
    "worldwide, non-exclusive, no-charge, royalty-free, irrevocable patent license to "
    "make, have made, use, offer to sell, sell, import, and otherwise transfer the Work.")
INSTALL = "Install the package with pip install example, then import it in Python."
QUERY = "what are the conditions for redistributing software under the Apache License?"

FOLDER = [
    Passage("a/LICENSE#4", REDISTRIBUTION, {"source": "a/LICENSE"}),
    Passage("b/LICENSE#4", REDISTRIBUTION, {"source": "b/LICENSE"}),  # the same file twice
    Passage("a/LICENSE#4b", CONDITIONS, {"source": "a/LICENSE"}),  # a chunk inside #4
    Passage("a/LICENSE#2", GRANT, {"source": "a/LICENSE"}),
    Passage("b/LICENSE#2", GRANT, {"source": "b/LICENSE"}),
    Passage("a/LICENSE#3", PATENT, {"source": "a/LICENSE"}),
    Passage("a/README", INSTALL, {"source": "a/README"}),
]


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_chunk_inside_a_kept_one_and_a_copy_in_another_file_are_never_kept(k):
    kept = run(FOLDER, QUERY, k)
    ids = [p.id for p in kept]
    assert sum(i in ids for i in ("a/LICENSE#4", "b/LICENSE#4", "a/LICENSE#4b")) == 1
    assert sum(i in ids for i in ("a/LICENSE#2", "b/LICENSE#2")) <= 1
    check_agreement(FOLDER, kept)


def test_the_held_back_copies_say_restates_and_contains():
    kept = run(FOLDER, QUERY, 3)
    held = {e["id"]: e for p in kept for e in p.meta["vrsd"]["held_back"]}
    first = kept[0].id
    assert first in ("a/LICENSE#4", "b/LICENSE#4", "a/LICENSE#4b")
    for twin in {"a/LICENSE#4", "b/LICENSE#4", "a/LICENSE#4b"} - {first}:
        if twin in held:  # top-k would have returned it: it repeats the first pick
            assert held[twin]["relation"] in ("restates", "contains")


def test_copies_never_fill_empty_slots_unless_asked():
    # seven passages, four distinct contents: k = 6 cannot be met without a copy
    kept = run(FOLDER, QUERY, 6)
    assert len(kept) == 4
    assert {p.meta["vrsd"]["stopped"] for p in kept} == {"restatements"}
    assert not any(p.meta["vrsd"]["gain"] == pytest.approx(0.0, abs=1e-12)
                   and "copy_of" not in p.meta["vrsd"]
                   for p in kept)
    check_agreement(FOLDER, kept)
    filled = run(FOLDER, QUERY, 6, fill_with_copies=True)
    assert [p.id for p in filled[:4]] == [p.id for p in kept]
    assert len(filled) == 6 and all("stopped" not in p.meta["vrsd"] for p in filled)
    for copy in filled[4:]:
        of = copy.meta["vrsd"]["copy_of"]
        assert of["rank"] < 4 and of["share"] >= RESTATES
        judge = Judge([copy.text, filled[of["rank"]].text])
        assert judge.copy_of(0, [1]) is not None
    check_agreement(FOLDER, filled)


DISCLAIMER = (
    "This document is provided by the maintainers as is, without warranty of any kind, "
    "express or implied, including but not limited to the warranties of merchantability, "
    "fitness for a particular purpose and noninfringement. In no event shall the authors "
    "or copyright holders be liable for any claim, damages or other liability, whether in "
    "an action of contract, tort or otherwise, arising from, out of or in connection with "
    "the software or the use or other dealings in the software.")


def test_word_pairs_stop_at_a_sentence_or_a_line():
    assert word_pairs("Kingdom of the Isles\nThe islands were Norse. Man too!") == {
        ("kingdom", "of"), ("of", "the"), ("the", "isles"), ("the", "islands"),
        ("islands", "were"), ("were", "norse"), ("man", "too")}
    assert word_pairs("Yes. No") == {("yes",), ("no",)}
    # so a chunk that starts at a sentence has no pair its paragraph lacks
    paragraph = "Caffeine Facts\nCaffeine blocks adenosine. Its half-life is five hours."
    assert Judge([paragraph, "Its half-life is five hours."]).share(1, 0) == pytest.approx(1.0)


def unweighted_share(text: str, other: str) -> float:
    mine = word_pairs(text)
    return len(mine & word_pairs(other)) / len(mine)


def test_a_shared_disclaimer_does_not_make_a_different_fact_a_restatement():
    fact_a = "The cache keeps 512 entries and evicts old ones. "
    fact_b = "Retries back off and double the wait each time. "
    a, b = fact_a + DISCLAIMER, fact_b + DISCLAIMER
    # counted alike, 90 % of b's word pairs are in a (the disclaimer); weighed by how many
    # passages hold them, b's own fact counts twice as much as each shared pair
    assert unweighted_share(b, a) > RESTATES > shared_pairs(b, a)
    pool = [a, b, "Unrelated notes on the build.", "Release notes for version 2."]
    assert restated_by(b, [a], pool=pool) == (None, pytest.approx(Judge(pool).share(1, 0)))
    # the disclaimer in more files counts for less still
    crowded = [a, b, *(f"Module {i} reads its settings from a file. " + DISCLAIMER
                       for i in range(4))]
    assert Judge(crowded).share(1, 0) < Judge(pool).share(1, 0) < RESTATES
    passages = [Passage(f"p{i}", t) for i, t in enumerate(crowded)]
    kept = run(passages, "how many entries does the cache keep and how do retries back off",
               2)
    assert {p.id for p in kept} == {"p0", "p1"}  # both facts, not an unrelated passage
    check_agreement(passages, kept)
    # the same disclaimer with the same fact is a copy
    assert Judge([a, fact_a.upper() + DISCLAIMER, b]).copy_of(1, [0]).relation == "restates"



@pytest.mark.parametrize("language", ["english", "german"])
def test_with_stemming_a_shared_disclaimer_is_still_no_restatement(language):
    fact_a = "The cache keeps 512 entries and evicts old ones. "
    fact_b = "Retries back off and double the wait each time. "
    a, b = fact_a + DISCLAIMER, fact_b + DISCLAIMER
    pool = [a, b, "Unrelated notes on the build.", "Release notes for version 2."]
    judge = Judge(pool, language)
    assert judge.share(1, 0) < RESTATES and judge.copy_of(1, [0]) is None
    crowded = [a, b, *(f"Module {i} reads its settings from a file. " + DISCLAIMER
                       for i in range(4))]
    assert Judge(crowded, language).share(1, 0) < judge.share(1, 0)
    # the same fact in other inflections, under the same disclaimer, is a copy
    inflected = "The caches keep 512 entry and evicted old one. " + DISCLAIMER
    assert Judge([a, inflected, b], "english").copy_of(1, [0]) is not None


@pytest.mark.parametrize("wordless", ["", "!!!", "🙂🙂🙂", "  —  "])
def test_a_passage_without_words_is_never_a_copy(wordless):
    passages = [Passage("fact", "Caffeine has a half-life of about five hours in adults."),
                Passage("other", "Alcohol fragments the second half of the night's sleep."),
                Passage("empty", wordless), Passage("empty2", wordless)]
    judge = Judge([p.text for p in passages])
    assert judge.words(2) == 0 and judge.copy_of(2, [0, 1, 3]) is None
    assert judge.copy_of(0, [2]) is None  # and nothing is a copy of it
    kept = run(passages, "caffeine half-life", 3)
    check_agreement(passages, kept)
    for pick in kept:
        for entry in pick.meta["vrsd"]["held_back"]:
            if entry["id"].startswith("empty"):
                assert entry["relation"] == "displaced" and entry["note"] == NO_WORDS


ZH = ("咖啡因在成年人体内的半衰期大约是五个小时，所以下午喝的一杯咖啡到了晚上睡觉的时候仍然有一半"
      "留在血液里。它会推迟入睡的时间，减少深度睡眠，并让人在夜里更容易醒来。")
JA = ("カフェインの半減期は大人で約五時間なので、午後に飲んだコーヒーは寝る時間になっても半分が"
      "血液に残っています。そのため寝つきが遅くなり、深い睡眠が減り、夜中に目が覚めやすくなります。")


@pytest.mark.parametrize(("text", "edited", "other", "query"), [
    (ZH, ZH.replace("五个", "六个"), "酒精会破坏后半夜的睡眠，并抑制快速眼动睡眠。",
     "咖啡因的半衰期是多久？"),
    (JA, JA.replace("五時間", "六時間"), "アルコールは夜の後半の睡眠を乱し、レム睡眠を抑えます。",
     "カフェインの半減期はどのくらいですか"),
])
def test_a_one_character_edit_still_restates_in_chinese_and_japanese(text, edited, other,
                                                                     query):
    judge = Judge([text, edited, other])
    assert judge.copy_of(1, [0]).relation == "restates"
    assert judge.copy_of(2, [0]) is None
    passages = [Passage("a", text), Passage("b", edited), Passage("c", other)]
    kept = run(passages, query, 2)
    assert [p.id for p in kept] == ["a", "c"] or [p.id for p in kept] == ["b", "c"]
    check_agreement(passages, kept)


def test_a_selection_without_copies_is_the_cores_own():
    passages = [Passage(f"p{i}", t) for i, t in enumerate([GRANT, PATENT, INSTALL,
                                                          REDISTRIBUTION])]
    kept = run(passages, QUERY, 3)
    assert all("stopped" not in p.meta["vrsd"] for p in kept)
    judge = Judge([p.text for p in passages])
    assert first_copy([0, 1, 2, 3], judge) is None
    assert first_copy([3, 0, 3], Judge([p.text for p in passages])) == 2


# --- any pool of copies, chunks and distinct passages ---------------------------------

SENTENCES = [
    "The cache keeps at most 512 entries.", "Retries back off exponentially.",
    "Logs rotate every night at midnight.", "The server listens on port 8080.",
    "Tokens expire after one hour.", "Uploads are limited to ten megabytes.",
]


@st.composite
def folders(draw):
    """Passages made of runs of sentences (chunks, some inside others), copies of them,
    some word-less, each optionally ending with a shared disclaimer."""
    texts = []
    for _ in range(draw(st.integers(3, 9))):
        kind = draw(st.sampled_from(["chunk", "copy", "wordless", "disclaimer"]))
        if kind == "copy" and texts:
            texts.append(draw(st.sampled_from(texts)))
        elif kind == "wordless":
            texts.append(draw(st.sampled_from(["", "!!!", "🙂"])))
        else:
            start = draw(st.integers(0, len(SENTENCES) - 1))
            end = draw(st.integers(start + 1, len(SENTENCES)))
            text = " ".join(SENTENCES[start:end])
            texts.append(text + (" " + DISCLAIMER if kind == "disclaimer" else ""))
    return [Passage(f"p{i}", t) for i, t in enumerate(texts)]


@settings(max_examples=60, deadline=None)
@given(folders(), st.integers(1, 6), st.sampled_from(SENTENCES), st.booleans())
def test_the_default_keeps_no_copy_and_says_what_the_judge_says(passages, k, query, fill):
    kept = run(passages, query, k, fill_with_copies=fill)
    check_agreement(passages, kept)
    judge = Judge([p.text for p in passages])
    index = {p.id: i for i, p in enumerate(passages)}
    distinct = [index[p.id] for p in kept if "copy_of" not in p.meta["vrsd"]]
    left = [i for i in range(len(passages)) if i not in distinct
            and judge.copy_of(i, distinct) is None]
    if len(kept) < min(k, len(passages)):  # fewer came back: only copies were left
        assert not left
        assert {p.meta["vrsd"].get("stopped") for p in kept} == {"restatements"}
    if not fill:
        assert all("copy_of" not in p.meta["vrsd"] for p in kept)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from("a b c d e f".split()), max_size=9).map(" ".join),
                min_size=2, max_size=7), st.data())
def test_the_judge_gives_the_shares_its_definition_gives(texts, data):
    """The judge's arrays against the definition, pair by pair: each pair weighs 1 / how
    many texts hold it, the share is the weight found over the weight of all; the verdict
    is the largest share at RESTATES or more (restates first, then the earlier kept)."""
    judge = Judge(texts)
    pairs = [word_pairs(t) for t in texts]
    held = Counter(p for found in pairs for p in found)

    def share(a, b):
        weight = sum(1 / held[p] for p in pairs[a])
        return sum(1 / held[p] for p in pairs[a] & pairs[b]) / weight if pairs[a] else 0.0

    i = data.draw(st.integers(0, len(texts) - 1))
    kept = data.draw(st.lists(st.integers(0, len(texts) - 1).filter(lambda j: j != i),
                              max_size=4, unique=True))
    best = None
    for position, j in enumerate(kept):
        assert judge.share(i, j) == pytest.approx(share(i, j), abs=1e-12)
        for relation, value in (("restates", share(i, j)), ("contains", share(j, i))):
            if value >= RESTATES - 1e-12 and (best is None or value > best[2] + 1e-12):
                best = (position, relation, value)
    found = judge.copy_of(i, kept)
    assert (None if found is None else (found.of, found.relation)) == (
        None if best is None else best[:2])


@settings(max_examples=60, deadline=None)
@given(folders(), st.integers(1, 6), st.sampled_from(SENTENCES),
       st.sampled_from([None, 8, 20]))
def test_the_loops_judge_keeps_what_selecting_again_keeps(passages, k, query, budget):
    """The judge inside the greedy loop (``closes``) keeps what closing each copy from the
    start and selecting again keeps: the same picks, gains and links, in one run."""
    texts = [p.text for p in passages]
    vectors = np.array([embed(t) for t in texts])
    q = embed(query)
    keywords = pool_relevance(query, texts, q, vectors).select_keywords(
        method_options(DEFAULT_METHOD))
    if budget is not None:
        keywords.update(max_tokens=budget, token_counts=[len(t.split()) for t in texts])
    judge = Judge(texts)
    reference, closed = closing_copies(q, vectors, k, judge, **keywords)
    got = select(q, vectors, k, method=DEFAULT_METHOD, closes=judge.copies(), **keywords)
    assert got.indices.tolist() == reference.indices.tolist()
    np.testing.assert_allclose(got.gains, reference.gains, rtol=1e-12, atol=1e-12)
    assert got.info["linked_to"] == reference.info["linked_to"]
    assert got.info["closed"] == closed
    assert first_copy(got.indices.tolist(), judge) is None


def test_a_cap_without_a_budget_never_says_the_budget_stopped_it():
    """Under a per-source cap alone, a result shorter than the cap allows because only
    copies were left says "restatements", never "max_tokens" (there is no budget)."""
    folder = [Passage("a/1", REDISTRIBUTION, {"source": "a"}),
              Passage("b/1", REDISTRIBUTION, {"source": "b"}),  # a copy in another source
              Passage("c/1", INSTALL, {"source": "c"}),
              Passage("a/2", PATENT, {"source": "a"})]
    for k in (3, 4):  # the cap allows 3: a, b and c once each
        kept = run(folder, QUERY, k, group_by="source", max_per_group=1)
        assert [p.id for p in kept] == ["a/1", "c/1"]
        assert {p.meta["vrsd"].get("stopped") for p in kept} == {"restatements"}, k
        assert all("max_tokens" not in p.meta["vrsd"] for p in kept)
    capped = run(FOLDER, QUERY, 4, group_by="source", max_per_group=1)
    assert len(capped) == 3  # three sources, no copy among the three picks: the cap stopped it
    assert {p.meta["vrsd"].get("stopped") for p in capped} == {"max_per_group"}


@settings(max_examples=80, deadline=None)
@given(folders(), st.integers(1, 6), st.sampled_from(SENTENCES), st.sampled_from([8, 14, 20]),
       st.booleans(), st.booleans())
@example([Passage("p0", SENTENCES[1]), Passage("p1", SENTENCES[1]), Passage("p2", SENTENCES[0])],
         2, SENTENCES[1], 14, False, False)  # plain top-k spends the budget on the copy
def test_under_a_budget_or_cap_the_entries_are_those_of_the_two_runs(passages, k, query,
                                                                     budget, capped, fill):
    """Under a budget (and a per-source cap) where the judge closes a copy, one run says
    what the two runs said (the judge's, and the selection again without it for what
    plain top-k returns there and whether the budget or cap stopped it): the same picks,
    the same held-back candidates and the same ``stopped``."""
    passages = [Passage(p.id, p.text, {"source": f"s{i % 3}"}) for i, p in enumerate(passages)]
    texts = [p.text for p in passages]
    counter = build_settings({"k": 1, "max_tokens": 1}).token_counter
    keywords = pool_relevance(query, texts, embed(query), np.array([embed(t) for t in texts])
                              ).select_keywords(method_options(DEFAULT_METHOD))
    keywords.update(max_tokens=budget, token_counts=[counter(t) for t in texts])
    values: dict = {"max_tokens": budget, "fill_with_copies": fill}
    if capped:
        keywords.update(groups=[p.meta["source"] for p in passages], max_per_group=1)
        values.update(group_by="source", max_per_group=1)
    picks, held, stopped = two_run_reference(embed(query), np.array([embed(t) for t in texts]),
                                             k, Judge(texts), fill=fill, **keywords)
    kept = run(passages, query, k, **values)
    index = {p.id: i for i, p in enumerate(passages)}
    assert [index[p.id] for p in kept] == picks
    listed = [index[e["id"]] for p in kept for e in p.meta["vrsd"].get("held_back", [])]
    assert sorted(listed) == sorted(held)
    assert {p.meta["vrsd"].get("stopped") for p in kept} <= {stopped}
