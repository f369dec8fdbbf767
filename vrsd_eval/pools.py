"""Every question's candidate pool, fetched once and shared by every row of a protocol.

For each question, the adapters' own fetch (``vrsd_langchain.fetch_candidates``)
asks the corpus' LangChain FAISS store for its top ``fetch_k`` with their stored
vectors: exactly what a ``DiverseRetriever`` over that store hands its method. The
project's rows run ``select`` per question with the keywords the rerank body builds
(``vrsd_kit.rerank.pool_keywords``: the words' relevance, profiles and links, and the
judge of copies), so a default row picks what the adapters pick; the peers run per
question on the same arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, metrics, select
from vrsd_kit.lexical import PoolRelevance, pool_relevance
from vrsd_kit.rerank import pool_keywords

from .geometries import embed_questions
from .methods import MethodSpec
from .report import progress

EMBED_BATCH = 512  # corpus texts per embedding call (a progress step)


@dataclass
class Pools:
    """The candidates of every question of one corpus.

    Attributes:
        queries: (Q, d) question vectors.
        rows: (Q, n) the candidates' corpus rows, in the store's order.
        vectors: (Q, n, d) the candidates' vectors, as the store returned them.
        store: the LangChain FAISS store (``store.build_store``) they come from.
        embeddings: the ``Embeddings`` the store and the questions use.
        signals: each question's pool read by the words (``vrsd_kit.lexical.pool_relevance``:
            the cosine, the BM25, the profiles and the links), as the rerank body reads it.
        texts: each question's candidates' texts (the default's judge of copies reads
            them).
    """

    queries: np.ndarray
    rows: np.ndarray
    vectors: np.ndarray
    store: Any
    embeddings: Any
    signals: list[PoolRelevance]
    texts: list[list[str]]

    @property
    def words(self) -> np.ndarray:
        """(Q, 2, n): each candidate's cosine and BM25 (``PoolRelevance.signals``)."""
        return np.stack([found.signals for found in self.signals])


def embed_corpus(texts: Sequence[str], embeddings: Any, desc: str,
                 show: bool = True) -> list[list[float]]:
    """``embeddings.embed_documents`` of ``texts`` in batches, with a progress bar."""
    vectors: list[list[float]] = []
    with progress(total=len(texts), desc=desc, unit="text", enabled=show) as bar:
        for i in range(0, len(texts), EMBED_BATCH):
            vectors += embeddings.embed_documents(list(texts[i : i + EMBED_BATCH]))
            bar.update(len(texts[i : i + EMBED_BATCH]))
    return vectors


def build_pools(texts: Sequence[str], questions: Sequence[str], embeddings: Any,
                fetch_k: int, *, desc: str = "", show: bool = True) -> Pools:
    """Index ``texts`` in FAISS, embed ``questions``, fetch each one's top ``fetch_k``."""
    from vrsd_langchain import EmbeddingCache, fetch_candidates

    from .store import build_store

    store = build_store("faiss", list(texts),
                        embed_corpus(texts, embeddings, f"{desc}: corpus embeddings", show),
                        embeddings)
    queries = embed_questions(embeddings, questions)
    rows, vectors, cache = [], [], EmbeddingCache()
    for question, qvec in zip(progress(questions, desc=f"{desc}: candidates", unit="question",
                                       enabled=show), queries, strict=True):
        found = fetch_candidates(store, question, qvec, fetch_k, {}, embeddings, cache)
        rows.append([int(d.metadata["row"]) for d in found.documents])
        vectors.append(np.asarray(found.vectors))
    stacked = np.stack(vectors)
    pool_texts = [[texts[r] for r in found] for found in rows]
    signals = [pool_relevance(question, found, qvec, cands) for question, found, qvec, cands
               in zip(questions, pool_texts, queries, stacked, strict=True)]
    return Pools(queries, np.asarray(rows, dtype=np.int64), stacked, store, embeddings, signals,
                 pool_texts)


def select_rows(pools: Pools, spec: MethodSpec, k: int, **budget: Any) -> list[np.ndarray]:
    """Each question's picks (corpus rows, in selection order) by ``spec`` at ``k``, with
    the keywords the rerank body builds (``pool_keywords``). ``spec.method`` empty (the
    ``default`` rows): the adapters' default, ``DEFAULT_METHOD``; ``spec.words``: what the
    pool's words say (without the links where ``spec.links`` is off). ``budget``:
    ``max_tokens`` and ``token_counts`` (Q, n)."""
    method = spec.method or DEFAULT_METHOD
    counts = budget.pop("token_counts", None)
    out = []
    for b, texts in enumerate(pools.texts):
        signals = pools.signals[b] if spec.words else None
        if signals is not None and not spec.links:
            signals = replace(signals, links=None)
        keywords, _ = pool_keywords(method, signals, texts)
        if counts is not None:
            keywords["token_counts"] = counts[b]
        picked = select(pools.queries[b], pools.vectors[b], k, method=method, **keywords,
                        **spec.options, **budget)
        out.append(pools.rows[b, picked.indices])
    return out


def score(rows: Sequence[int] | np.ndarray, owner: np.ndarray, gold: Sequence[int]
          ) -> tuple[float, bool]:
    """(evidence recall, all evidence found) of the picked corpus ``rows``: ``owner``
    maps a row to its evidence unit, ``gold`` lists the question's units."""
    found = set(owner[np.asarray(rows, dtype=np.int64)].tolist()) & set(gold)
    return metrics.evidence_recall(found, gold), metrics.all_evidence(found, gold)


def pool_reach(pools: Pools, owner: np.ndarray, gold: Sequence[Sequence[int]]
               ) -> tuple[float, float]:
    """(mean evidence recall, all-evidence rate) of every question's whole pool: what all
    the fetched candidates hold together, the most a selection of them can find."""
    found = [score(rows, owner, units) for rows, units in zip(pools.rows, gold, strict=True)]
    if not found:
        return 0.0, 0.0
    return (float(np.mean([recall for recall, _ in found])),
            float(np.mean([complete for _, complete in found])))
