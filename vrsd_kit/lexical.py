"""What the candidates' words say: BM25 over the over-fetched pool, beside the cosine.

A small embedding model blurs the names, numbers and rare terms a question turns
on; the candidates' own words keep them. ``bm25`` scores the pool's texts against
the query with statistics from the pool alone (no index: the n candidates are the
collection). ``pool_relevance`` gives both signals; the core receives them as
``select(..., relevance=[cosines, bm25 scores])`` (one row per signal) and fuses
them in the pool's own units::

    relevance_i = z(cosine)_i + z(bm25)_i,   z(x) = (x - mean(x)) / std(x) over the pool

so neither part needs a weight: each counts one standard deviation of its own
spread in this pool. A part that does not vary over the pool (no query word in any
candidate) contributes 0. The words also tell how alike two candidates are:
``word_profiles`` gives each candidate's profile (its tf * idf on the query's words, the
rest of its words folded into one coordinate), and the default's similarity becomes the
mean of the vectors' cosine and the profiles' cosine (``select(..., profiles=...)``), so
two passages that name different words of the question count as different even where a
small model puts them close. The core stays numpy-only.

Tokens are Unicode word characters, case-folded (``\\w+``): any language that
separates words, no stop list, no stemmer. BM25 is Lucene's (bm25s'
``method="lucene"``, equal to it to rounding: the tests hold them together), a sum over
the query's words of ``idf * tf / (tf + k1 (1 - b + b |d| / avgdl))`` with the
non-negative ``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` and the usual
``k1 = 1.5, b = 0.75`` (bm25s' and rank-bm25's defaults; not tuned here). A text is
tokenised once per process (``term_counts`` is cached on the text), so a candidate
seen by many queries is not read again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

K1 = 1.5
B = 0.75
_WORD = re.compile(r"\w+")
_CACHED_TEXTS = 1 << 16  # tokenised texts kept per process (a few MB for 700-character passages)


def tokenize(text: str) -> list[str]:
    """The text's words: runs of Unicode word characters, case-folded."""
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=_CACHED_TEXTS)
def term_counts(text: str) -> tuple[dict[str, int], int]:
    """(word -> count, number of words) of ``text``; cached, so each text is read once."""
    words = tokenize(text)
    return dict(Counter(words)), len(words)


def bm25(query: str, texts: Sequence[str], *, k1: float = K1, b: float = B) -> NDArray[np.float64]:
    """BM25 score of each text against ``query``, with document frequencies and the mean
    length taken from ``texts`` themselves (the pool is the collection).

    >>> scores = bm25("caffeine half-life", ["Caffeine has a half-life of five hours.",
    ...                                        "Alcohol fragments sleep."])
    >>> bool(scores[0] > 0 == scores[1])
    True
    """
    n = len(texts)
    query_terms = Counter(tokenize(query))
    if n == 0 or not query_terms:
        return np.zeros(n)
    counted = [term_counts(text) for text in texts]
    terms = list(query_terms)
    tf = np.array([[counts.get(t, 0) for t in terms] for counts, _ in counted], dtype=np.float64)
    lengths = np.array([length for _, length in counted], dtype=np.float64)
    df = np.count_nonzero(tf, axis=0)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    mean_length = lengths.mean()
    norm = k1 * (1.0 - b + b * lengths / mean_length) if mean_length > 0 else np.full(n, k1)
    weights = idf * np.array([query_terms[t] for t in terms], dtype=np.float64)
    return (tf / (tf + norm[:, None])) @ weights  # type: ignore[no-any-return]


@lru_cache(maxsize=_CACHED_TEXTS)
def _term_arrays(text: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(the hashes of the text's distinct words, their counts); cached like ``term_counts``.
    A word's hash is its id within this process (64 bits: collisions are negligible)."""
    counts, _ = term_counts(text)
    return (np.fromiter(map(hash, counts), dtype=np.int64, count=len(counts)),
            np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))


def word_profiles(query: str, texts: Sequence[str]) -> NDArray[np.float64]:
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
    n = len(texts)
    query_ids = np.unique(np.fromiter(map(hash, dict.fromkeys(tokenize(query))),
                                      dtype=np.int64))
    out = np.zeros((n, len(query_ids) + 1))
    if n == 0:
        return out
    parts = [_term_arrays(text) for text in texts]
    ids = np.concatenate([p[0] for p in parts])
    if not len(ids):
        return out
    counts = np.concatenate([p[1] for p in parts])
    owner = np.repeat(np.arange(n), [len(p[0]) for p in parts])
    _, where, df = np.unique(ids, return_inverse=True, return_counts=True)
    weights = counts * np.log1p((n - df + 0.5) / (df + 0.5))[where]
    column = np.searchsorted(query_ids, ids)
    asked = column < len(query_ids)
    asked[asked] = query_ids[column[asked]] == ids[asked]
    out[owner[asked], column[asked]] = weights[asked]
    rest = np.where(asked, 0.0, weights * weights)
    out[:, -1] = np.sqrt(np.bincount(owner, weights=rest, minlength=n))
    lengths = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, lengths, out=np.zeros_like(out), where=lengths > 0)


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

    @property
    def signals(self) -> NDArray[np.float64]:
        """(2, n): the rows ``select(..., relevance=...)`` fuses as z(cosine) + z(lexical)."""
        return np.stack([self.cosine, self.lexical])


def cosines(query_vector: NDArray[np.floating], vectors: NDArray[np.floating]
            ) -> NDArray[np.float64]:
    """Cosine of each row of ``vectors`` to ``query_vector`` (a zero vector scores 0)."""
    q = np.asarray(query_vector, dtype=np.float64)
    x = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
    return np.divide(x @ q, norms, out=np.zeros(len(x)), where=norms > 0)


def pool_relevance(query: str, texts: Sequence[str], query_vector: NDArray[np.floating],
                   vectors: NDArray[np.floating]) -> PoolRelevance:
    """The vectors' and the words' relevance of one query's candidates, and their
    words' profiles."""
    return PoolRelevance(cosines(query_vector, vectors), bm25(query, texts),
                         word_profiles(query, texts))
