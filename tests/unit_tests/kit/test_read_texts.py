"""vrsd_kit.lexical.read_texts: the texts read together, as arrays of code points, equal
each text read alone by the reference reading (regular expressions, a Counter, the
documented word id in Python integers: tests/helpers/reading.py); ``word_id`` is its
formula and does not depend on PYTHONHASHSEED; the cache of readings (least recently used
dropped first, bounded by bytes: tests/unit_tests/kit/test_reading_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.reading import int64, reference_reading, reference_tokens, reference_word_id
from vrsd_kit import lexical
from vrsd_kit.lexical import TextWords, read_text, read_texts, tokenize, word_id, word_ids

ROOT = Path(__file__).resolve().parents[3]


def assert_same(got: TextWords, want: TextWords) -> None:
    for a, b in ((got.ids, want.ids), (got.counts, want.counts), (got.pairs, want.pairs),
                 (got.ending, want.ending)):
        assert a.dtype == b.dtype
        assert a.tolist() == b.tolist()


def assert_read_as_the_reference(texts: list[str]) -> None:
    read_text.cache_clear()
    together = read_texts(texts)
    assert len(together) == len(texts)
    for text, got in zip(texts, together, strict=True):
        assert_same(got, reference_reading(text))
    read_text.cache_clear()
    for text, got in zip(texts, together, strict=True):
        assert_same(read_text(text), got)


PIECES = st.sampled_from([
    # ASCII words, digits, underscores; Latin-1; casefolds that change the length or
    # the script (ß -> ss, İ -> i + a combining dot, ﬁ -> fi, ŉ -> ʼn, µ -> Greek μ,
    # the combining ypogegrammeni -> ι, Cherokee small letters -> capitals)
    "caffeine", "Caffeine", "CAFFEINE", "half", "life", "a", "of", "the", "1987", "x_y", "_",
    "Straße", "STRASSE", "İstanbul", "ﬁle", "ŉ", "µs", "naïve", "Ÿ", "ÆØÅ", "\u0345", "ꭰꭱ",
    # Greek (final sigma), Cyrillic, Devanagari, combining marks, astral letters (Deseret
    # casefolds, mathematical bold does not)
    "ΣΊΣΥΦΟΣ", "σοφός", "Москва", "ЁЛКА", "नमस्ते", "é", "e\u0301", "\u0301", "a\u0308\u0323",
    "\U00010400\U00010401", "\U0001d400\U0001d41b", "x\U0001d7d9",
    # scripts without spaces (bigrams), emoji and symbols (in no token)
    "東京タワー", "は高い", "日本語", "한국어", "ภาษาไทย", "\U00020000\U00020001", "\u0e31",
    "\u3099",
    "🙂", "🎉🎉", "👩\u200d💻", "€", "©", "\u00a0", "\u200b",
    # spaces, breaks and other punctuation
    " ", " ", "  ", "\t", "\n", "\n\n", ".", "...", "!?", ";", ". ", ".\n", "\u3002", "\uff01",
    "\uff1f", "\uff1b", ",", "-", "'", "(", ")", "\"", "\0",
])
TEXT = st.lists(PIECES, max_size=30).map("".join) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(TEXT, max_size=12))
def test_texts_read_together_equal_each_text_read_alone(texts: list[str]) -> None:
    assert_read_as_the_reference(texts)


@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_a_texts_words_are_its_tokenize_words(text: str) -> None:
    words = Counter(tokenize(text))
    reading = read_text(text)
    assert reading.ids.tolist() == word_ids(list(words)).tolist()
    assert reading.counts.tolist() == list(map(float, words.values()))
    assert [t for t in reference_tokens(text) if t[0] not in lexical._BREAKS] == tokenize(text)


def test_hand_picked_texts_read_together_and_alone_agree() -> None:
    texts = ["", "!!!", ".\n;", "word", "word.", "one word", "the last word",
             "Word. word!", "one. two three.\nfour", "🙂 🙂", "東京タワーは高い。Tokyo tower",
             "a a a b a", "a a a b a", "é e\u0301", "Straße STRASSE strasse", "İ i\u0307 I",
             "ǅ ǆ Ǆ", "lone \ud800 surrogate", "nul\0inside", "\U00010400 \U00010428",
             # a spaceless script's combining mark: after a word it is part of the word,
             # elsewhere part of its script's run (tokenize's two alternatives)
             "aั ั กั ab\u0301ั東 か\u3099き"]
    assert_read_as_the_reference(texts)
    together = read_texts(texts)
    assert together[texts.index("a a a b a")] is together[texts.index("a a a b a") + 1]
    assert read_texts([]) == []
    words = read_text("word. Word word two")
    assert words.counts.tolist() == [3.0, 1.0]
    assert words.ids.tolist() == [word_id("word"), word_id("two")]
    assert read_text("Straße").ids.tolist() == [word_id("strasse")]  # ß casefolds to ss
    assert read_text("İ").ids.tolist() == [word_id("i\u0307")]  # a letter and its mark
    assert read_text("the last word").pairs.size == 2
    # the ending: the last five pairs of consecutive words, none across a sentence's end
    def pair(x: str, y: str) -> int:
        return int64(reference_word_id(x) * int(lexical._NEXT) + reference_word_id(y))

    assert read_text("a b c. d e f g h").ending.tolist() == sorted(
        pair(x, y) for x, y in ("bc", "de", "ef", "fg", "gh"))
    assert read_text("five words are too few").ending.size == 0
    assert read_text("!!! ...").ids.size == read_text("!!! ...").pairs.size == 0


def test_a_batch_longer_than_the_kept_powers_reads_as_the_reference() -> None:
    long = " ".join(f"word{i}" for i in range(lexical._KEPT_POWERS // 5))
    assert len(long) > lexical._KEPT_POWERS
    assert_read_as_the_reference([long, "after it", long[:1000] + " 東京"])


@settings(max_examples=300, deadline=None)
@given(word=st.text(max_size=20))
def test_the_word_id_is_its_documented_formula(word: str) -> None:
    assert word_id(word) == reference_word_id(word)
    assert word_ids([word, "x", word]).tolist() == [word_id(word), word_id("x"), word_id(word)]


def test_word_ids_do_not_depend_on_the_hash_seed() -> None:
    code = ("from vrsd_kit.lexical import read_text, word_id; "
            "print(word_id('caffeine'), read_text('Caffeine has a half-life.').pairs.tolist())")
    printed = {subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed,
                                   "PYTHONPATH": str(ROOT)}).stdout
               for seed in ("1", "2")}
    assert len(printed) == 1
    assert printed.pop().split()[0] == str(reference_word_id("caffeine"))
    assert word_ids([]).shape == (0,)
    assert isinstance(word_id("x"), int) and word_id("x") != word_id("X")


def test_the_cache_counts_and_drops_the_least_recently_used() -> None:
    read_text.cache_clear()
    read_texts(["a b", "c d", "a b"])
    info = read_text.cache_info()
    kept = sum(lexical._reading_bytes(text, read_text(text)) for text in ("a b", "c d"))
    assert (info.hits, info.misses, info.currsize) == (1, 2, kept)
    assert read_text.cache_info().hits == 3
    # a cache with room for two readings of these sizes, not three
    room = 2 * lexical._reading_bytes("three", read_text("three")) + 1
    reader = lexical._Reader(room)
    first = reader("one")
    reader("two")
    reader("one")  # "two" is now the least recently used
    reader("three")
    assert reader.cache_info().currsize == sum(  # "one" and "three"
        lexical._reading_bytes(text, read_text(text)) for text in ("one", "three"))
    assert reader("one") is first
    assert reader.cache_info().misses == 3
    reader("two")  # dropped: read again
    assert reader.cache_info().misses == 4
    reader.cache_clear()
    assert reader.cache_info() == (0, 0, room, 0)


def test_the_pairs_of_two_texts_differ_where_their_words_do() -> None:
    one, other = read_texts(["a caffeine dose", "a coffee dose"])
    assert np.intersect1d(one.pairs, other.pairs).size == 0  # no pair in common
    assert set(read_text("caffeine dose").pairs.tolist()) < set(one.pairs.tolist())
