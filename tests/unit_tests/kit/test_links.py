"""The links between candidates the kit reads from their words (``vrsd_kit.lexical.PoolLinks``)
and what a pick a link brought in says (``metadata["vrsd"]["linked_to"]``)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from tests.helpers.links import link_words_by_counting
from tests.helpers.reading import reference_reading
from tests.unit_tests.kit.test_rerank import Passage, PassageView
from vrsd_core import DEFAULT_METHOD, method_options, pool_units, select
from vrsd_kit.lexical import Judge, pool_links, pool_relevance, tokenize
from vrsd_kit.rerank import pool_keywords, rerank
from vrsd_kit.settings import build_settings

COMMON = "the a of and in to was is for on with by as film river city year known".split()
FILL = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
        "rho sigma tau upsilon").split()
QUESTION = "Who is the spouse of the director of Ed Wood?"


def bridge_pool(seed: int, n: int = 20, d: int = 16):
    """A question whose second passage (5) is about a bridge (Tim Burton) named by the
    first (0), among word soup; 0's vector is near the question's."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d)
    texts = [" ".join([*rng.choice(COMMON, 6), *rng.choice(FILL, 4)]) for _ in range(n)]
    texts[0] = "Ed Wood is a film directed by Tim Burton in 1994 " + texts[0]
    texts[5] = "Tim Burton married Helena Bonham Carter " + texts[5]
    x = rng.standard_normal((n, d)) + 0.5 * q
    x[0] = q + 0.1 * rng.standard_normal(d)
    return q, x, texts


def direct_links(query: str, texts: list[str]):
    """The links written out word by word: cosine of tf * idf over the words outside the
    question, and the chance test on the shared words."""
    n = len(texts)
    counts = [Counter(tokenize(t)) for t in texts]
    asked = set(tokenize(query))
    df = Counter(w for c in counts for w in c)
    idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
    vec = [{w: c * idf[w] for w, c in cnt.items() if w not in asked} for cnt in counts]
    norm = [math.sqrt(sum(v * v for v in x.values())) for x in vec]
    pairs = math.log(n * (n - 1) / 2)
    cosine = np.zeros((n, n))
    beyond = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            shared = (vec[i].keys() & vec[j].keys())
            if norm[i] and norm[j]:
                cosine[i, j] = sum(vec[i][w] * vec[j][w] for w in shared) / (norm[i] * norm[j])
            surprise = sum(pairs - math.log(df[w] * (df[w] - 1) / 2) for w in shared)
            beyond[i, j] = surprise > pairs + 1e-9
    return cosine, beyond


def continues(text: str, other: str) -> bool:
    """``other`` holds every pair of ``text``'s ending (its last five pairs of consecutive
    words, by the reference reading)."""
    ending = reference_reading(text).ending.tolist()
    return bool(ending) and set(ending) <= set(reference_reading(other).pairs.tolist())


def overlapping_chunks(words: list[str], size: int, overlap: int) -> list[str]:
    """``words`` cut into chunks of ``size`` words, each repeating the last ``overlap`` of
    the one before (as a text splitter with an overlap cuts a document)."""
    step = size - overlap
    return [" ".join(words[at:at + size]) for at in range(0, len(words) - overlap, step)]


@pytest.mark.parametrize("seed", range(4))
def test_the_links_are_the_words_cosine_outside_the_question_and_the_chance_test(seed):
    _, _, texts = bridge_pool(seed)
    got = pool_links(QUESTION, texts, background=())  # the pool's statistics alone
    cosine, beyond = direct_links(QUESTION, texts)
    np.testing.assert_allclose(got.cosine, cosine, atol=1e-12)
    np.testing.assert_array_equal(got.beyond_chance, beyond)
    assert got.beyond_chance[0, 5] and got.cosine[0, 5] > 0  # the bridge


def test_chunks_cut_from_one_document_with_an_overlap_link_nothing_to_each_other():
    """Two chunks of one document that repeat each other's edge share its rare words (the
    names it is about), but one continuing the other is no hop: the judge says so
    (``Judge.continued``, against the reference reading's ending) and the keywords the
    rerank body builds hold no link between them. The same chunks cut without the overlap
    link as the words say, and a passage about a name the document mentions still links."""
    rng = np.random.default_rng(0)
    story = ("Ed Wood is a film directed by Tim Burton starring Johnny Depp and Martin "
             "Landau . Burton shot the film in black and white . Depp plays Wood and "
             "Landau plays Bela Lugosi . The film follows Wood through the making of Glen "
             "or Glenda and Plan 9 . Burton cast Depp again and Landau won an Oscar for "
             "the film").split()
    soup = [" ".join(rng.choice(COMMON + FILL, 12)) for _ in range(12)]
    bridge = "Johnny Depp married Amber Heard after years with Vanessa Paradis"
    cut = overlapping_chunks(story, 30, 8)
    plain = [" ".join(story[at:at + 30]) for at in range(0, len(story), 30)][:len(cut)]
    for chunks, overlap in ((cut, True), (plain, False)):
        texts = [*chunks, bridge, *soup]
        n = len(texts)
        continued = Judge(texts).continued()
        want = np.array([[i != j and (continues(texts[i], texts[j]) or continues(
            texts[j], texts[i])) for j in range(n)] for i in range(n)])
        np.testing.assert_array_equal(continued, want)
        assert bool(continued[0, 1]) is overlap
        read = pool_links(QUESTION, texts)  # what the words say, continued or not
        assert read.beyond_chance[0, 1] and read.cosine[0, 1] > 0  # Depp, Landau, Burton
        signals = pool_relevance(QUESTION, texts, np.ones(4), np.ones((n, 4)))
        links = pool_keywords(DEFAULT_METHOD, signals, texts)[0]["links"]
        assert bool(links.beyond_chance[0, 1]) is not overlap
        assert (float(links.cosine[0, 1]) == 0.0) is overlap
        np.testing.assert_array_equal(links.beyond_chance, read.beyond_chance & ~want)
        assert links.beyond_chance[0, len(chunks)]  # the bridge: Johnny Depp


def test_a_question_word_links_nothing_and_one_shared_word_is_never_beyond_chance():
    texts = ["caffeine sleep zebra", "caffeine sleep yak", "zebra quokka", "walrus yak"]
    links = pool_links("caffeine sleep", texts)
    assert links.cosine[0, 1] == pytest.approx(0.0, abs=1e-12)  # only the question's words
    assert links.cosine[0, 2] > 0 and not links.beyond_chance.any()
    assert links.words(texts[0], texts[2]) == []


def test_links_are_read_only_for_the_default_and_only_with_the_words():
    q, x, texts = bridge_pool(16)
    items = [Passage(f"p{i}", t) for i, t in enumerate(texts)]
    words = pool_relevance(QUESTION, texts, q, x)
    assert "links" in words.select_keywords(method_options(DEFAULT_METHOD))
    assert "links" not in words.select_keywords(())
    off = rerank(PassageView(), items, query=QUESTION, query_vector=q, vectors=x,
                 settings=build_settings({"k": 4, "lexical": False}))
    assert [p.id for p in off] == [f"p{i}" for i in select(q, x, 4).indices]
    assert all("linked_to" not in p.meta["vrsd"] for p in off)
    for method in ("mmr", "similarity"):
        other = rerank(PassageView(), items, query=QUESTION, query_vector=q, vectors=x,
                       settings=build_settings({"k": 4, "method": method}))
        assert all("linked_to" not in p.meta["vrsd"] for p in other)
    with pytest.raises(ValueError, match="links are read per query"):
        build_settings({"k": 4, "options": {"links": None}})


def test_a_pick_a_link_brought_in_says_which_pick_and_which_words():
    """The pool's statistics alone (``background=()``): the soup's words are what the
    pool says they are, so the bridge stands out among links of chance."""
    bridged = 0
    said = 0
    for seed in range(20):
        q, x, texts = bridge_pool(seed)
        items = [Passage(f"p{i}", t) for i, t in enumerate(texts)]
        got = rerank(PassageView(), items, query=QUESTION, query_vector=q, vectors=x,
                     settings=build_settings({"k": 4, "background": ()}))
        words = pool_relevance(QUESTION, texts, q, x, background=())
        core = select(q, x, 4, **words.select_keywords(
            method_options(DEFAULT_METHOD)))
        assert [p.id for p in got] == [f"p{i}" for i in core.indices]
        plain = select(q, x, 4, relevance=pool_units(words.signals), profiles=words.profiles)
        asked = set(tokenize(QUESTION))
        for rank, pick in enumerate(got):
            entry = pick.meta["vrsd"]
            via = core.info["linked_to"][rank]
            if via < 0:
                assert "linked_to" not in entry  # a pick with no link says nothing
                continue
            said += 1
            link = entry["linked_to"]
            assert link["rank"] == via + 1 and link["id"] == got[via].id
            assert link["words"]
            other = got[via].text
            for phrase in link["words"]:
                for word in tokenize(phrase):
                    assert word in tokenize(pick.text) and word in tokenize(other)
                    assert word not in asked
            bridged += (pick.id, link["id"], link["words"][0]) == ("p5", "p0", "Tim Burton")
        # held back: what top-k by the same relevance would have returned, as without links
        assert core.info["top_k"] == plain.info["top_k"]
    assert said and bridged  # links were said, and one of them is the bridge


def test_the_link_words_join_only_words_written_next_to_each_other_and_name_each_once():
    """A phrase is words written next to each other in the text (never across a full
    stop), and a word is named once, whatever its spelling ("failed", "Failed")."""
    _, _, texts = bridge_pool(0)
    texts[0] = "Ed Wood is a film directed by Tim Burton. Burton failed. Failed twice"
    texts[5] = "Tim Burton married Helena Bonham Carter; Burton failed twice"
    words = pool_links(QUESTION, texts).words(texts[0], texts[5])
    folded = [w.casefold() for phrase in words for w in phrase.split()]
    assert len(folded) == len(set(folded)), words
    assert {"burton", "failed"} <= set(folded), words
    assert all(phrase in texts[0] for phrase in words), words


def test_a_phrase_does_not_run_across_a_line_break():
    """A title on its own line and a body that starts with it ("Tim Burton\nTim Burton
    married ...", as a chunk under its heading reads) name the phrase once, not joined
    with itself across the line."""
    _, _, texts = bridge_pool(0)
    texts[0] = "Tim Burton\nTim Burton directed Ed Wood in 1994"
    texts[5] = "Tim Burton\nTim Burton married Helena Bonham Carter"
    links = pool_links(QUESTION, texts)
    words = links.words(texts[0], texts[5])
    assert words == ["Tim Burton"], words
    asked = frozenset(tokenize(QUESTION))
    assert link_words_by_counting(links, texts[0], texts[5], asked) == words


SPELLINGS = ["Tim Burton", "TIM burton", "Straße", "STRASSE", "İstanbul", "東京タワー",
             "東京", "Café", "café.", "Burton-Carter", "x2", "Ed Wood."]


@pytest.mark.parametrize("seed", range(6))
def test_the_link_words_are_those_the_texts_counted_again_give(seed):
    """``PoolLinks.words`` reads the words the pool has read (no second tokenising): the
    same words, in the same order, as counting both texts' words again, for every pair of
    a pool whose texts mix cases, scripts without spaces and spellings casefold changes."""
    rng = np.random.default_rng(seed)
    _, _, texts = bridge_pool(seed)
    for i in range(len(texts)):
        extra = rng.choice(SPELLINGS, 3)
        texts[i] = " ".join([texts[i], *extra]) if i % 2 else " ".join([*extra, texts[i]])
    links = pool_links(QUESTION, texts)
    asked = frozenset(tokenize(QUESTION))
    named = 0
    for i in range(len(texts)):
        for j in range(len(texts)):
            if i != j:
                got = links.words(texts[i], texts[j])
                assert got == link_words_by_counting(links, texts[i], texts[j], asked), (i, j)
                named += bool(got)
    assert named  # some pairs link
