"""Every question's candidate pool, fetched once and shared by every row of a protocol.

For each question, the adapters' own fetch (``vrsd_langchain.fetch_candidates``)
asks the corpus' LangChain FAISS store for its top ``fetch_k`` with their stored
vectors: exactly what a ``DiverseRetriever`` over that store hands its method. The
project's rows then run as one ``vrsd_core.select_batch`` call per row and k over all
the pools, the default with the rerank body's judge of copies (``vrsd_kit.lexical.Judge``,
one per question, passed as ``closes``: a pick that copies one before it is closed in the
greedy loop; the evidence tests hold that equal to ``DiverseRetriever`` per question);
the peers run per question on the same arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vrsd_core import (
    DEFAULT_METHOD,
    Links,
    method_info,
    method_options,
    metrics,
    pool_units,
    select_batch,
)
from vrsd_kit.lexical import Judge, pool_relevance

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
        words: (Q, 2, n) each candidate's relevance signals, its cosine and its BM25
            in the pool (``vrsd_kit.lexical.pool_relevance``), fused by
            ``vrsd_core.pool_units`` into the relevance the adapters give the default.
        profiles: (Q, n, f) each candidate's word profile (``pool_relevance``'s
            ``profiles``, zero columns padding the narrower ones), the default's
            ``profiles``.
        links: the links between each question's candidates (``pool_relevance``'s
            ``links``, stacked: ``vrsd_core.Links`` of (Q, n, n) arrays), the default's
            ``links``.
        texts: each question's candidates' texts (the default's judge of copies reads
            them); None: no rule on copies.
    """

    queries: np.ndarray
    rows: np.ndarray
    vectors: np.ndarray
    store: Any
    embeddings: Any
    words: np.ndarray
    profiles: np.ndarray
    links: Links | None = None
    texts: list[list[str]] | None = None


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
    found_words = [
        pool_relevance(question, [texts[r] for r in found], qvec, cands)
        for question, found, qvec, cands in zip(questions, rows, queries, stacked, strict=True)
    ]
    words = np.stack([w.signals for w in found_words])
    width = max((w.profiles.shape[1] for w in found_words), default=1)
    profiles = np.zeros(stacked.shape[:2] + (width,))
    for b, w in enumerate(found_words):
        profiles[b, :, : w.profiles.shape[1]] = w.profiles
    links = Links(np.stack([w.links.cosine for w in found_words if w.links is not None]),
                  np.stack([w.links.beyond_chance for w in found_words if w.links is not None]),
                  np.array([w.spread for w in found_words])) if found_words else None
    return Pools(queries, np.asarray(rows, dtype=np.int64), stacked, store, embeddings, words,
                 profiles, links, [[texts[r] for r in found] for found in rows])


def select_rows(pools: Pools, spec: MethodSpec, k: int, **budget: Any) -> list[np.ndarray]:
    """Each question's picks (corpus rows, in selection order) by ``spec`` at ``k``: one
    ``select_batch`` call. ``spec.method`` empty (the ``default`` rows): the adapters'
    default, ``DEFAULT_METHOD`` with its own options; ``spec.words``: relevance from the
    words too (``pools.words`` fused by ``pool_units``, and ``pools.profiles`` and, unless
    ``spec.links`` is off, ``pools.links`` for a method that takes them). ``budget``:
    ``max_tokens`` and ``token_counts`` (Q, n), as ``select_batch`` takes them."""
    method = spec.method or DEFAULT_METHOD
    words: dict[str, Any] = {}
    if spec.words:
        words["relevance"] = pool_units(pools.words)
        if method_info(method).takes_profiles:
            words["profiles"] = pools.profiles
        if spec.links and pools.links is not None and any(
                o.name == "links" for o in method_options(method)):
            words["links"] = pools.links
    if pools.texts is not None and any(o.name == "closes" for o in method_options(method)):
        words["closes"] = _judges(pools.texts)  # the body's rule on copies
    picked = select_batch(pools.queries, pools.vectors, k, method=method,
                          **words, **spec.options, **budget)
    return [pools.rows[b, sel.indices] for b, sel in enumerate(picked)]


def _judges(texts: list[list[str]]) -> Any:
    """``closes`` for a batch: question b's pick asked of its own judge of copies (made
    when first asked)."""
    judges: dict[int, Judge] = {}

    def closes(row: int, candidate: int, picks: list[int]) -> bool:
        judge = judges.get(row)
        if judge is None:
            judge = judges[row] = Judge(texts[row])
        return judge.closes(row, candidate, picks)

    return closes


def score(rows: Sequence[int] | np.ndarray, owner: np.ndarray, gold: Sequence[int]
          ) -> tuple[float, bool]:
    """(evidence recall, all evidence found) of the picked corpus ``rows``: ``owner``
    maps a row to its evidence unit, ``gold`` lists the question's units."""
    found = set(owner[np.asarray(rows, dtype=np.int64)].tolist()) & set(gold)
    return metrics.evidence_recall(found, gold), metrics.all_evidence(found, gold)
