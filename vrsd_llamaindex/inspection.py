"""``inspect_index``: will the default change anything on this LlamaIndex index?

The index's retriever is asked for ``fetch_k`` nodes; their vectors and the query's
come from ``vrsd_llamaindex.DiverseRerankRetriever``'s postprocessor (``node.embedding``, the
vector store, else the embed model). A sample of the index's own nodes, for questions
taken from it when none are given, is listed from its docstore (or a vector store
that keeps the text). The figures, the verdict and the reports: ``vrsd_kit.inspection``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from vrsd_kit.inspection import DEFAULT_SAMPLE, Inspection, Passage, Pool, SourceSpec
from vrsd_kit.inspection.run import (
    Questions,
    as_embedder,
    cannot_list,
    default_counts,
    inspect_source,
    pick,
    source_label,
)


class LlamaIndexSource:
    """A LlamaIndex index, read as ``vrsd_llamaindex.DiverseRerankRetriever`` reads it."""

    def __init__(self, index: Any, embedder: Any, k: int | None, fetch_k: int | None,
                 source: SourceSpec) -> None:
        from llama_index.core.indices.base import BaseIndex

        from .retriever import DiverseRerankRetriever

        if not isinstance(index, BaseIndex):
            raise ValueError(f"index: expected a LlamaIndex index, got {type(index).__name__}")
        k, fetch_k = default_counts(k, fetch_k)
        try:
            retriever = DiverseRerankRetriever(index.as_retriever(), top_n=k, fetch_k=fetch_k,
                                      embed_model=embedder)
            retriever.postprocessor.resolved_embed_model()
        except ValueError as exc:
            raise as_embedder(exc) from None
        self.index, self.retriever = index, retriever
        self.post = retriever.postprocessor
        self.k, self.fetch_k = retriever.top_n, retriever.fetch_k
        self.source = source
        self.name = f"{type(index).__name__} over {type(index.vector_store).__name__} (LlamaIndex)"

    def _passage(self, node: Any) -> Passage:
        return Passage(node.node_id, node.get_content(),
                       source_label(self.source, node, node.metadata))

    def prepare(self, questions: list[str]) -> None:
        return None  # LlamaIndex embeds queries one at a time

    def pool(self, question: str, n: int) -> Pool:
        from llama_index.core.schema import QueryBundle

        query = self.post.query_vector(QueryBundle(question))  # checked
        fetcher = copy.copy(self.retriever.retriever)
        fetcher.similarity_top_k = n
        nodes = fetcher.retrieve(QueryBundle(question, embedding=query.tolist()))
        if not nodes:
            return Pool(query, [], np.zeros((0, query.size)))
        vectors = np.asarray(self.post.candidate_vectors(nodes), dtype=np.float64)
        return Pool(query, [self._passage(n.node) for n in nodes], vectors)

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        nodes = list(self.index.docstore.docs.values())
        if not nodes:  # a store that keeps the text itself (the docstore stays empty)
            try:
                nodes = list(self.index.vector_store.get_nodes())
            except (NotImplementedError, ValueError, TypeError):
                raise cannot_list(type(self.index.vector_store).__name__) from None
        return [self._passage(node) for node in pick(nodes, count, rng)]


def inspect_index(
    index: Any,
    questions: Questions = None,
    *,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    source: SourceSpec = "file_path",
    embedder: Any = None,
    progress: bool = False,
    max_per_group: int | None = None,
) -> Inspection:
    """Top-k against the default (``vrsd_core.DEFAULT_METHOD``) on a LlamaIndex index's
    candidates for every question: how crowded top-k is and what the default changes.

    Args:
        index: a LlamaIndex index (``VectorStoreIndex``, ...).
        questions: a file (one question a line, or JSON lines with a ``"question"``
            field) or a list of strings. None: ``sample`` of the index's own nodes, each
            asked as a question with itself left out of its candidates.
        k, fetch_k: how many nodes are kept, and of how many candidates (None: 4 and 20,
            or k if larger).
        sample, seed: how many nodes to ask when no questions are given, drawn at random
            with ``seed``.
        source: where a node's source is: a metadata field (``"file_path"``: what
            ``SimpleDirectoryReader`` records) or a callable on the node; None for none.
        embedder: the ``BaseEmbedding`` the index's vectors were made with (default: the
            index's, else ``Settings.embed_model``).
        progress: a progress bar on stderr (tqdm).
        max_per_group: a per-source cap, as the retriever's (``source`` gives each
            passage's source): the default keeps at most that many per source, and a
            top-k slot past it counts as crowded. None (the default): no cap, and
            sharing a source is reported as information, not crowding.

    Raises:
        ValueError: naming the argument: ``index`` empty or not an index; ``embedder``
            missing; ``questions`` unreadable or malformed; ``k``, ``fetch_k``,
            ``sample`` or ``seed`` out of range.
    """
    return inspect_source(lambda: LlamaIndexSource(index, embedder, k, fetch_k, source),
                          questions, k=k, fetch_k=fetch_k, sample=sample, seed=seed,
                          progress=progress, max_per_group=max_per_group)
