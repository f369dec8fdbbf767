"""vrsd_kit.lexical.read_texts: texts read together equal each text read alone, as a
direct per-text reading (the Counter, the hashes, the pairs of one text) reads it; the
cache of readings (least recently used dropped first)."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_kit import lexical
from vrsd_kit.lexical import TextWords, read_text, read_texts, tokenize

_BREAK_CHARS = ".!?;\n\u3002\uff01\uff1f\uff1b"


def int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as numpy's int64 arithmetic wraps."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def reference_reading(text: str) -> TextWords:
    """One text read alone: its tokens counted and hashed, its pairs taken one by one."""
    folded = text.casefold()
    if lexical._ANY_SPACELESS.search(folded):
        tokens = [t for sentence in lexical._BREAK.split(text) for t in [*tokenize(sentence), "."]]
    else:
        tokens = lexical._WORD_OR_BREAK.findall(folded)
    is_word = [token[0] not in _BREAK_CHARS for token in tokens]
    counts = Counter(t for t, word in zip(tokens, is_word, strict=True) if word)
    ids = [hash(t) for t in tokens]
    pairs = set()
    for i, word in enumerate(is_word):
        if not word:
            continue
        before = i > 0 and is_word[i - 1]
        after = i + 1 < len(tokens) and is_word[i + 1]
        if after:
            pairs.add(int64(ids[i] * int(lexical._NEXT) + ids[i + 1]))
        if not before and not after:
            pairs.add(int64(ids[i] * int(lexical._ALONE) + 1))
    return TextWords(np.array([hash(t) for t in counts], dtype=np.int64),
                     np.array(list(counts.values()), dtype=np.float64),
                     np.array(sorted(pairs), dtype=np.int64))


def assert_same(got: TextWords, want: TextWords) -> None:
    for a, b in ((got.ids, want.ids), (got.counts, want.counts), (got.pairs, want.pairs)):
        assert a.dtype == b.dtype
        assert a.tolist() == b.tolist()


PIECES = st.sampled_from([
    "caffeine", "Caffeine", "CAFFEINE", "half", "life", "a", "of", "the", "1987", "Straße",
    "strasse", "naïve", "ΣΊΣΥΦΟΣ", "नमस्ते", "東京タワー", "は高い", "日本語", "한국어", "ภาษาไทย",
    "🙂", "🎉🎉", "é", "e\u0301", "_", "x_y",
    " ", " ", "  ", "\t", "\n", "\n\n", ".", "...", "!?", ";", ". ", ".\n", "\u3002", "\uff01",
    ",", "-", "'", "(", ")", "\"",
])
TEXT = st.lists(PIECES, max_size=30).map("".join) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(TEXT, max_size=12))
def test_texts_read_together_equal_each_text_read_alone(texts: list[str]) -> None:
    read_text.cache_clear()
    together = read_texts(texts)
    assert len(together) == len(texts)
    for text, got in zip(texts, together, strict=True):
        assert_same(got, reference_reading(text))
    read_text.cache_clear()
    for text, got in zip(texts, together, strict=True):
        assert_same(read_text(text), got)


def test_hand_picked_texts_read_together_and_alone_agree() -> None:
    texts = ["", "!!!", "word", "Word. word!", "one. two three.\nfour", "🙂 🙂",
             "東京タワーは高い。Tokyo tower", "a a a b a", "a a a b a", "é e\u0301"]
    read_text.cache_clear()
    together = read_texts(texts)
    for text, got in zip(texts, together, strict=True):
        assert_same(got, reference_reading(text))
    assert together[-2] is together[-3]  # the same text: one reading
    assert read_texts([]) == []
    words = read_text("word. Word word two")
    assert words.counts.tolist() == [3.0, 1.0]
    assert words.ids.tolist() == [hash("word"), hash("two")]


def test_the_cache_counts_and_drops_the_least_recently_used() -> None:
    read_text.cache_clear()
    read_texts(["a b", "c d", "a b"])
    info = read_text.cache_info()
    assert (info.hits, info.misses, info.currsize) == (1, 2, 2)
    read_text("c d")
    assert read_text.cache_info().hits == 2
    reader = lexical._Reader(2)
    first = reader("one")
    reader("two")
    reader("one")  # "two" is now the least recently used
    reader("three")
    assert reader.cache_info().currsize == 2
    assert reader("one") is first
    assert reader.cache_info().misses == 3
    reader("two")  # dropped: read again
    assert reader.cache_info().misses == 4
    reader.cache_clear()
    assert reader.cache_info() == (0, 0, 2, 0)
