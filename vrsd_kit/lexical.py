"""What the candidates' words say: BM25 over the over-fetched pool, beside the cosine,
the links between candidates, and the one judge of copies (word pairs).

A small embedding model blurs the names, numbers and rare terms a question turns
on; the candidates' own words keep them. ``bm25`` scores the pool's texts against
the query with statistics from the pool alone (no index: the n candidates are the
collection). ``pool_relevance`` gives both signals; the rerank body
(``PoolRelevance.select_keywords``) fuses them in the pool's own units with
``vrsd_core.pool_units`` and gives the core one relevance per candidate::

    relevance_i = z(z(cosine) + z(bm25))_i,   z(x) = (x - mean(x)) / std(x) over the pool

so neither part needs a weight: each counts one standard deviation of its own
spread in this pool. A part that does not vary over the pool (no query word in any
candidate) contributes 0. The words also tell how alike two candidates are:
``word_profiles`` gives each candidate's profile (its tf * idf on the query's words, the
rest of its words folded into one coordinate), and the default's similarity becomes the
mean of the vectors' cosine and the profiles' cosine (``select(..., profiles=...)``), so
two passages that name different words of the question count as different even where a
small model puts them close. And the words link candidates to one another
(``pool_links``, ``PoolLinks``): two candidates that share words outside the question,
rarer than chance would explain in this pool; the default follows such a link from a
pick to the passage a multi-hop question needs next (``vrsd_core.Links``, the complement's
``links`` option). The core stays numpy-only.

Tokens (``tokenize``) are case-folded runs of Unicode word characters and the combining
marks that belong to them (``\\w`` plus Unicode category M, so a Devanagari or Thai word is
not cut at its vowel signs): any script that separates words with spaces (Latin, Greek,
Cyrillic, Arabic, Hebrew, Devanagari, ...). Scripts written without spaces between words
(``SPACELESS``: Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar) are read as
overlapping character bigrams, as Lucene's CJK analyser reads Han, kana and Hangul
(``"東京タワー"`` -> ``東京, 京タ, タワ, ワー``; a lone character is its own token): no
dictionary to download, and a word of two characters or more in the query matches
wherever it occurs. With a ``language``, each word is read as its Snowball stem
(``stem``). A word's document frequency is floored by what a background says is
common (``Background``; by default the language's common words), so function words
weigh little. BM25 is Lucene's (bm25s' ``method="lucene"``, equal to it to rounding
with no background: the tests hold them together), a sum over
the query's words of ``idf * tf / (tf + k1 (1 - b + b |d| / avgdl))`` with the
non-negative ``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` and the usual
``k1 = 1.5, b = 0.75`` (bm25s' and rank-bm25's defaults; not tuned here). A text is
tokenised once per process (``read_text`` is cached on the text, in a cache bounded by
memory, ``CACHE_BYTES``, and safe to share between threads; ``read_texts`` reads a pool's
new texts together, as arrays of code points), so a candidate seen by many queries is not
read again; a word is named by ``word_id``, the same in every process.

**The judge of copies** (``Judge``): which candidates restate a kept one, read from the
words.

The default keeps no passage that repeats one it keeps, and its entries say which held-back
passage restates which kept one; both ask this module's ``Judge``, built once per query on
the fetched pool's texts, so what is kept and what the entries say cannot disagree.

A candidate's content is its **word pairs** (consecutive words within a sentence or a
line, as ``vrsd_kit.lexical.tokenize`` reads them: in a script without spaces,
consecutive character bigrams). Each pair weighs ``1 / (how many of the pool's
candidates hold it)``: a pair that only this candidate holds counts fully, a disclaimer
or licence header that ten candidates repeat counts a tenth. The **share** of candidate
a's content in b is the weight of a's pairs found in b over the weight of all of a's
pairs. Then:

* a **restates** b when the share of a in b is at least ``RESTATES`` (0.9): a copy, an
  overlapping chunk that lies inside b, the same paragraph under another title;
* a **contains** b when the share of b in a is at least ``RESTATES`` (a longer chunk
  around b): it repeats b and adds some;
* a passage without words (emoji, punctuation, empty) has no content to compare: it
  neither restates nor is contained (``words(i) == 0``).

The weights make a shared disclaimer count for little beside a fact of its own: two
passages that share a long boilerplate paragraph but state different facts do not
restate each other, while a copy (all of its pairs in b) has share 1 whatever the
weights. Measured on the evaluation's labelled HotpotQA pools (docs/inspect.md).
"""

from __future__ import annotations

import collections
import functools
import gzip
import itertools
import operator
import re
import sys
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from cachetools import LRUCache
from numpy.typing import NDArray

from vrsd_core import Links, OptionSpec, Selection, pool_units
from vrsd_core._prepare import standardised

K1 = 1.5
B = 0.75
CACHE_BYTES = 128 << 20
"""The most memory the readings of texts kept per process hold (``read_text``): 128 MiB,
about two and a half bytes per character of English text read (the text and its
arrays), so the readings of some 50,000 passages of 1,000 characters, or 1,300 texts of
50,000."""
_ENTRY_OVERHEAD = 200  # bytes: the cache's own entry (its tuple, the dataclass, dict slots)


def _ranges(codes: Sequence[int]) -> str:
    """A regex class body for the code points ``codes`` (sorted), as ranges."""
    spans: list[list[int]] = []
    for code in codes:
        if spans and code == spans[-1][1] + 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b)))
                   for a, b in spans)


SPACELESS = {
    "Han": "\u3005\u3007\u3021-\u3029\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
           "\U00020000-\U0003134f",
    "Hiragana": "\u3040-\u309f",
    "Katakana": "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "Hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "Thai": "\u0e00-\u0e7f",
    "Lao": "\u0e80-\u0eff",
    "Khmer": "\u1780-\u17ff",
    "Myanmar": "\u1000-\u109f",
}
"""The scripts read as character bigrams (regex class bodies of their blocks)."""
_SPACELESS = "".join(SPACELESS.values())
# combining marks (category M) of the Basic Multilingual Plane: part of the word they follow
_MARKS = _ranges([c for c in range(0x10000) if unicodedata.category(chr(c)).startswith("M")])
_WORD = re.compile(f"[\\w{_MARKS}]+")
_ANY_SPACELESS = re.compile(f"[{_SPACELESS}]")
_RUN = re.compile(f"([{_SPACELESS}]+)|((?:[^\\W{_SPACELESS}]|[{_MARKS}])+)")


def fold(text: str) -> str:
    """``text`` case-folded (``str.casefold``); an ASCII text by ``str.lower``, the same
    result for ASCII at a fraction of the cost."""
    return text.lower() if text.isascii() else text.casefold()


def tokenize(text: str, language: str | None = None) -> list[str]:
    """The text's words, case-folded: runs of word characters (and their combining
    marks), each stemmed by ``language``'s Snowball stemmer (``stem``; None: as
    written); a run in a script without spaces (``SPACELESS``) as its overlapping
    character bigrams.

    >>> tokenize("Caffeine's half-life")
    ['caffeine', 's', 'half', 'life']
    >>> tokenize("Redistributing needs upgrades", "english")
    ['redistribut', 'need', 'upgrad']
    >>> tokenize("東京タワーは高い")
    ['東京', '京タ', 'タワ', 'ワー', 'ーは', 'は高', '高い']
    """
    folded = fold(text)
    if not _ANY_SPACELESS.search(folded):
        return stem(_WORD.findall(folded), language)
    out: list[str] = []
    for spaceless, word in _RUN.findall(folded):
        if word:
            out.append(stem([word], language)[0])
        elif len(spaceless) == 1:
            out.append(spaceless)
        else:
            out.extend(spaceless[i:i + 2] for i in range(len(spaceless) - 1))
    return out


# --- the language: Snowball's stemmers ---------------------------------------------------

LANGUAGES: Mapping[str, str] = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sr": "serbian", "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}
"""ISO 639-1 code -> the Snowball stemmer of the language (``language=`` takes either)."""


def check_language(value: Any, name: str = "language") -> str | None:
    """``value`` as the name of a Snowball stemmer (``"english"``; an ISO 639-1 code such as
    ``"en"`` becomes its name), or None (words as written), else a ValueError naming
    ``name`` and the languages there are."""
    if value is None:
        return None
    if isinstance(value, str):
        folded = value.strip().casefold()
        found = LANGUAGES.get(folded, folded)
        if found in set(LANGUAGES.values()):
            return found
    raise ValueError(f"{name}: expected a language Snowball stems (an ISO 639-1 code or its "
                     f"name: {', '.join(sorted(LANGUAGES))}; "
                     f"{', '.join(sorted(set(LANGUAGES.values())))}) or None, got {value!r}")


_STEMMERS = threading.local()  # a Snowball stemmer is not safe to share between threads


def stem(words: list[str], language: str | None) -> list[str]:
    """``words`` (case-folded) stemmed by ``language``'s Snowball stemmer (``check_language``'s
    names; PyPI ``snowballstemmer``, which runs PyStemmer's C build where it is installed);
    None: the words as they are. A word of another script than the stemmer's is left as it
    is (each Snowball stemmer rewrites only its own alphabet's endings).

    >>> stem(["häuser", "haus"], "german")
    ['haus', 'haus']
    """
    if language is None or not words:
        return words
    kept: dict[str, Any] = vars(_STEMMERS)
    stemmer = kept.get(language)
    if stemmer is None:
        import snowballstemmer

        stemmer = kept[language] = snowballstemmer.stemmer(language)
    return stemmer.stemWords(words)  # type: ignore[no-any-return]


# where a word pair stops: the end of a sentence or a line (a chunk that starts at a
# sentence or under a heading has no pair its original lacks)
_BREAKS = ".!?;\n\u3002\uff01\uff1f\uff1b"
_BREAK = re.compile(f"[{_BREAKS}]+")
_NEXT = np.int64(0x100000001B3)  # mixes a pair's two word ids into one (64 bits)
_ALONE = np.int64(0x5BD1E995)  # marks a one-word sentence's id


ENDING = 5
"""How many word pairs make a text's ending (``TextWords.ending``): its last six words
within a sentence, the one constant of the continuation rule (``Judge.continued``; how
it was chosen: docs/evaluation.md)."""


@dataclass(frozen=True)
class TextWords:
    """One text's words, read once (``read_text``): ``ids`` the ids of its distinct words
    (``word_id``) in the order they first occur, ``counts`` how often each occurs,
    ``pairs`` the sorted ids of its word pairs (consecutive words within a
    sentence or line; a one-word sentence, that word), ``ending`` the sorted ids of its
    last ``ENDING`` pairs of consecutive words (empty for a text with fewer): what a
    chunk cut from the same document with an overlap repeats."""

    ids: NDArray[np.int64]
    counts: NDArray[np.float64]
    pairs: NDArray[np.int64]
    ending: NDArray[np.int64]


# --- Reading texts as arrays of code points -------------------------------------------

_ID_BASE = 0x100000001B3  # the base of a word id's polynomial (odd: invertible mod 2^64)
_ID_BASE_INVERSE = pow(_ID_BASE, -1, 1 << 64)
_BASIC_PLANE = 0x10000  # code points below it: the Basic Multilingual Plane
_KEPT_POWERS = 1 << 18  # the base's powers kept: a pool of 50 texts of 5,200 characters

# a code point's class (``_char_classes``)
_OTHER = 0  # in no token: spaces, punctuation other than the breaks, symbols, emoji
_WORD_CHAR = 1  # part of a word: ``\w`` or a combining mark (``_WORD``)
_BREAK_CHAR = 2  # ends a sentence or a line (``_BREAKS``)
_SPACELESS_CHAR = 3  # of a script written without spaces (``SPACELESS``)
_SPACELESS_MARK = 4  # a combining mark of such a script: it continues a word before it


def _classify(code_points: NDArray[np.uint32]) -> NDArray[np.uint8]:
    """Each code point's class, found by the regular expressions ``tokenize`` reads with
    (``_WORD``, ``_BREAKS``, ``SPACELESS``; a spaceless script's character is a word
    character too, and is classed spaceless)."""
    chars = code_points.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    classes = np.zeros(len(code_points), dtype=np.uint8)
    for pattern, char_class in ((_WORD, _WORD_CHAR), (_BREAK, _BREAK_CHAR),
                                (re.compile(f"[{_SPACELESS}]+"), _SPACELESS_CHAR)):
        for run in pattern.finditer(chars):
            classes[run.start():run.end()] = char_class
    marks = np.zeros(len(code_points), dtype=bool)
    for run in re.finditer(f"[{_MARKS}]+", chars):
        marks[run.start():run.end()] = True
    classes[marks & (classes == _SPACELESS_CHAR)] = _SPACELESS_MARK
    return classes


@functools.cache
def _plane_classes() -> NDArray[np.uint8]:
    """The class of every code point of the Basic Multilingual Plane (``_classify``), a
    table built on first use (a few milliseconds), read-only."""
    classes = _classify(np.arange(_BASIC_PLANE, dtype=np.uint32))
    classes.flags.writeable = False
    return classes


def _char_classes(code_points: NDArray[np.uint32]) -> NDArray[np.uint8]:
    """Each code point's class: from the table of the Basic Multilingual Plane, and for
    the few above it (historic scripts, emoji, rare Han), classified where they occur."""
    above = code_points >= _BASIC_PLANE
    if not above.any():
        return _plane_classes()[code_points]
    classes = _plane_classes()[np.where(above, 0, code_points)]
    distinct, where = np.unique(code_points[above], return_inverse=True)
    classes[above] = _classify(distinct)[where]
    return classes


def _code_points(text: str) -> NDArray[np.uint32]:
    """The text's code points (a lone surrogate too)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _powers(base: int, count: int) -> NDArray[np.uint64]:
    """``base ** 0, base ** 1, ..., base ** (count - 1)`` modulo 2^64 (the first
    ``_KEPT_POWERS`` computed once)."""
    if count <= _KEPT_POWERS:
        return _kept_powers(base)[:count]
    return _computed_powers(base, count)


def _computed_powers(base: int, count: int) -> NDArray[np.uint64]:
    """``base ** 0 .. base ** (count - 1)`` modulo 2^64, by one running product."""
    powers = np.full(count, base, dtype=np.uint64)
    powers[:1] = 1
    return np.cumprod(powers)


@functools.cache
def _kept_powers(base: int) -> NDArray[np.uint64]:
    """The first ``_KEPT_POWERS`` powers of ``base``, computed once (read-only)."""
    powers = _computed_powers(base, _KEPT_POWERS)
    powers.flags.writeable = False
    return powers


def _mixed(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finaliser: a one-to-one map of 64-bit integers that gives inputs
    differing in a few bits unrelated outputs."""
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        values = (values ^ (values >> np.uint64(shift))) * np.uint64(multiplier)
    return values ^ (values >> np.uint64(31))


def _run_ids(codes: NDArray[np.uint32], starts: NDArray[np.intp], ends: NDArray[np.intp]
             ) -> NDArray[np.int64]:
    """The ``word_id`` of each run ``codes[start:end]``, all from one prefix sum: with
    ``prefix[i]`` the sum of ``codes[j] * BASE ** j`` over j < i, a run's polynomial is
    ``(prefix[end] - prefix[start]) * BASE ** -start`` (uint64 arithmetic wraps modulo
    2^64, where BASE is invertible)."""
    prefix = np.zeros(len(codes) + 1, dtype=np.uint64)
    np.cumsum(codes * _powers(_ID_BASE, len(codes)), out=prefix[1:])
    unshift = _powers(_ID_BASE_INVERSE, int(starts.max(initial=0)) + 1)[starts]
    return _mixed((prefix[ends] - prefix[starts]) * unshift).view(np.int64)


def word_ids(words: Sequence[str]) -> NDArray[np.int64]:
    """Each word's ``word_id``, computed together (what a caller with many words uses)."""
    lengths = np.array([len(word) for word in words], dtype=np.intp)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return _run_ids(_code_points("".join(words)), starts, ends)


def word_id(word: str) -> int:
    """The id of a word (as ``tokenize`` gives it: case-folded), the one every reading of
    words uses (``read_text``'s ``ids`` and ``pairs``, BM25's query words, the links'
    words): its code points ``c_0 .. c_(m-1)`` as a polynomial, ``sum c_j * BASE ** j``
    modulo 2^64 (``BASE = 0x100000001B3``), mixed by SplitMix64's finaliser, as a signed
    64-bit integer (64 bits: two words of a pool collide with negligible chance; strings
    built to collide, thousands of characters long, exist for any such polynomial).

    The same in every process, whatever ``PYTHONHASHSEED`` is (Python's ``hash`` of a
    string is not), so a reading, and every order that sorts words by id, repeats from
    run to run.

    >>> word_id("caffeine") == word_id("Caffeine".casefold()) != word_id("coffee")
    True
    """
    return int(word_ids([word])[0])


def _tokens(texts: Sequence[str], language: str | None = None
            ) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.intp]]:
    """Every token of ``texts`` in order, as arrays: its id (``word_id``), whether it is a
    word (else a run of breaks, whose id nothing reads) and the text it is in.

    The texts are read together, as the code points of their case-folded join: each code
    point's class (``_char_classes``), the runs of one class found where the class
    changes, their ids with one prefix sum (``_run_ids``). A run of word characters is a
    word, a run of breaks one break; a run in a script written without spaces
    (``SPACELESS``) is its overlapping character bigrams (a character alone: itself), as
    ``tokenize`` reads it. These are the tokens the regular expressions find in each
    case-folded text, sentence by sentence (tests/helpers/reading.py holds the two
    together), for any code point, a casefold that lengthens a text (``"ß"`` -> ``"ss"``)
    or a lone surrogate included. With a ``language``, each word (not a bigram) is its
    stem (``stem``), as ``tokenize(text, language)`` reads it."""
    folded = [fold(text) for text in texts]
    lengths = np.array([len(text) for text in folded], dtype=np.intp)
    text_starts = np.cumsum(lengths + 1) - lengths  # where each begins in the join
    # "\0" is in no token: before, between and after the texts, so no run spans two
    joined = "\0" + "\0".join(folded) + "\0"
    codes = _code_points(joined)
    classes = _char_classes(codes)
    marks = np.flatnonzero(classes == _SPACELESS_MARK)
    if len(marks):  # a spaceless script's combining mark continues a word before it (as
        # ``tokenize``'s words take any combining mark), else it is of its script's run
        not_mark = np.where(classes != _SPACELESS_MARK, np.arange(len(classes)), 0)
        before = classes[np.maximum.accumulate(not_mark)[marks]]
        classes[marks] = np.where(before == _WORD_CHAR, _WORD_CHAR, _SPACELESS_CHAR)
    # a run is a stretch of one class other than _OTHER: where the class changes, a run
    # begins (at a code point of a run's class) or ends (after one)
    change = classes[1:] != classes[:-1]
    run_starts = np.flatnonzero(change & (classes[1:] != _OTHER)) + 1
    run_ends = np.flatnonzero(change & (classes[:-1] != _OTHER)) + 1
    run_class = classes[run_starts]
    # a run of word characters or of breaks is one token; a spaceless script's run of m
    # characters is its m - 1 overlapping bigrams (one character alone: itself)
    spaceless = run_class == _SPACELESS_CHAR
    tokens_of_run = np.where(spaceless, np.maximum(run_ends - run_starts - 1, 1), 1)
    first_token = np.cumsum(tokens_of_run) - tokens_of_run
    within_run = np.arange(int(tokens_of_run.sum())) - np.repeat(first_token, tokens_of_run)
    starts = np.repeat(run_starts, tokens_of_run) + within_run
    ends = np.repeat(run_ends, tokens_of_run)
    ends = np.where(np.repeat(spaceless, tokens_of_run), np.minimum(starts + 2, ends), ends)
    ids = _run_ids(codes, starts, ends)
    is_word = np.repeat(run_class != _BREAK_CHAR, tokens_of_run)
    owner = np.searchsorted(text_starts, starts, side="right") - 1
    if language is not None:
        words = np.flatnonzero(np.repeat(run_class == _WORD_CHAR, tokens_of_run))
        ids[words] = _stem_ids(ids[words], starts[words], ends[words], joined, language)
    return ids, is_word, owner


_KEPT_STEMS = 1 << 18  # words whose stem's id is kept per language (4 MB of ids)


class _StemIds:
    """Per language, the stem's id of the words stemmed before, as two sorted arrays (word
    id -> stem id), looked up together; new words are stemmed and merged in, and the
    arrays start again past ``_KEPT_STEMS`` words. Replaced whole under a lock, so a
    reader always sees a matching pair."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}

    def __call__(self, ids: NDArray[np.int64], starts: NDArray[np.intp],
                 ends: NDArray[np.intp], joined: str, language: str) -> NDArray[np.int64]:
        """The id of each word's stem (``ids`` the words' ids, ``joined[start:end]`` each
        word): each distinct word not stemmed before stemmed once, the stems' ids computed
        together."""
        distinct, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        empty = np.zeros(0, np.int64)
        with self._lock:
            words, stems = self._kept.get(language, (empty, empty))
        at = np.minimum(np.searchsorted(words, distinct), max(len(words) - 1, 0))
        known = (words[at] == distinct) if len(words) else np.zeros(len(distinct), bool)
        out = np.empty(len(distinct), np.int64)
        out[known] = stems[at[known]]
        new = np.flatnonzero(~known)
        if len(new):
            spelled = [joined[a:b] for a, b in zip(starts[first[new]].tolist(),
                                                    ends[first[new]].tolist(), strict=True)]
            out[new] = word_ids(stem(spelled, language))
            with self._lock:
                words, stems = self._kept.get(language, (empty, empty))
                if len(words) + len(new) > _KEPT_STEMS:
                    words, stems = empty, empty
                merged = np.concatenate([words, distinct[new]])
                order = np.argsort(merged, kind="stable")
                merged, paired = merged[order], np.concatenate([stems, out[new]])[order]
                keep = np.ones(len(merged), bool)  # another thread may have added some too
                keep[1:] = merged[1:] != merged[:-1]
                self._kept[language] = (merged[keep], paired[keep])
        return out[inverse.ravel()]


_stem_ids = _StemIds()


def _by_text(values: NDArray[np.int64], owner: NDArray[np.intp], n: int
             ) -> NDArray[np.intp]:
    """The order that sorts ``values`` by ``owner`` (the text, 0 .. n - 1), then by value
    (equal values in any order)."""
    order = np.argsort(values)
    return order[np.argsort(owner.astype(np.min_scalar_type(n))[order], kind="stable")]


def _read_all(texts: Sequence[str], language: str | None = None) -> list[TextWords]:
    """Each text's words and word pairs, the texts read together: their tokens as arrays
    (``_tokens``, stemmed by ``language``), every text's distinct words (in
    first-occurrence order), counts and sorted pairs found by sorting (text, id) once for
    the whole batch."""
    n = len(texts)
    token_ids, is_word, owner = _tokens(texts, language)
    if not len(token_ids):
        empty = np.zeros(0, dtype=np.int64)
        return [TextWords(empty, np.zeros(0), empty, empty) for _ in range(n)]
    # word pairs: consecutive words of one text; a word alone between breaks, itself
    same_text = owner[:-1] == owner[1:]
    after = np.concatenate([[False], is_word[:-1] & same_text])  # the token before is a word
    before = np.concatenate([is_word[1:] & same_text, [False]])  # the token after is one
    paired = is_word[:-1] & before[:-1]
    alone = is_word & ~after & ~before
    consecutive = token_ids[:-1][paired] * _NEXT + token_ids[1:][paired]
    endings = _endings(consecutive, owner[:-1][paired], n)
    pairs = np.concatenate([consecutive, token_ids[alone] * _ALONE + 1])
    pair_owner = np.concatenate([owner[:-1][paired], owner[alone]])
    order = _by_text(pairs, pair_owner, n)
    pairs, pair_owner = pairs[order], pair_owner[order]
    distinct = np.ones(len(pairs), dtype=bool)
    distinct[1:] = (pairs[1:] != pairs[:-1]) | (pair_owner[1:] != pair_owner[:-1])
    pairs, pair_owner = pairs[distinct], pair_owner[distinct]
    # distinct words: group each text's word tokens by id; a word's count is its group's
    # size, put at its first occurrence (the group's smallest position)
    words, word_owner = token_ids[is_word], owner[is_word]
    order = _by_text(words, word_owner, n)
    sorted_words, sorted_owner = words[order], word_owner[order]
    group_starts = np.flatnonzero(np.concatenate([[True], (
        sorted_words[1:] != sorted_words[:-1]) | (sorted_owner[1:] != sorted_owner[:-1])]))
    count_at_first = np.zeros(len(words))
    if len(words):
        count_at_first[np.minimum.reduceat(order, group_starts)] = np.diff(
            np.append(group_starts, len(words)))
    first = count_at_first > 0  # in token order: each text's words as they first occur
    ids, counts, id_owner = words[first], count_at_first[first], word_owner[first]

    word_ends = np.cumsum(np.bincount(id_owner, minlength=n)).tolist()
    pair_ends = np.cumsum(np.bincount(pair_owner, minlength=n)).tolist()
    return [TextWords(ids[word_start:word_end], counts[word_start:word_end],
                      pairs[pair_start:pair_end], ending)
            for word_start, word_end, pair_start, pair_end, ending in zip(
                [0, *word_ends[:-1]], word_ends, [0, *pair_ends[:-1]], pair_ends, endings,
                strict=True)]


def _endings(consecutive: NDArray[np.int64], owner: NDArray[np.intp], n: int
             ) -> list[NDArray[np.int64]]:
    """Each of the n texts' ``ending``: the sorted ids of its last ``ENDING`` pairs of
    consecutive words (``consecutive``, in reading order, each of text ``owner``), empty
    for a text with fewer."""
    counts = np.bincount(owner, minlength=n)
    full = np.flatnonzero(counts >= ENDING)
    last = np.sort(consecutive[np.cumsum(counts)[full, None] - ENDING + np.arange(ENDING)],
                   axis=1)
    out = [np.zeros(0, dtype=np.int64)] * n
    for text, ending in zip(full.tolist(), last, strict=True):
        out[text] = ending
    return out


class CacheInfo(NamedTuple):
    """``read_text``'s cache counts, as ``functools.lru_cache``'s ``cache_info()``;
    ``maxsize`` and ``currsize`` are in bytes (``CACHE_BYTES``)."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


def _reading_bytes(text: str, words: TextWords) -> int:
    """What keeping ``text``'s reading holds in memory: the text (the key) and its arrays,
    with their objects' own overhead."""
    arrays = (words.ids, words.counts, words.pairs, words.ending)
    return sys.getsizeof(text) + sum(sys.getsizeof(a) for a in arrays) + _ENTRY_OVERHEAD


class _Reader:
    """``read_text``: one text's reading, from a cache bounded by memory: the readings of
    the texts read last, holding at most ``max_bytes`` (texts and arrays counted,
    ``_reading_bytes``; least recently used dropped first; a text larger than the whole
    cache is read and not kept). ``many`` reads the uncached texts of a list together
    (``read_texts``). Safe to share between threads: the cache is asked and filled under
    a lock, the reading itself runs outside it, and what a call returns never comes back
    out of the cache after another thread could drop it."""

    def __init__(self, max_bytes: int) -> None:
        self.maxsize = max_bytes
        self._read: LRUCache[tuple[str | None, str], tuple[TextWords, int]] = LRUCache(
            max_bytes, getsizeof=operator.itemgetter(1))
        self._lock = threading.Lock()
        self._hits = self._misses = 0

    def __call__(self, text: str, language: str | None = None) -> TextWords:
        """The text's words (``tokenize(text, language)``) and word pairs, read in one
        pass; cached (on the language and the text), so each text is read once."""
        return self.many([text], language)[0]

    def many(self, texts: Sequence[str], language: str | None = None) -> list[TextWords]:
        """Each text's reading, as ``read_text``'s; the texts not in the cache read
        together, in one pass."""
        found: dict[str, TextWords] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                kept = self._read.get((language, text))  # marks it the most recently used
                if kept is not None:
                    found[text] = kept[0]
        new = [text for text in dict.fromkeys(texts) if text not in found]
        readings = _read_all(new, language) if new else []
        found.update(zip(new, readings, strict=True))
        with self._lock:
            for text, words in zip(new, readings, strict=True):
                size = _reading_bytes(text, words)
                if size <= self._read.maxsize:
                    self._read[language, text] = (words, size)
            self._misses += len(new)
            self._hits += len(texts) - len(new)
        return [found[text] for text in texts]

    def cache_clear(self) -> None:
        """Forget every text read."""
        with self._lock:
            self._read.clear()
            self._hits = self._misses = 0

    def cache_info(self) -> CacheInfo:
        """(hits, misses, maxsize, currsize), as ``functools.lru_cache``'s, the sizes in
        bytes."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.maxsize,
                             int(self._read.currsize))


read_text = _Reader(CACHE_BYTES)
"""``read_text(text) -> TextWords``: the text's words (``tokenize``) and word pairs, read
in one pass; cached (at most ``CACHE_BYTES`` of readings), so each text is read once."""


def read_texts(texts: Sequence[str], language: str | None = None) -> list[TextWords]:
    """Each text's ``read_text``, equal to it; the texts not read before are read together,
    in one pass (what a pool of passages never seen costs)."""
    return read_text.many(texts, language)


# --- the background: what is common outside the pool ----------------------------------


@dataclass(frozen=True, eq=False)
class Background:
    """What is common outside the pool: for each word (its id as the texts are read in
    ``language``), how often it occurs. A pool's statistics take it as a floor: a word's
    document frequency is the larger of the pool's and what the background expects in
    the pool's texts (``shares``), so a word the language or the corpus says is common
    (a function word, a licence's boilerplate) weighs little and makes no link, however
    rare it is among the fetched candidates.

    Build it once: ``Background.of_texts(documents)`` from a corpus (each word's
    document frequency), ``Background.of_language(language)`` from the language's word
    frequencies (PyPI ``wordfreq``, the extra ``background``; for no language, the
    common words of ten languages, shipped with vrsd).

    Attributes:
        ids: the words' ids, sorted.
        rates: per word, the share of texts that hold it (``per_text``), or its
            frequency per word of text (a language's list).
        per_text: which of the two ``rates`` are.
        language: the reading the ids are of (``check_language``).
    """

    ids: NDArray[np.int64]
    rates: NDArray[np.float64]
    per_text: bool
    language: str | None = None

    @classmethod
    def of_texts(cls, texts: Sequence[str], language: str | None = None) -> Background:
        """Each word's document frequency in ``texts`` (a corpus: the documents a pool is
        drawn from; ``document_frequencies``), read in ``language`` (None: the words as
        written)."""
        language = check_language(language)
        vocabulary, df = document_frequencies(texts, language)
        return cls(vocabulary, df / float(max(len(texts), 1)), True, language)

    @classmethod
    def of_language(cls, language: str | None) -> Background:
        """The common words of ``language`` (``check_language``): ``wordfreq``'s frequency
        list of it, each word read as the texts are (stemmed, the frequencies of one stem
        summed). None (words read as written): the 1,000 most frequent words of each of
        ten languages (English, German, French, Spanish, Portuguese, Italian, Dutch,
        Russian, Polish, Swedish; wordfreq's lists, shipped in
        ``vrsd_kit/data/common_words.tsv.gz``), each at its largest frequency in any of
        them: a word of another language or script is not in it. Kept once per process.

        Raises:
            ValueError: a language ``wordfreq`` has no list for.
            ImportError: ``wordfreq`` is not installed (the extra ``background``).
        """
        checked = check_language(language)
        return _common_words() if checked is None else _language_background(checked)

    def shares(self, ids: NDArray[np.int64], mean_length: float) -> NDArray[np.float64]:
        """Per word of ``ids``: the share of texts of ``mean_length`` words that hold it,
        as the background expects (a rate per word of text ``f``: ``1 - exp(-L f)``, the
        chance that a text of L words holds a word of that frequency); 0 for a word it
        does not know."""
        out = np.zeros(len(ids))
        if not len(self.ids) or not len(ids):
            return out
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        known = self.ids[at] == ids
        rates = self.rates[at[known]]
        out[known] = rates if self.per_text else -np.expm1(-mean_length * rates)
        return out


def document_frequencies(texts: Iterable[str], language: str | None = None, *,
                         cached: bool = False) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(the distinct word ids of ``texts``, sorted; in how many of the texts each occurs),
    each text read once as a pool reads it (``read_text``'s reading in ``language``), in
    batches of a thousand texts. ``cached``: through ``read_texts``'s cache (a pool the
    rerank reads next), else read without keeping (a corpus)."""
    read = read_texts if cached else _read_all
    ids: list[NDArray[np.int64]] = [np.zeros(0, np.int64)]
    counts: list[NDArray[np.int64]] = [np.zeros(0, np.int64)]
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, 1000)):
        held, df = np.unique(np.concatenate([w.ids for w in read(batch, language)]),
                             return_counts=True)
        ids.append(held)
        counts.append(df)
    vocabulary, where = np.unique(np.concatenate(ids), return_inverse=True)
    df = np.bincount(where.ravel(), weights=np.concatenate(counts), minlength=len(vocabulary))
    return vocabulary.astype(np.int64), df.astype(np.int64)


@functools.cache
def _language_background(language: str) -> Background:
    try:
        import wordfreq
    except ImportError as exc:
        raise ImportError(f"the background of {language!r} needs PyPI wordfreq: pip install "
                          "'vrsd[background]'") from exc
    code = next(code for code, name in LANGUAGES.items() if name == language)
    if code not in wordfreq.available_languages("small"):
        raise ValueError(f"language: wordfreq has no list of {language!r}'s common words")
    frequencies = wordfreq.get_frequency_dict(code, wordlist="small")
    return _word_frequencies(frequencies, language)


@functools.cache
def _common_words() -> Background:
    """``Background.of_language(None)``: the shipped list, words as written."""
    from importlib import resources

    lines = resources.files("vrsd_kit").joinpath("data/common_words.tsv.gz").read_bytes()
    pairs = (line.split("\t") for line in gzip.decompress(lines).decode("utf-8").splitlines())
    return _word_frequencies({word: float(frequency) for word, frequency in pairs}, None)


def _word_frequencies(frequencies: Mapping[str, float], language: str | None) -> Background:
    """A list of word -> frequency per word of text, each word read in ``language`` (the
    frequencies of one stem summed)."""
    ids = word_ids(stem([word.casefold() for word in frequencies], language))
    vocabulary, where = np.unique(ids, return_inverse=True)
    rates = np.bincount(where.ravel(), weights=np.fromiter(frequencies.values(), np.float64,
                                                            len(frequencies)))
    return Background(vocabulary, rates.astype(np.float64), False, language)


def _backgrounds(background: Background | Sequence[Background] | None,
                 language: str | None) -> list[Background]:
    """The backgrounds a pool reads: those given (each of the pool's reading), or for None
    the language's common words (``Background.of_language``; for a language, without
    ``wordfreq`` or a list of it, none and a warning once)."""
    if background is None:
        return _language_or_none(language)
    found = [background] if isinstance(background, Background) else list(background)
    for each in found:
        if not isinstance(each, Background):
            raise ValueError(f"background: expected a vrsd_kit.lexical.Background, got "
                             f"{type(each).__name__}")
        if each.language != language:
            raise ValueError(f"background: read in {each.language!r}, the texts in "
                             f"{language!r} (build it with the same language)")
    return found


def _language_or_none(language: str | None) -> list[Background]:
    """[the language's common words (``Background.of_language``)], or [] and a warning
    (once per language and reason) where there is no list of them."""
    try:
        return [Background.of_language(language)]
    except (ImportError, ValueError) as exc:
        _warn_once(f"vrsd: the words of {language!r} are weighed by the pool alone, without "
                   f"the language's common words ({exc})")
        return []


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def check_background(value: Any, name: str = "background"
                     ) -> Background | tuple[Background, ...] | None:
    """``value`` as a background setting: None (the language's common words,
    ``Background.of_language``), a ``Background`` or a sequence of them (() for none), else
    a ValueError naming ``name``."""
    if value is None or isinstance(value, Background):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(b, Background) for b in value):
        return tuple(value)
    raise ValueError(f"{name}: expected a vrsd_kit.lexical.Background (Background.of_texts("
                     f"documents)), a list of them or None, got {type(value).__name__}")


def _shares(backgrounds: Sequence[Background], ids: NDArray[np.int64], mean_length: float
            ) -> NDArray[np.float64]:
    """Per word of ``ids``: the largest share of texts any of ``backgrounds`` expects."""
    return np.max([b.shares(ids, mean_length) for b in backgrounds], axis=0)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _PoolWords:
    """One pool's words against one query, read once for BM25, the profiles and the links.

    ``ids``, ``counts``, ``owner``: every (text, distinct word) of the pool, flat, with
    the text it belongs to; ``vocabulary``: the pool's distinct word ids, sorted, ``where``
    each entry's index in it and ``df`` each word's document frequency in the pool;
    ``column``: the query word an entry is (its index in ``asked``'s columns), -1 for the
    others (``in_query``: those that are one); ``query_counts``: how often each distinct
    query word (m of them, in ``column``'s order) occurs in the query."""

    n: int
    ids: NDArray[np.int64]
    counts: NDArray[np.float64]
    owner: NDArray[np.int64]
    vocabulary: NDArray[np.int64]
    where: NDArray[np.int64]
    df: NDArray[np.int64]
    column: NDArray[np.int64]
    in_query: NDArray[np.bool_]
    query_counts: NDArray[np.float64]
    language: str | None = None
    common: NDArray[np.float64] | None = None
    """Each word of ``vocabulary``: in how many of the pool's texts the background
    expects it (``Background.shares`` times n); None: no background."""
    query_common: NDArray[np.float64] | None = None  # the same, per query word

    @functools.cached_property
    def frequency(self) -> NDArray[np.float64]:
        """Each word of ``vocabulary``: its document frequency, the larger of the pool's
        and the background's."""
        df = self.df.astype(np.float64)
        return df if self.common is None else np.maximum(df, self.common)

    @functools.cached_property
    def idf(self) -> NDArray[np.float64]:
        """Each word of ``vocabulary``: its BM25 idf in the pool (and the background)."""
        return _idf(self.n, self.frequency)

    @functools.cached_property
    def weights(self) -> NDArray[np.float64]:
        """Each entry's tf * idf."""
        return self.counts * self.idf[self.where]  # type: ignore[no-any-return]

    def query_tf(self) -> NDArray[np.float64]:
        """(n, m): each text's count of each query word."""
        tf = np.zeros((self.n, len(self.query_counts)))
        on = self.in_query
        tf[self.owner[on], self.column[on]] = self.counts[on]
        return tf

    def lengths(self) -> NDArray[np.float64]:
        """(n,): each text's number of words."""
        return np.bincount(self.owner, weights=self.counts,  # type: ignore[return-value]
                           minlength=self.n)


def _query_words(query: str | Mapping[str, float], language: str | None
                 ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(the query's distinct word ids in the order they first occur, each one's count or
    weight), read as the texts are: ``tokenize``, the words ``read_text`` reads, without
    the arrays a long text needs; a weighted query's words stemmed, the weights of one
    stem summed."""
    counts: dict[str, float] = {}
    if isinstance(query, str):
        counts.update(collections.Counter(tokenize(query, language)))
    else:
        for word, weight in zip(stem(list(query), language), query.values(), strict=True):
            counts[word] = counts.get(word, 0.0) + weight
    return word_ids(list(counts)), np.fromiter(counts.values(), np.float64, len(counts))


def _pool_words(query: str | Mapping[str, float], texts: Sequence[str],
                language: str | None = None,
                background: Background | Sequence[Background] | None = None) -> _PoolWords:
    query_ids, query_counts = _query_words(query, language)
    parts = read_texts(texts, language)
    ids = np.concatenate([p.ids for p in parts]) if parts else np.zeros(0, np.int64)
    counts = np.concatenate([p.counts for p in parts]) if parts else np.zeros(0)
    owner = np.repeat(np.arange(len(texts)), [len(p.ids) for p in parts])
    vocabulary, where, df = np.unique(ids, return_inverse=True, return_counts=True)
    # each query word's column, at its place in the vocabulary (-1 elsewhere), then per entry
    column_of = np.full(len(vocabulary), -1)
    if len(vocabulary) and len(query_ids):
        at = np.minimum(np.searchsorted(vocabulary, query_ids), len(vocabulary) - 1)
        held = vocabulary[at] == query_ids
        column_of[at[held]] = np.flatnonzero(held)
    column = column_of[where]
    common = query_common = None
    backgrounds = _backgrounds(background, language)
    if backgrounds:
        n = len(texts)
        mean_length = float(counts.sum()) / n if n else 0.0
        common = n * _shares(backgrounds, vocabulary, mean_length)
        query_common = n * _shares(backgrounds, query_ids, mean_length)
    return _PoolWords(len(texts), ids, counts, owner, vocabulary, where, df, column,
                      column >= 0, query_counts, language, common, query_common)


def _idf(n: int, df: NDArray[np.floating] | NDArray[np.integer]) -> NDArray[np.float64]:
    """BM25's non-negative idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``."""
    return np.log1p((n - df + 0.5) / (df + 0.5))  # type: ignore[no-any-return]


def _bm25(words: _PoolWords, k1: float, b: float) -> NDArray[np.float64]:
    n = words.n
    if n == 0 or not len(words.query_counts):
        return np.zeros(n)
    tf = words.query_tf()
    lengths = words.lengths()
    df = np.count_nonzero(tf, axis=0).astype(np.float64)
    idf = _idf(n, df if words.query_common is None else np.maximum(df, words.query_common))
    mean_length = lengths.mean()
    norm = k1 * (1.0 - b + b * lengths / mean_length) if mean_length > 0 else np.full(n, k1)
    return (tf / (tf + norm[:, None])) @ (idf * words.query_counts)  # type: ignore[no-any-return]


def _profiles(words: _PoolWords) -> NDArray[np.float64]:
    n = words.n
    out = np.zeros((n, len(words.query_counts) + 1))
    if not len(words.ids):
        return out
    weights = words.weights
    on = words.in_query
    out[words.owner[on], words.column[on]] = weights[on]
    rest = np.where(on, 0.0, weights * weights)
    out[:, -1] = np.sqrt(np.bincount(words.owner, weights=rest, minlength=n))
    lengths = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, lengths, out=np.zeros_like(out), where=lengths > 0)


def bm25(query: str | Mapping[str, float], texts: Sequence[str], *, k1: float = K1,
         b: float = B, language: str | None = None,
         background: Background | Sequence[Background] | None = None) -> NDArray[np.float64]:
    """BM25 score of each text against ``query``, with document frequencies and the mean
    length taken from ``texts`` themselves (the pool is the collection). ``query``: a text
    (each word counts as often as it occurs), or a weighted query, word (as ``tokenize``
    gives it) -> weight, each word's term multiplied by its weight (Lucene's boosted term
    queries: what a query expanded by relevance feedback is).

    >>> scores = bm25("caffeine half-life", ["Caffeine has a half-life of five hours.",
    ...                                        "Alcohol fragments sleep."])
    >>> bool(scores[0] > 0 == scores[1])
    True
    """
    return _bm25(_pool_words(query, texts, check_language(language), background), k1, b)


def word_profiles(query: str, texts: Sequence[str], *, language: str | None = None
                  ) -> NDArray[np.float64]:
    """(n, m + 1) unit rows: each text's words as the query sees them. The text's tf * idf
    vector (idf as in ``bm25``, from the pool) keeps one coordinate per distinct query
    word (m of them) and folds every other word into one last coordinate, the length of
    that rest; then each row is scaled to unit length (a text without words stays 0).

    Two texts that weigh the question's words alike (the same ones, in the same
    proportion to all else they say) have cosine 1; texts that name different words of
    the question are less alike, however close their vectors are. ``select``'s
    default reads it as each candidate's ``profiles`` (``vrsd_core``'s ``complement``).

    >>> p = word_profiles("caffeine sleep", ["Caffeine delays sleep.", "Caffeine, caffeine."])
    >>> p.shape, bool(p[0] @ p[1] < 1)
    ((2, 3), True)
    """
    return _profiles(_pool_words(query, texts, check_language(language)))


def _log_pairs(x: NDArray[np.floating]) -> NDArray[np.float64]:
    """log C(x, 2), elementwise (x >= 2)."""
    return np.log(np.maximum(x * (x - 1.0) / 2.0, 1.0))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class PoolLinks:
    """The links between one pool's candidates, read from their words (``pool_links``):
    what the default's ``links`` option takes (``core``), and the words a link is made of
    (``words``), for its explanation.

    A link joins two candidates that share words the question does not contain: ``cosine``
    [i, j] is the cosine of their tf * idf over the pool's words outside the question (tf
    the count in the text, idf the profiles' and BM25's, from the pool: rare words weigh
    most, a word in most of the pool about 0). ``beyond_chance`` [i, j]: the words they
    share are more than chance. If each word's df texts were placed at random, a given
    pair would share word w with probability C(df_w, 2) / C(n, 2); the pair passes when
    fewer than one of the pool's C(n, 2) pairs would share all its shared words:
    sum over shared w of log C(n, 2) - log C(df_w, 2) > log C(n, 2). No constant; one
    shared word never passes on its own (a word in two texts scores exactly log C(n, 2)).
    """

    cosine: NDArray[np.float64]
    beyond_chance: NDArray[np.bool_]
    vocabulary: NDArray[np.int64]  # the pool's word ids, sorted
    idf: NDArray[np.float64]  # per word of ``vocabulary``
    surprise: NDArray[np.float64]  # per word: log C(n,2) - log C(df,2); 0 in the question
    chance: float  # log C(n, 2)
    language: str | None = None  # the reading's (``read_text``)

    def core(self, spread: float) -> Links:
        """The default's ``links`` option (``vrsd_core.Links``); ``spread``: the standard
        deviation of the relevance signals' sum (``PoolRelevance.spread``)."""
        return Links(self.cosine, self.beyond_chance, spread)

    def words(self, text: str, linked: str) -> list[str]:
        """The words that make ``text``'s link to ``linked`` more than chance, as the
        reader finds them in ``text``: words of both texts and not of the question, taken
        by their share of the link (tf in each text times idf squared, largest first) until
        together they pass the chance test; adjacent ones on one line joined as written
        ("Tim Burton"), the heaviest first. [] when the shared words never pass."""
        mine = read_text(text, self.language)  # as the pool read them
        theirs = read_text(linked, self.language)
        common, in_mine, in_theirs = np.intersect1d(mine.ids, theirs.ids, assume_unique=True,
                                                    return_indices=True)
        if not len(common):
            return []
        place = np.minimum(np.searchsorted(self.vocabulary, common), len(self.vocabulary) - 1)
        # surprise 0: a word of the question, or one no other text of the pool holds
        linking = (self.vocabulary[place] == common) & (self.surprise[place] > 0)
        if not linking.any():
            return []
        found = list(_WORD.finditer(text))  # the one scan of the text: spellings, phrases
        # folded together (folding is per character; no word holds "\0")
        spelled = fold("\0".join(match.group(0) for match in found)).split("\0")
        # each written word's id in the reading (its stem's, with a language)
        read_as_ids = word_ids(stem(spelled, self.language))
        read_as = read_as_ids.tolist()
        word_of = self._spelled(text, spelled, read_as, set(common[linking].tolist()))
        surprise: dict[int, float] = {}
        share: dict[int, float] = {}
        for word_id, at, count, other_count in zip(
                common[linking].tolist(), place[linking].tolist(),
                mine.counts[in_mine[linking]].tolist(),
                theirs.counts[in_theirs[linking]].tolist(), strict=True):
            surprise[word_id] = float(self.surprise[at])
            share[word_id] = count * other_count * float(self.idf[at]) ** 2
        chosen: set[int] = set()
        total = 0.0
        for word_id in sorted(surprise, key=lambda w: (-share[w], word_of[w])):
            chosen.add(word_id)
            total += surprise[word_id]
            if total > self.chance:
                break
        else:
            return []
        # folded -> (as written first, share, its words' ids)
        phrases: dict[str, tuple[str, float, frozenset[int]]] = {}
        # chosen words written next to each other, nothing but spaces between, no break
        # (``_BREAKS``: where the reading's word pairs stop, a line's end among them)
        runs: list[list[int]] = []
        last = end = -1
        for at in np.flatnonzero(np.isin(read_as_ids, list(chosen))).tolist():
            match = found[at]
            gap = text[end:match.start()]
            if not runs or at != last + 1 or gap.strip() or _BREAK.search(gap):
                runs.append([])  # a phrase starts: not only spaces before it, or a break
            runs[-1].append(at)
            last, end = at, match.end()
        for run in runs:
            joined = " ".join(found[at].group(0) for at in run)
            ids = frozenset(read_as[at] for at in run)
            phrases.setdefault(joined.casefold(),
                               (joined, sum(share[read_as[at]] for at in run), ids))
        shown = {i for _, _, ids in phrases.values() for i in ids}
        # a word the text's spelling does not show alone, the heaviest first
        for word_id in sorted(chosen - shown, key=lambda w: (-share[w], word_of[w])):
            word = word_of[word_id]
            phrases[word] = (word, share[word_id], frozenset([word_id]))
        named: list[str] = []
        seen: set[int] = set()
        for written, _, ids in sorted(phrases.values(), key=lambda p: -p[1]):
            if ids - seen:  # a phrase whose words were all named already says nothing
                named.append(written)
                seen |= ids
        return named

    def _spelled(self, text: str, spelled: Sequence[str], read_as: Sequence[int],
                 wanted: set[int]) -> dict[int, str]:
        """{word id: the word as first written} for the ``wanted`` ids of ``text``'s words:
        from its words as written, case-folded (``spelled``, read as ``read_as``), else (a
        script without spaces, read as bigrams) from its tokens."""
        first = dict(zip(reversed(read_as), reversed(spelled), strict=True))  # first wins
        out = {its_id: first[its_id] for its_id in wanted if its_id in first}
        if len(out) < len(wanted):
            tokens = tokenize(text, self.language)
            for word, its_id in zip(tokens, word_ids(tokens).tolist(), strict=True):
                if its_id in wanted:
                    out.setdefault(its_id, word)
        return out


def _links(words: _PoolWords) -> PoolLinks:
    n = words.n
    ids, where, df, idf = words.vocabulary, words.where, words.df, words.idf
    frequency = words.frequency  # the pool's df, or the background's where larger
    chance = float(_log_pairs(np.array(float(n))))
    outside = np.ones(len(ids), dtype=bool)
    outside[where[words.in_query]] = False
    # words outside the question that two texts or more hold, and that the background
    # (if any) does not expect in two or more of the pool's texts: common words make none
    linking = outside & (df >= 2)
    if words.common is not None:
        linking &= words.common < 2.0
    shared = np.flatnonzero(linking)
    surprise = np.zeros(len(ids))
    surprise[shared] = np.maximum(chance - _log_pairs(frequency[shared]), 0.0)
    # each text's tf * idf over the words outside the question, unit length; only words
    # two texts share enter the products (the others change a row's length only)
    weights = np.where(words.in_query, 0.0, words.weights)
    lengths = np.sqrt(np.bincount(words.owner, weights=weights * weights, minlength=n))
    column = np.full(len(ids), -1)
    column[shared] = np.arange(len(shared))
    entry_column = column[where]
    on = entry_column >= 0
    tfidf = np.zeros((n, len(shared)))
    tfidf[words.owner[on], entry_column[on]] = weights[on]
    tfidf /= np.where(lengths > 0, lengths, 1.0)[:, None]
    cosine = np.minimum(np.maximum(tfidf @ tfidf.T, 0.0), 1.0)
    present = (tfidf > 0).astype(np.float64)
    beyond = (present * surprise[shared]) @ present.T > chance
    np.fill_diagonal(cosine, 0.0)
    np.fill_diagonal(beyond, False)
    return PoolLinks(cosine, beyond, ids, idf, surprise, chance, words.language)


def pool_links(query: str, texts: Sequence[str], *, language: str | None = None,
               background: Background | Sequence[Background] | None = None) -> PoolLinks:
    """The links between ``texts`` (one query's candidates) that their words make
    (``PoolLinks``), with statistics from the pool alone."""
    return _links(_pool_words(query, texts, check_language(language), background))


@dataclass(frozen=True)
class PoolRelevance:
    """One query's relevance of its candidates, and its parts.

    Attributes:
        cosine: each candidate's cosine to the query (what the vectors say).
        lexical: each candidate's BM25 score against the query within the pool
            (what the words say).
        profiles: each candidate's ``word_profiles`` row: how alike two candidates'
            words are, as the query sees them.
    """

    cosine: NDArray[np.float64]
    lexical: NDArray[np.float64]
    profiles: NDArray[np.float64]
    links: PoolLinks | None = None

    @property
    def signals(self) -> NDArray[np.float64]:
        """(2, n): one row per relevance signal, fused by ``vrsd_core.pool_units``."""
        return np.stack([self.cosine, self.lexical])

    @property
    def spread(self) -> float:
        """The standard deviation of the signals' z-scores summed: ``pool_units``' last
        divisor (what one signal's standard deviation is in pool units, inverted)."""
        summed = standardised(self.cosine[None], None) + standardised(self.lexical[None], None)
        return float(summed.std())

    def select_keywords(self, options: Sequence[OptionSpec] = ()) -> dict[str, Any]:
        """``select``'s keywords these signals give: the relevance in pool units, the
        profiles the method's similarity reads and, for a method whose ``options``
        (``vrsd_core.method_options``) take them, the links between candidates."""
        out: dict[str, Any] = {"relevance": pool_units(self.signals), "profiles": self.profiles}
        if self.links is not None and any(spec.name == "links" for spec in options):
            out["links"] = self.links.core(self.spread)
        return out

    def parts(self, index: int) -> dict[str, float]:
        """Candidate ``index``'s parts of its relevance, for its entry."""
        return {"cosine": float(self.cosine[index]), "lexical": float(self.lexical[index])}


def cosines(query_vector: NDArray[np.floating], vectors: NDArray[np.floating]
            ) -> NDArray[np.float64]:
    """Cosine of each row of ``vectors`` to ``query_vector`` (a zero vector scores 0)."""
    q = np.asarray(query_vector, dtype=np.float64)
    x = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
    return np.divide(x @ q, norms, out=np.zeros(len(x)), where=norms > 0)


def pool_relevance(query: str, texts: Sequence[str], query_vector: NDArray[np.floating],
                   vectors: NDArray[np.floating], *, language: str | None = None,
                   background: Background | Sequence[Background] | None = None
                   ) -> PoolRelevance:
    """The vectors' and the words' relevance of one query's candidates, and their
    words' profiles; ``language``: the texts' and the query's (``check_language``; None:
    their words as written)."""
    words = _pool_words(query, texts, check_language(language), background)  # read once
    return PoolRelevance(cosines(query_vector, vectors), _bm25(words, K1, B),
                         _profiles(words), _links(words))


# --- The judge of copies: word pairs --------------------------------------------------

RESTATES = 0.9  # the share of one passage's weighted word pairs found in another
@dataclass(frozen=True)
class Copy:
    """A candidate judged a copy of a kept one.

    Attributes:
        of: the position, in the kept list it was judged against, of the kept passage.
        relation: ``"restates"`` (its content is in the kept passage) or ``"contains"``
            (the kept passage's content is in it).
        share: the weighted share of the contained passage's word pairs found in the
            other (at least ``RESTATES``).
    """

    of: int
    relation: str
    share: float


class Judge:
    """One pool's judge of copies: ``texts`` are the fetched candidates (the pool whose
    pair frequencies weigh each pair); candidates are named by their index into it.

    The pool's pairs are counted once, as arrays (``holds``: which candidate holds which of
    the pairs two or more candidates hold); every candidate's share in every other is read
    with one product when the judge is first asked. A passage whose pairs are all in
    another has share exactly 1.0.

    >>> judge = Judge(["Caffeine has a half-life of five hours.",
    ...                "In adults, caffeine has a half-life of five hours.",
    ...                "Alcohol fragments sleep."])
    >>> judge.copy_of(0, [1])
    Copy(of=0, relation='restates', share=1.0)
    >>> judge.copy_of(1, [0]).relation, judge.copy_of(2, [0, 1])
    ('contains', None)
    """

    def __init__(self, texts: Sequence[str], language: str | None = None) -> None:
        readings = read_texts(texts, check_language(language))
        ids = [words.pairs for words in readings]
        self._endings = [words.ending for words in readings]
        n = len(ids)
        self._sizes = np.array([len(a) for a in ids], dtype=np.int64)
        flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        owner = np.repeat(np.arange(n), self._sizes)
        # a text's pair ids are distinct: how many of the pool's candidates hold each pair
        self._pairs, which, held_by = np.unique(flat, return_inverse=True, return_counts=True)
        shared = held_by >= 2
        column = np.cumsum(shared) - 1  # each pair two or more hold: its column
        self._column = np.where(shared, column, -1)  # per pair of ``_pairs``
        found = shared[which]
        holder, pair = owner[found], which[found]  # each (candidate, pair) two or more hold
        self._holds = np.zeros((n, int(shared.sum())))
        self._holds[holder, column[pair]] = 1.0
        # each pair weighs 1 / how many candidates hold it; one a candidate alone holds, 1
        self._weight = 1.0 / held_by[shared]
        self._alone = self._sizes - np.bincount(holder, minlength=n)  # pairs no other holds
        self._total = np.bincount(holder, weights=1.0 / held_by[pair], minlength=n) + self._alone
        self._share: NDArray[np.float64] | None = None
        self._copy: NDArray[np.bool_] | None = None

    def _shares(self) -> NDArray[np.float64]:
        """(n, n): the share of each candidate's pairs found in each other candidate (1.0
        where all of them are, 0.0 for a passage without pairs), read with one product
        when first needed."""
        if self._share is None:
            holds, sizes = self._holds, self._sizes
            with np.errstate(invalid="ignore", divide="ignore"):
                share = (holds @ (holds * self._weight).T) / self._total[:, None]
            # all of a candidate's pairs can be in another only if others hold each of them
            whole = np.flatnonzero((self._alone == 0) & (sizes > 0))
            if len(whole):
                found = holds[whole] @ holds.T  # how many of its pairs each other holds
                share[whole] = np.where(found == sizes[whole, None], 1.0, share[whole])
            share[sizes == 0] = 0.0
            np.fill_diagonal(share, np.where(sizes > 0, 1.0, 0.0))  # its own pairs
            self._share = share
        return self._share

    def _copies(self) -> NDArray[np.bool_]:
        """(n, n): whether each candidate restates or contains each other candidate (a
        share of ``RESTATES`` or more either way), read from ``_shares`` when first needed."""
        if self._copy is None:
            share = self._shares()
            self._copy = (share >= RESTATES) | (share.T >= RESTATES)
        return self._copy

    def continued(self) -> NDArray[np.bool_]:
        """(n, n): whether one of two candidates holds every pair of the other's ending
        (``TextWords.ending``): one continues the other, as two chunks cut from one
        document with an overlap do (or repeats its last words verbatim). Such a pair is
        one text read twice, not a hop between two: the rerank body lets it make no link
        (``vrsd_kit.rerank.pool_keywords``)."""
        n = len(self._sizes)
        out = np.zeros((n, n), dtype=bool)
        ending = [text for text, pairs in enumerate(self._endings) if len(pairs)]
        if ending and self._holds.shape[1]:  # else no pair is held twice: none continues
            ends = np.stack([self._endings[text] for text in ending])  # (m, ENDING)
            column = self._column[np.searchsorted(self._pairs, ends)]  # each its own text's
            held = self._holds[:, np.maximum(column, 0)] > 0  # (n, m, ENDING)
            # a pair of the ending no other candidate holds: it continues nothing
            out[ending] = (held.all(axis=2) & (column >= 0).all(axis=1)).T
            out |= out.T
            np.fill_diagonal(out, False)
        return out

    def __len__(self) -> int:
        """How many candidates the pool has."""
        return len(self._sizes)

    def words(self, i: int) -> int:
        """How many word pairs candidate ``i`` has (0: nothing to compare)."""
        return int(self._sizes[i])

    def share(self, i: int, j: int) -> float:
        """The weighted share of candidate ``i``'s word pairs found in candidate ``j``
        (0.0 when ``i`` has none)."""
        return float(self._shares()[i, j])

    def copy_of(self, i: int, kept: Sequence[int]) -> Copy | None:
        """Whether candidate ``i`` is a copy of one of ``kept`` (candidate indices): the
        kept passage it restates or contains with the largest share (restates first on a
        tie, then the earlier kept), or None."""
        if not len(kept):
            return None
        # per kept passage: i's share in it ("restates"), its share in i ("contains")
        share = self._shares()
        shares = np.stack([share[i, kept], share[kept, i]], axis=1).ravel()
        best = int(shares.argmax())
        if shares[best] < RESTATES:
            return None
        return Copy(best // 2, ("restates", "contains")[best % 2], float(shares[best]))

    def copies(self) -> NDArray[np.bool_]:
        """(n, n): [c, p] True when candidate c restates or contains candidate p, the
        selection's ``closes`` (``vrsd_core``'s ``complement``): the same verdict as
        ``copy_of``, without naming the pick. Read only: the judge keeps it."""
        verdicts = self._copies().view()
        verdicts.flags.writeable = False
        return verdicts


def shared_pairs(text: str, other: str) -> float:
    """The share of ``text``'s word pairs that occur in ``other``, each pair weighed by
    how rare it is in the two texts (``Judge``); 0.0 for a text without words (it has
    nothing to compare).

    >>> shared_pairs("caffeine has a half-life of five hours",
    ...              "In adults caffeine has a half-life of five hours.")
    1.0
    >>> round(shared_pairs("the 1987 team", "the 1988 team"), 2)
    0.0
    >>> shared_pairs("!!!", "Anything at all.")
    0.0
    """
    return Judge([text, other]).share(0, 1)


def restated_by(text: str, kept: Sequence[str], pool: Sequence[str] | None = None
                ) -> tuple[int | None, float]:
    """(index into ``kept`` of the passage ``text`` restates, or None; the largest share
    of its word pairs found in one kept passage), read by the rerank body's ``Judge`` on
    ``pool`` (the fetched candidates' texts, ``text`` and ``kept`` among them; default:
    ``text`` and ``kept``), whose texts weigh each pair."""
    if not kept:
        return None, 0.0
    pool = [text, *kept] if pool is None else list(pool)
    where = {t: i for i, t in reversed(list(enumerate(pool)))}  # a text's first place
    missing = [t for t in (text, *kept) if t not in where]
    if missing:
        raise ValueError(f"pool: does not hold {missing[0][:40]!r} (text and kept must be "
                         "among the pool's texts)")
    judge = Judge(pool)
    shares = [judge.share(where[text], where[other]) for other in kept]
    best = max(range(len(shares)), key=shares.__getitem__)
    return (best if shares[best] >= RESTATES else None), shares[best]


# --- the selection keeps no copy of a pick ---------------------------------------------


def without_copies(selection: Selection, judge: Judge, k: int, *, fill: bool = False,
                   relevance: NDArray[np.float64] | None = None,
                   objective: Callable[[NDArray[np.int64]], float] | None = None
                   ) -> Selection:
    """The default's result when its judge closed copies: ``selection`` is the run whose
    ``closes`` (``judge.copies()``) closed the candidates ``info["closed"]`` (in the order
    closed), each a copy of a pick before it; the run is the one in which they were closed
    from the start, so each is a copy of a pick that is kept. Its ``info["top_k"]`` is
    what plain top-k returns (under a budget or a cap, read from the run without the
    judge, whose ``info["top_k_stopped"]`` says whether the budget or the cap stopped it:
    ``complement``).

    When only copies remain, fewer than ``k`` come back and ``info["stopped"] ==
    "restatements"``; with ``fill``, the closed copies make up ``k`` (in the order they
    were closed), each in ``info["copy_of"]`` ({candidate: (the kept candidate, relation,
    share)}), gain 0 and ``relevance[c]`` (every candidate's relevance as the method reads
    it; None: 0.0). ``info["top_k"]`` is what plain top-k returns; ``info["held_back"]``
    is what of it the result does not keep; ``info["copies"]`` the closed candidates.
    ``objective(indices)`` gives the result's objective, read lazily (None: 0.0).
    """
    closed = list(selection.info["closed"])
    picks = selection.indices.tolist()
    info = {key: value for key, value in selection.info.items()
            if key not in ("top_k", "held_back", "stopped", "top_k_stopped", "closed")}
    if selection.info.get("top_k_stopped"):
        # the budget or cap stopped plain top-k short: say what stops this
        most = min(k, selection.info.get("feasible", len(judge)))
        short = len(picks) < most  # below what the cap allows: the budget, else the copies
        capped = selection.info.get("stopped") == "max_per_group"
        stopped = ("max_tokens" if short and "max_tokens" in info
                   else None if short else "max_per_group" if capped else None)
        if stopped is not None:
            info["stopped"] = stopped
    gains, relevances = selection.gains, selection.relevance
    if len(picks) < k:
        if fill:
            added = closed[:k - len(picks)]
            found = [judge.copy_of(c, picks) for c in added]
            info["copy_of"] = {c: (picks[f.of], f.relation, f.share)
                               for c, f in zip(added, found, strict=True) if f is not None}
            if "linked_to" in info:  # a copy that fills a slot was brought in by no link
                info["linked_to"] = [*info["linked_to"], *([-1] * len(added))]
            picks = picks + added
            gains = np.concatenate([gains, np.zeros(len(added))])
            relevances = np.concatenate([relevances, np.zeros(len(added)) if relevance is None
                                         else np.asarray(relevance)[added]])
            info.pop("stopped", None)
        elif "stopped" not in info:
            info["stopped"] = "restatements"
    info["top_k"] = list(selection.info.get("top_k", []))
    info["held_back"] = [c for c in info["top_k"] if c not in set(picks)]
    info["copies"] = closed
    indices = np.asarray(picks, dtype=np.int64)
    return Selection(
        indices=indices, gains=np.asarray(gains, dtype=np.float64),
        relevance=np.asarray(relevances, dtype=np.float64),
        objective=0.0 if objective is None else functools.partial(  # type: ignore[arg-type]
            objective, indices),  # read when asked, as the core's
        method=selection.method, params=dict(selection.params), info=info)
