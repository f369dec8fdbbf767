"""``inspect_store``: will the default change anything on this Haystack store?

What ``DiverseRanker`` takes: an embedding retriever's documents with their embeddings,
the question embedded by the pipeline's text embedder. A sample of the store's own
documents, for questions taken from it when none are given, is listed with
``filter_documents``. The figures, the verdict and the reports:
``vrsd_kit.inspection``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from vrsd_kit.inspection import DEFAULT_SAMPLE, Inspection, Passage, Pool, SourceSpec
from vrsd_kit.inspection.run import (
    Questions,
    cannot_list,
    default_counts,
    inspect_source,
    pick,
    source_label,
)
from vrsd_kit.rerank import check_query_vector
from vrsd_kit.settings import DEFAULT_FETCH_K


def _takes(component: Any, argument: str) -> bool:
    run = getattr(component, "run", None)
    try:
        return callable(run) and argument in inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False


def is_haystack_store(target: Any) -> bool:
    """Whether ``target`` reads as a Haystack embedding retriever or document store."""
    return _takes(target, "query_embedding") or hasattr(target, "filter_documents")


class HaystackSource:
    """A Haystack embedding retriever's documents with their embeddings, the question
    embedded by the pipeline's text embedder: what ``DiverseRanker`` takes."""

    def __init__(self, target: Any, embedder: Any, k: int | None, fetch_k: int | None,
                 source: SourceSpec) -> None:
        from haystack.document_stores.in_memory import InMemoryDocumentStore

        if embedder is None:
            raise ValueError("embedder: a Haystack store needs the text embedder of its "
                             "pipeline (a component with run(text=...)) or a callable "
                             "str -> list[float], to embed the questions")
        if not (_takes(embedder, "text") or callable(embedder)):
            raise ValueError("embedder: expected a Haystack text embedder (run(text=...)) "
                             f"or a callable str -> list[float], got {type(embedder).__name__}")
        if _takes(target, "query_embedding"):  # the pipeline's embedding retriever
            self.retriever = target
            self.store = getattr(target, "document_store", None)
            top_k = getattr(target, "top_k", None)
        elif isinstance(target, InMemoryDocumentStore):
            from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever

            self.retriever = InMemoryEmbeddingRetriever(target, return_embedding=True)
            self.store, top_k = target, None
        else:
            raise ValueError(
                f"store: {type(target).__name__}: give the embedding retriever of your "
                "pipeline (e.g. QdrantEmbeddingRetriever(store, return_embedding=True)); "
                "only InMemoryDocumentStore is searched directly")
        warm = getattr(embedder, "warm_up", None)
        if callable(warm):
            warm()
        self.embedder, self.source = embedder, source
        self.k, self.fetch_k = default_counts(
            k, fetch_k, top_k if isinstance(top_k, int) and top_k > 0 else DEFAULT_FETCH_K)
        self.name = f"{type(self.retriever).__name__} (Haystack)"

    def _passage(self, doc: Any) -> Passage:
        return Passage(doc.id, doc.content or "", source_label(self.source, doc, doc.meta))

    def prepare(self, questions: list[str]) -> None:
        return None  # a text embedder embeds one text a run

    def _embed(self, question: str) -> np.ndarray:
        if _takes(self.embedder, "text"):
            return check_query_vector(self.embedder.run(text=question)["embedding"])
        return check_query_vector(self.embedder(question))

    def pool(self, question: str, n: int) -> Pool:
        query = self._embed(question)
        docs = self.retriever.run(query_embedding=query.tolist(), top_k=n)["documents"]
        missing = [d.id for d in docs if d.embedding is None]
        if missing:
            raise ValueError(
                f"store: {type(self.retriever).__name__} returned documents without their "
                f"embeddings (e.g. {missing[0]!r}); ask for them (return_embedding=True), "
                "as DiverseRanker does")
        vectors = np.asarray([d.embedding for d in docs], dtype=np.float64)
        return Pool(query, [self._passage(d) for d in docs],
                    vectors.reshape(len(docs), -1) if docs else np.zeros((0, query.size)))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        if self.store is None or not hasattr(self.store, "filter_documents"):
            raise cannot_list(type(self.retriever).__name__)
        docs = [d for d in self.store.filter_documents() if d.content]
        return [self._passage(d) for d in pick(docs, count, rng)]


def inspect_store(
    store: Any,
    questions: Questions = None,
    *,
    embedder: Any = None,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    source: SourceSpec = "file_path",
    progress: bool = False,
    max_per_group: int | None = None,
) -> Inspection:
    """Top-k against the default (``vrsd_core.DEFAULT_METHOD``) on a Haystack store's
    candidates for every question: how crowded top-k is and what the default changes.

    Args:
        store: an ``InMemoryDocumentStore``, or the embedding retriever of a pipeline
            (its ``top_k`` is the default fetch_k; it must return embeddings).
        questions: a file (one question a line, or JSON lines with a ``"question"``
            field) or a list of strings. None: ``sample`` of the store's own documents,
            each asked as a question with itself left out of its candidates.
        embedder: the pipeline's text embedder (a component with ``run(text=...)``) or
            a callable str -> vector (required: a document store keeps no model).
        k, fetch_k: how many documents are kept, and of how many candidates (None: 4,
            and the retriever's ``top_k``, else 20).
        sample, seed: how many documents to ask when no questions are given, drawn at
            random with ``seed``.
        source: where a document's source is: a ``meta`` field (``"file_path"``: what
            Haystack's converters record) or a callable on the Document; None for none.
        progress: a progress bar on stderr (tqdm).
        max_per_group: a per-source cap, as the retriever's (``source`` gives each
            passage's source): the default keeps at most that many per source, and a
            top-k slot past it counts as crowded. None (the default): no cap, and
            sharing a source is reported as information, not crowding.

    Raises:
        ValueError: naming the argument: ``store`` empty or of another kind;
            ``embedder`` missing; ``questions`` unreadable or malformed; ``k``,
            ``fetch_k``, ``sample`` or ``seed`` out of range.
    """
    return inspect_source(lambda: HaystackSource(store, embedder, k, fetch_k, source),
                          questions, k=k, fetch_k=fetch_k, sample=sample, seed=seed,
                          progress=progress, max_per_group=max_per_group)
