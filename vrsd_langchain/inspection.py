"""``inspect_store``: will the default change anything on this LangChain store?

The store is read as ``DiverseRetriever`` reads it: the query embedded and the store's
top ``fetch_k`` with their vectors (``pipeline.query_vector_steps``,
``fetch_candidates``: the stores' fast paths, else re-embedding under the retriever's
``reembed`` policy). A sample of the store's own passages, for questions taken from the
store when none are given, is listed from Chroma, the in-memory store and FAISS.
The figures, the verdict and the reports: ``vrsd_kit.inspection``.
"""

from __future__ import annotations

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


class LangChainSource:
    """A LangChain store, read as ``DiverseRetriever`` reads it."""

    def __init__(self, retriever: Any, k: int, fetch_k: int, source: SourceSpec,
                 name: str | None = None) -> None:
        from .candidates import unwrap

        self.retriever = retriever
        self.source = source
        self.k, self.fetch_k = k, fetch_k
        self.store = unwrap(retriever.vectorstore)
        self.embeddings = retriever.embeddings or retriever.vectorstore.embeddings
        self.name = name or f"{type(self.store).__name__} (LangChain)"

    def _passage(self, doc: Any) -> Passage:
        meta = doc.metadata
        # a vrsd index chunk: its file and position (its id is a content hash)
        name = f"{meta['source']} #{meta['chunk']}" if {"source", "chunk"} <= set(meta) else None
        return Passage(doc.id, doc.page_content, source_label(self.source, doc, meta), name)

    def prepare(self, questions: list[str]) -> None:
        """The questions embedded ahead into a query cache (the model's own, for the
        ``vrsd`` command's disk-cached embeddings; else one in memory for this call):
        in batches when the model embeds a query as it embeds a document (a
        sentence-transformers model without a query prompt), many times faster on a CPU
        than one ``embed_query`` each; else one by one, as the retriever would."""
        from .embeddings import warm_query_cache

        if getattr(self.embeddings, "query_embedding_store", None) is None:
            from langchain_classic.embeddings import CacheBackedEmbeddings
            from langchain_core.stores import InMemoryByteStore

            self.embeddings = CacheBackedEmbeddings.from_bytes_store(
                self.embeddings, InMemoryByteStore(), query_embedding_cache=True,
                key_encoder="sha256")
        warm_query_cache(self.embeddings, questions)

    def pool(self, question: str, n: int) -> Pool:
        from vrsd_kit.steps import run_steps

        from .candidates import fetch_candidates, query_vector_steps

        r = self.retriever
        query = run_steps(query_vector_steps(self.embeddings, question))
        found = fetch_candidates(self.store, question, query, n, r.search_kwargs,
                                 self.embeddings, r.cache, r.reembed)
        return Pool(query, [self._passage(d) for d in found.documents],
                    np.asarray(found.vectors, dtype=np.float64))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        from langchain_core.documents import Document

        from .stores import FAST_PATHS

        store = self.store
        kind = next((path.name for path in FAST_PATHS if path.is_for(store)), None)
        if kind == "chroma":
            ids = pick(store.get(include=[])["ids"], count, rng)
            got = store.get(ids=ids, include=["documents", "metadatas"]) if ids else {}
            by_id = {i: (t, m) for i, t, m in zip(got.get("ids", []), got.get("documents", []),
                                                   got.get("metadatas", []), strict=True)}
            docs = [Document(id=i, page_content=by_id[i][0], metadata=by_id[i][1] or {})
                    for i in ids if i in by_id and by_id[i][0] is not None]
        elif kind == "in_memory":
            docs = [Document(id=row["id"], page_content=row["text"], metadata=row["metadata"])
                    for row in pick(list(store.store.values()), count, rng)]
        elif kind == "faiss":
            ids = pick(list(store.index_to_docstore_id.values()), count, rng)
            docs = [store.docstore.search(i) for i in ids]
            docs = [d.model_copy(update={"id": d.id or i}) for d, i in zip(docs, ids,
                                                                           strict=True)]
        else:
            raise cannot_list(type(store).__name__)
        return [self._passage(d) for d in docs]


def langchain_source(target: Any, embedder: Any, k: int | None, fetch_k: int | None,
                     source: SourceSpec, name: str | None = None) -> LangChainSource:
    """A ``DiverseRetriever`` as it is (its k, fetch_k, search arguments, embeddings), or
    one built around a ``VectorStore`` with ``embedder`` (default: the store's)."""
    from langchain_core.vectorstores import VectorStore

    from .retriever import DiverseRetriever

    if isinstance(target, DiverseRetriever):
        if embedder is not None:
            raise ValueError("embedder: the retriever has its embeddings already; give "
                             "DiverseRetriever(..., embeddings=...) instead")
        k, fetch_k = default_counts(target.k if k is None else k,
                                    target.fetch_k if fetch_k is None else fetch_k)
        return LangChainSource(target, k, fetch_k, source, name)
    if not isinstance(target, VectorStore):
        raise ValueError(f"store: expected a LangChain VectorStore or a DiverseRetriever, got "
                         f"{type(target).__name__}")
    if embedder is None and target.embeddings is None:
        raise ValueError(
            f"embedder: {type(target).__name__} keeps no embedding model (its .embeddings "
            "is None); pass the one its vectors were made with, "
            "inspect_store(store, embedder=...)")
    k, fetch_k = default_counts(k, fetch_k)
    try:
        retriever = DiverseRetriever(vectorstore=target, embeddings=embedder, k=k, fetch_k=fetch_k)
    except ValueError as exc:
        raise as_embedder(exc) from None
    return LangChainSource(retriever, k, fetch_k, source, name)


def inspect_store(
    store: Any,
    questions: Questions = None,
    *,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    source: SourceSpec = "source",
    embedder: Any = None,
    progress: bool = False,
    max_per_group: int | None = None,
) -> Inspection:
    """Top-k against the default (``vrsd_core.DEFAULT_METHOD``) on a LangChain store's
    candidates for every question: how crowded top-k is and what the default changes.

    Args:
        store: a LangChain ``VectorStore``, or a ``DiverseRetriever`` (its k, fetch_k,
            search arguments and embeddings are used).
        questions: a file (one question a line, or JSON lines with a ``"question"``
            field) or a list of strings. None: ``sample`` of the store's own passages,
            each asked as a question with itself left out of its candidates.
        k, fetch_k: how many passages are kept, and of how many candidates (None: the
            retriever's, else 4 and 20, or k if larger).
        sample, seed: how many passages to ask when no questions are given, drawn at
            random with ``seed``.
        source: where a passage's source is, for the source figures: a metadata field
            (``"source"``: what LangChain's loaders and ``vrsd index`` record) or a
            callable on the Document; None for none.
        embedder: the ``Embeddings`` the store's vectors were made with, when the store
            does not keep it (default: the store's ``.embeddings``).
        progress: a progress bar on stderr (tqdm).
        max_per_group: a per-source cap, as the retriever's (``source`` gives each
            passage's source): the default keeps at most that many per source, and a
            top-k slot past it counts as crowded. None (the default): no cap, and
            sharing a source is reported as information, not crowding.

    Returns:
        An ``Inspection``: per-question figures, totals and the verdict
        (``vrsd_kit.inspection.format_table`` and ``write_html`` present it).

    Raises:
        ValueError: naming the argument: ``store`` empty or not a LangChain store;
            ``embedder`` missing; ``questions`` unreadable or with a blank or
            malformed line; ``k``, ``fetch_k``, ``sample`` or ``seed`` out of range.
    """
    return inspect_source(lambda: langchain_source(store, embedder, k, fetch_k, source),
                          questions, k=k, fetch_k=fetch_k, sample=sample, seed=seed,
                          progress=progress, max_per_group=max_per_group)
