"""Where ``inspect_store`` gets each question's candidates: through the adapters' own
machinery, so the report sees what retrieval sees.

* LangChain (a ``VectorStore``, a ``vrsd_langchain.VRSDRetriever``, or a folder built
  by ``vrsd index``): the query embedded and the store's top ``fetch_k`` with their
  vectors exactly as ``VRSDRetriever`` gets them (``pipeline.query_vector_steps``,
  ``fetch_candidates``: the stores' fast paths, else re-embedding under the
  retriever's ``reembed`` policy).
* LlamaIndex (an index): the index's retriever asked for ``fetch_k`` nodes, their
  vectors and the query's from ``vrsd_llamaindex.VRSDRetriever``'s postprocessor
  (``node.embedding``, the vector store, else the embed model).
* Haystack (an ``InMemoryDocumentStore``, or the embedding retriever of a pipeline):
  what ``VRSDRanker`` takes, the retriever's documents with their embeddings and the
  question embedded by the pipeline's text embedder.

Each source can also list a sample of the store's own passages, for questions taken
from the store when none are given, where the store can list them (Chroma, the
in-memory stores, FAISS, a LlamaIndex docstore, a Haystack document store).

Frameworks are recognised only once their modules are imported (by the caller,
who built the store), so inspecting a LangChain store never imports LlamaIndex.
"""

from __future__ import annotations

import copy
import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from vrsd_core import check_count
from vrsd_kit.contract import check_counts, check_query_vector

from .figures import Passage

DEFAULT_K = 4
"""``k`` when neither the call nor the retriever gives one (``VRSDRetriever``'s)."""
DEFAULT_FETCH_K = 20
"""``fetch_k`` when neither the call nor the retriever gives one (``VRSDRetriever``'s)."""

SourceSpec = str | Callable[[Any], Any] | None
"""Where a passage's source is: a metadata field, a callable on the framework's item
(a Document or a node), or None for no source."""


@dataclass(frozen=True)
class Pool:
    """One question's candidates: the query vector, the passages and their vectors
    (row i belongs to passage i), in the store's order."""

    query: np.ndarray
    passages: list[Passage]
    vectors: np.ndarray


class Source(Protocol):
    """A store as ``inspect_store`` reads it."""

    name: str
    k: int
    fetch_k: int

    def prepare(self, questions: list[str]) -> None:
        """Embed ``questions`` ahead, in batches, where the model allows (else nothing)."""

    def pool(self, question: str, n: int) -> Pool:
        """The store's top ``n`` for ``question``, with their vectors."""

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        """``count`` of the store's passages at random (fewer if it holds fewer);
        ValueError naming ``questions`` when the store cannot list them."""


def _loaded(module: str, name: str) -> type | None:
    """``module.name`` if the module is already imported (else nothing can be one)."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls if isinstance(cls, type) else None


def _is(obj: Any, module: str, name: str) -> bool:
    cls = _loaded(module, name)
    return cls is not None and isinstance(obj, cls)


def _label(spec: SourceSpec, item: Any, metadata: Mapping[str, Any]) -> str | None:
    if spec is None:
        return None
    value = spec(item) if callable(spec) else metadata.get(spec)
    return None if value is None else str(value)


def _cannot_list(what: str) -> ValueError:
    return ValueError(f"questions: {what} cannot list its passages, so there are none to "
                      "sample; give questions (a file or a list)")


def _as_embedder(exc: ValueError) -> ValueError:
    """An adapter's error about its embedding argument, re-worded to name ``embedder``
    (inspect_store's argument for the model)."""
    name, sep, rest = str(exc).partition(":")
    if sep and name in ("embeddings", "embed_model"):
        return ValueError(f"embedder:{rest}")
    return exc


def default_counts(k: int | None, fetch_k: int | None, fetch_default: int = DEFAULT_FETCH_K
                   ) -> tuple[int, int]:
    """(k, fetch_k) with the retrievers' defaults filled in (k 4, fetch_k 20 or k if
    larger), checked (ValueError naming the one at fault)."""
    k = check_count(DEFAULT_K if k is None else k, "k", minimum=1)
    return check_counts(k, max(fetch_default, k) if fetch_k is None else fetch_k, minimum=1)


def _pick(items: Sequence[Any], count: int, rng: np.random.Generator) -> list[Any]:
    """``count`` of ``items`` at random, in the store's order."""
    if count >= len(items):
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]


# --- LangChain -------------------------------------------------------------------------


class LangChainSource:
    """A LangChain store, read as ``VRSDRetriever`` reads it."""

    def __init__(self, retriever: Any, k: int, fetch_k: int, source: SourceSpec,
                 name: str | None = None) -> None:
        from vrsd_langchain.candidates import unwrap

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
        return Passage(doc.id, doc.page_content, _label(self.source, doc, meta), name)

    def prepare(self, questions: list[str]) -> None:
        """The questions embedded ahead into a query cache (the model's own, for the
        ``vrsd`` command's disk-cached embeddings; else one in memory for this call):
        in batches when the model embeds a query as it embeds a document (a
        sentence-transformers model without a query prompt), many times faster on a CPU
        than one ``embed_query`` each; else one by one, as the retriever would."""
        from ._eval import warm_query_cache

        if getattr(self.embeddings, "query_embedding_store", None) is None:
            from langchain_classic.embeddings import CacheBackedEmbeddings
            from langchain_core.stores import InMemoryByteStore

            self.embeddings = CacheBackedEmbeddings.from_bytes_store(
                self.embeddings, InMemoryByteStore(), query_embedding_cache=True,
                key_encoder="sha256")
        warm_query_cache(self.embeddings, questions)

    def pool(self, question: str, n: int) -> Pool:
        from vrsd_kit.steps import run_steps
        from vrsd_langchain import fetch_candidates
        from vrsd_langchain.pipeline import query_vector_steps

        r = self.retriever
        query = run_steps(query_vector_steps(self.embeddings, question))
        found = fetch_candidates(self.store, question, query, n, r.search_kwargs,
                                 self.embeddings, r.cache, r.reembed)
        return Pool(query, [self._passage(d) for d in found.documents],
                    np.asarray(found.vectors, dtype=np.float64))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        from langchain_core.documents import Document

        from vrsd_langchain.stores import FAST_PATHS

        store = self.store
        kind = next((path.name for path in FAST_PATHS if path.is_for(store)), None)
        if kind == "chroma":
            ids = _pick(store.get(include=[])["ids"], count, rng)
            got = store.get(ids=ids, include=["documents", "metadatas"]) if ids else {}
            by_id = {i: (t, m) for i, t, m in zip(got.get("ids", []), got.get("documents", []),
                                                   got.get("metadatas", []), strict=True)}
            docs = [Document(id=i, page_content=by_id[i][0], metadata=by_id[i][1] or {})
                    for i in ids if i in by_id and by_id[i][0] is not None]
        elif kind == "in_memory":
            docs = [Document(id=row["id"], page_content=row["text"], metadata=row["metadata"])
                    for row in _pick(list(store.store.values()), count, rng)]
        elif kind == "faiss":
            ids = _pick(list(store.index_to_docstore_id.values()), count, rng)
            docs = [store.docstore.search(i) for i in ids]
            docs = [d.model_copy(update={"id": d.id or i}) for d, i in zip(docs, ids,
                                                                           strict=True)]
        else:
            raise _cannot_list(type(store).__name__)
        return [self._passage(d) for d in docs]


def langchain_source(target: Any, embedder: Any, k: int | None, fetch_k: int | None,
                     source: SourceSpec, name: str | None = None) -> LangChainSource:
    """A ``VRSDRetriever`` as it is (its k, fetch_k, search arguments, embeddings), or
    one built around a ``VectorStore`` with ``embedder`` (default: the store's)."""
    from vrsd_langchain import VRSDRetriever

    if isinstance(target, VRSDRetriever):
        if embedder is not None:
            raise ValueError("embedder: the retriever has its embeddings already; give "
                             "VRSDRetriever(..., embeddings=...) instead")
        k, fetch_k = default_counts(target.k if k is None else k,
                                    target.fetch_k if fetch_k is None else fetch_k)
        return LangChainSource(target, k, fetch_k, source, name)
    if embedder is None and target.embeddings is None:
        raise ValueError(
            f"embedder: {type(target).__name__} keeps no embedding model (its .embeddings "
            "is None); pass the one its vectors were made with, "
            "inspect_store(store, embedder=...)")
    k, fetch_k = default_counts(k, fetch_k)
    try:
        retriever = VRSDRetriever(vectorstore=target, embeddings=embedder, k=k, fetch_k=fetch_k)
    except ValueError as exc:
        raise _as_embedder(exc) from None
    return LangChainSource(retriever, k, fetch_k, source, name)


def index_folder_source(index_dir: str | os.PathLike[str], k: int | None,
                        fetch_k: int | None, source: SourceSpec,
                        cache_dir: str | os.PathLike[str] | None = None) -> LangChainSource:
    """A folder built by ``vrsd index``: its Chroma store and the model it was built with."""
    from ..indexing import open_index

    store = open_index(index_dir, cache_dir)
    return langchain_source(store, None, k, fetch_k, source,
                            name=f"the index at {index_dir} (Chroma)")


# --- LlamaIndex ------------------------------------------------------------------------


class LlamaIndexSource:
    """A LlamaIndex index, read as ``vrsd_llamaindex.VRSDRetriever`` reads it."""

    def __init__(self, index: Any, embedder: Any, k: int | None, fetch_k: int | None,
                 source: SourceSpec) -> None:
        from vrsd_llamaindex import VRSDRetriever

        k, fetch_k = default_counts(k, fetch_k)
        try:
            retriever = VRSDRetriever(index.as_retriever(), top_n=k, fetch_k=fetch_k,
                                      embed_model=embedder)
            retriever.postprocessor.resolved_embed_model()
        except ValueError as exc:
            raise _as_embedder(exc) from None
        self.index, self.retriever = index, retriever
        self.post = retriever.postprocessor
        self.k, self.fetch_k = retriever.top_n, retriever.fetch_k
        self.source = source
        self.name = f"{type(index).__name__} over {type(index.vector_store).__name__} (LlamaIndex)"

    def _passage(self, node: Any) -> Passage:
        return Passage(node.node_id, node.get_content(), _label(self.source, node, node.metadata))

    def prepare(self, questions: list[str]) -> None:
        return None  # LlamaIndex embeds queries one at a time

    def pool(self, question: str, n: int) -> Pool:
        from llama_index.core.schema import QueryBundle

        query = check_query_vector(self.post.query_vector(QueryBundle(question)))
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
                raise _cannot_list(type(self.index.vector_store).__name__) from None
        return [self._passage(node) for node in _pick(nodes, count, rng)]


# --- Haystack --------------------------------------------------------------------------


def _takes(component: Any, argument: str) -> bool:
    run = getattr(component, "run", None)
    try:
        return callable(run) and argument in inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False


class HaystackSource:
    """A Haystack embedding retriever's documents with their embeddings, the question
    embedded by the pipeline's text embedder: what ``VRSDRanker`` takes."""

    def __init__(self, target: Any, embedder: Any, k: int | None, fetch_k: int | None,
                 source: SourceSpec) -> None:
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
        elif _is(target, "haystack.document_stores.in_memory.document_store",
                 "InMemoryDocumentStore"):
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
        return Passage(doc.id, doc.content or "", _label(self.source, doc, doc.meta))

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
                "as VRSDRanker does")
        vectors = np.asarray([d.embedding for d in docs], dtype=np.float64)
        return Pool(query, [self._passage(d) for d in docs],
                    vectors.reshape(len(docs), -1) if docs else np.zeros((0, query.size)))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        if self.store is None or not hasattr(self.store, "filter_documents"):
            raise _cannot_list(type(self.retriever).__name__)
        docs = [d for d in self.store.filter_documents() if d.content]
        return [self._passage(d) for d in _pick(docs, count, rng)]


# --- which one -------------------------------------------------------------------------


def source_for(store: Any, embedder: Any, k: int | None, fetch_k: int | None,
               source: SourceSpec, cache_dir: str | os.PathLike[str] | None = None) -> Source:
    """The source reading ``store`` (see the module doc); ValueError naming ``store``
    for anything else."""
    if isinstance(store, str | os.PathLike):
        if embedder is not None:
            raise ValueError("embedder: a vrsd index folder records its model; give none")
        return index_folder_source(store, k, fetch_k, source, cache_dir)
    if (_is(store, "vrsd_langchain.retriever", "VRSDRetriever")
            or _is(store, "langchain_core.vectorstores.base", "VectorStore")):
        return langchain_source(store, embedder, k, fetch_k, source)
    if _is(store, "llama_index.core.indices.base", "BaseIndex"):
        return LlamaIndexSource(store, embedder, k, fetch_k, source)
    if "haystack" in sys.modules and (_takes(store, "query_embedding")
                                      or hasattr(store, "filter_documents")):
        return HaystackSource(store, embedder, k, fetch_k, source)
    raise ValueError(
        f"store: expected a vrsd index folder, a LangChain VectorStore or VRSDRetriever, a "
        f"LlamaIndex index, or a Haystack InMemoryDocumentStore or embedding retriever; got "
        f"{type(store).__name__}")
