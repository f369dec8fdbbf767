"""The reference reading of texts (``vrsd_kit.lexical.read_text``), one text at a time in
plain Python: its tokens found by regular expressions, each word's id from the
documented formula (``word_id``) in Python integers, its words counted with a Counter,
its pairs taken one by one."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from vrsd_kit import lexical
from vrsd_kit.lexical import TextWords, tokenize

BREAKS = ".!?;\n\u3002\uff01\uff1f\uff1b"
_BREAK = re.compile(f"[{BREAKS}]+")
_WORD_OR_BREAK = re.compile(f"[\\w{lexical._MARKS}]+|[{BREAKS}]+")
_ANY_SPACELESS = re.compile(f"[{''.join(lexical.SPACELESS.values())}]")
_MASK = (1 << 64) - 1


def reference_tokens(text: str) -> list[str]:
    """The text's tokens, as regular expressions find them: the case-folded text's runs
    of word characters (and combining marks) and runs of breaks; in a text with a
    character of a script without spaces, each sentence's ``tokenize`` words (bigrams in
    that script), each sentence then a ``"."``."""
    folded = text.casefold()
    if _ANY_SPACELESS.search(folded):
        return [t for sentence in _BREAK.split(text) for t in [*tokenize(sentence), "."]]
    return _WORD_OR_BREAK.findall(folded)


def int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as numpy's int64 arithmetic wraps."""
    value &= _MASK
    return value - (1 << 64) if value >= 1 << 63 else value


def reference_word_id(word: str) -> int:
    """``word_id`` as its docstring states it: the code points as a polynomial in 0x100000001B3
    modulo 2^64, then SplitMix64's finaliser, as a signed 64-bit integer."""
    value = sum(ord(char) * pow(0x100000001B3, j, 1 << 64) for j, char in enumerate(word))
    value &= _MASK
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return int64(value ^ (value >> 31))


def reference_reading(text: str) -> TextWords:
    """One text read alone: its tokens (``reference_tokens``) counted and given their ids,
    its pairs (consecutive words; a word with no word beside it, alone) taken one by one,
    its ending the last ``ENDING`` pairs of consecutive words in reading order."""
    tokens = reference_tokens(text)
    is_word = [token[0] not in BREAKS for token in tokens]
    counts = Counter(t for t, word in zip(tokens, is_word, strict=True) if word)
    ids = [reference_word_id(t) for t in tokens]
    pairs = set()
    consecutive = []  # in reading order
    for i, word in enumerate(is_word):
        if not word:
            continue
        before = i > 0 and is_word[i - 1]
        after = i + 1 < len(tokens) and is_word[i + 1]
        if after:
            consecutive.append(int64(ids[i] * int(lexical._NEXT) + ids[i + 1]))
            pairs.add(consecutive[-1])
        if not before and not after:
            pairs.add(int64(ids[i] * int(lexical._ALONE) + 1))
    ending = sorted(consecutive[-lexical.ENDING:]) if len(consecutive) >= lexical.ENDING else []
    return TextWords(np.array([reference_word_id(t) for t in counts], dtype=np.int64),
                     np.array(list(counts.values()), dtype=np.float64),
                     np.array(sorted(pairs), dtype=np.int64),
                     np.array(ending, dtype=np.int64))


Pair = tuple[str, ...]


def word_pairs(text: str) -> frozenset[Pair]:
    """The text's word pairs as strings (what ``read_text``'s ``pairs`` are the ids of):
    consecutive words within a sentence or line (a one-word sentence: that word; no words:
    none)."""
    pairs: set[Pair] = set()
    for sentence in _BREAK.split(text):
        words = tokenize(sentence)
        if len(words) == 1:
            pairs.add((words[0],))
        pairs.update(zip(words, words[1:], strict=False))
    return frozenset(pairs)
