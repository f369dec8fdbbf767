"""Pseudo-relevance feedback: the question's words expanded with its top passages' words,
the baseline a search engineer tries first for a question whose next passage its own
words miss (the evidence protocol's row ``default without links + PRF``).

RM3 (the relevance model of Lavrenko & Croft, SIGIR 2001, interpolated with the query as
in Abdul-Jaleel et al., UMass at TREC 2004), computed as Anserini's ``Rm3Reranker`` does,
on the over-fetched pool (the pool is the collection, as for the default's BM25):

1. First pass: BM25 of the question over the pool (``vrsd_kit.lexical.bm25``); its
   ``FB_DOCS`` best passages are the feedback, each weighing its BM25 score.
2. Each feedback passage's words: its term counts over the words of 2 to 20 characters
   found in at most ``MAX_DF_RATIO`` of the pool's texts (Anserini's df filter, in place
   of a stop list), pruned to its ``FB_TERMS`` most frequent (ties: the first written
   first), scaled to sum 1.
3. The relevance model: the feedback passages' shares summed, each times its passage's
   score; its ``FB_TERMS`` heaviest words, scaled to sum 1.
4. The expanded query: ``ORIGINAL_QUERY_WEIGHT`` times the question's word counts scaled
   to sum 1, plus ``1 - ORIGINAL_QUERY_WEIGHT`` times the relevance model.
5. Second pass: BM25 of the expanded query over the pool, each word's term times its
   weight (``bm25`` with a weighted query: Lucene's boosted term queries).

The constants are the toolkits' defaults, not tuned here: ``FB_TERMS = 10`` (Terrier's
and Anserini's), ``FB_DOCS = 3`` (Terrier's; Anserini's 10 would be a fifth of a
50-passage pool), ``ORIGINAL_QUERY_WEIGHT = 0.5`` (Anserini's and Pyserini's
``set_rm3(10, 10, 0.5)``), ``MAX_DF_RATIO = 0.1`` (Anserini's). Anserini also keeps only
ASCII ``[a-z0-9]+`` words; not here, as the kit's words are any script's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vrsd_kit.lexical import bm25, tokenize

from .pools import Pools

FB_DOCS = 3
FB_TERMS = 10
ORIGINAL_QUERY_WEIGHT = 0.5
MAX_DF_RATIO = 0.1
WORD_LENGTH = (2, 20)  # Anserini's feedback words: 2 to 20 characters


def _scaled(weights: dict[str, float]) -> dict[str, float]:
    """``weights`` scaled to sum 1 (all zero: empty)."""
    total = sum(weights.values())
    return {word: w / total for word, w in weights.items()} if total > 0 else {}


def _heaviest(weights: dict[str, float], n: int) -> dict[str, float]:
    """The ``n`` heaviest of ``weights`` (positive ones only); ties keep their order."""
    ranked = sorted((item for item in weights.items() if item[1] > 0),
                    key=lambda item: -item[1])
    return dict(ranked[:n])


def rm3_query(question: str, texts: Sequence[str], *, fb_docs: int = FB_DOCS,
              fb_terms: int = FB_TERMS, original_weight: float = ORIGINAL_QUERY_WEIGHT,
              max_df_ratio: float = MAX_DF_RATIO) -> dict[str, float]:
    """The question expanded by RM3 with ``texts`` (one question's pool) as the collection:
    word -> weight, the weights summing to 1 (the module's steps 1 to 4). A question word
    keeps at least ``original_weight`` times its share of the question's words.

    Raises:
        ValueError: naming the argument, for ``fb_docs`` or ``fb_terms`` below 1, or
            ``original_weight`` or ``max_df_ratio`` outside [0, 1].
    """
    for name, count in (("fb_docs", fb_docs), ("fb_terms", fb_terms)):
        if count < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {count!r}")
    for name, share in (("original_weight", original_weight), ("max_df_ratio", max_df_ratio)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name}: expected a number in [0, 1], got {share!r}")
    asked = _scaled({word: float(n) for word, n in Counter(tokenize(question)).items()})
    if not texts:
        return asked
    first_pass = bm25(question, texts)
    feedback = [int(i) for i in np.argsort(-first_pass, kind="stable")[:fb_docs]]
    counts = [Counter(tokenize(texts[i])) for i in feedback]
    df = Counter(word for text in texts for word in set(tokenize(text)))
    allowed = max_df_ratio * len(texts)
    relevance: dict[str, float] = {}
    for i, words in zip(feedback, counts, strict=True):
        kept = _scaled(_heaviest({
            word: float(n) for word, n in words.items()
            if WORD_LENGTH[0] <= len(word) <= WORD_LENGTH[1] and df[word] <= allowed}, fb_terms))
        for word, share in kept.items():
            relevance[word] = relevance.get(word, 0.0) + share * float(first_pass[i])
    model = _scaled(_heaviest(relevance, fb_terms))
    if not model:  # no feedback word (no question word in the pool): the question alone
        return asked
    return {word: original_weight * asked.get(word, 0.0)
            + (1.0 - original_weight) * model.get(word, 0.0)
            for word in {**asked, **model}}


def expanded_bm25(question: str, texts: Sequence[str]) -> NDArray[np.float64]:
    """Each text's BM25 against the question expanded by RM3 (``rm3_query`` at the
    module's constants) over ``texts``: the module's step 5."""
    return bm25(rm3_query(question, texts), texts)


def with_feedback(pools: Pools, questions: Sequence[str]) -> Pools:
    """``pools`` with each question's lexical signal (``PoolRelevance.lexical``) its pool's
    ``expanded_bm25``; the cosine, the profiles (the likeness the default reads) and the
    rest as they are. ``pools`` is not changed."""
    if len(questions) != len(pools.texts):
        raise ValueError(f"questions: expected one per pool ({len(pools.texts)}), "
                         f"got {len(questions)}")
    signals = [replace(found, lexical=expanded_bm25(question, texts))
               for found, question, texts in zip(pools.signals, questions, pools.texts,
                                                 strict=True)]
    return replace(pools, signals=signals)
