"""The n candidates of a query, each a Document with its vector, from any vector store.

One pipeline for every store: query vector -> n candidates (Document + vector)
-> ``vrsd_core.select`` -> Documents. Only the middle step depends on the
store:

* fast paths read the vectors the store already keeps (no re-embedding):
  ``InMemoryVectorStore`` (its ``store`` dict), FAISS (``index.reconstruct``),
  Chroma (``collection.query(include=[..., "embeddings"])``) and Qdrant
  (``query_points(with_vectors=...)``, dense mode);
* any other store: ``similarity_search_by_vector`` (else ``similarity_search``,
  which embeds the query a second time inside the store), then the candidates'
  ``page_content`` is embedded with the given embeddings through an
  ``EmbeddingCache``.

Each fast path searches the way its store does (same candidates, same order)
and says which search arguments it understands; anything else is a
``ValueError`` rather than silently ignored. Fast paths are found by class,
without importing any store package: a store whose package was never imported
cannot be an instance of it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables.config import run_in_executor
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

from .cache import EmbeddingCache

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

@dataclass(frozen=True)
class Candidates:
    """The store's top-n for a query, in the store's order.

    Attributes:
        documents: the candidate Documents as the store returned them (not yet copied).
        vectors: (n, d) their vectors, row i belonging to ``documents[i]``; None when
            a fast path found the documents but the store could not hand out their
            vectors (e.g. a FAISS index without reconstruction): they are then
            re-embedded like the fallback's.
    """

    documents: list[Document]
    vectors: np.ndarray | None

    def __len__(self) -> int:
        return len(self.documents)


def _empty() -> Candidates:
    return Candidates([], np.zeros((0, 0)))


def _dimension_error(query: Sequence[float], stored: int, store: str) -> ValueError | None:
    """A ValueError naming ``embeddings`` if the query vector's length is not ``stored``."""
    if len(query) == stored:
        return None
    return ValueError(
        f"embeddings: embed_query returned a {len(query)}-d vector but {store}'s "
        f"vectors are {stored}-d; use the model the store was built with"
    )


def _check_dimension(query: Sequence[float], stored: int, store: str) -> None:
    err = _dimension_error(query, stored, store)
    if err is not None:
        raise err


@dataclass(frozen=True)
class FastPath:
    """How to read candidates and their stored vectors from one kind of store."""

    name: str
    module: str
    class_name: str
    search_kwargs: tuple[str, ...]
    fetch: Callable[[Any, list[float], int, dict[str, Any]], Candidates]
    applies: Callable[[Any], bool] = lambda store: True
    check: Callable[[Mapping[str, Any]], None] = lambda kwargs: None
    """Raises ValueError for search argument values the store would reject."""

    def store_class(self) -> type | None:
        mod = sys.modules.get(self.module)
        return getattr(mod, self.class_name, None) if mod is not None else None


# --- InMemoryVectorStore -------------------------------------------------------


def _check_in_memory(kwargs: Mapping[str, Any]) -> None:
    flt = kwargs.get("filter")
    if flt is not None and not callable(flt):
        raise ValueError(
            "filter: InMemoryVectorStore filters with a callable (Document) -> bool, "
            f"got {type(flt).__name__}"
        )


def _fetch_in_memory(
    store: InMemoryVectorStore, query: list[float], n: int, kwargs: dict[str, Any]
) -> Candidates:
    flt = kwargs.get("filter")
    first = next(iter(store.store.values()), None)
    if first is not None:  # else langchain_core's "Number of columns in X and Y must be ..."
        _check_dimension(query, len(first["vector"]), "InMemoryVectorStore")
    # The store's own search; its third element is the stored vector.
    hits = store._similarity_search_with_score_by_vector(embedding=query, k=n, filter=flt)
    if not hits:
        return _empty()
    return Candidates([doc for doc, _, _ in hits], np.asarray([vec for _, _, vec in hits]))


# --- FAISS (langchain-community) -----------------------------------------------


def _fetch_faiss(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    index = store.index
    total = int(index.ntotal)
    if total == 0:
        return _empty()
    _check_dimension(query, int(index.d), "FAISS")  # else an AssertionError from faiss
    q = np.asarray([query], dtype=np.float32)
    if store._normalize_L2:
        import faiss

        faiss.normalize_L2(q)
    flt = kwargs.get("filter")
    keep = store._create_filter_func(flt) if flt is not None else None
    # Unfiltered: the index's top-n. Filtered: the top-n of the documents that
    # pass, widening the search until n pass or the index is exhausted (the
    # stock search stops at a fixed fetch_k and may return fewer).
    width = min(n, total) if keep is None else min(total, max(4 * n, 64))
    while True:
        _, found = index.search(q, width)
        positions = found[0][found[0] >= 0]
        docs: list[Document] = []
        kept: list[int] = []
        for pos in positions.tolist():
            doc_id = store.index_to_docstore_id[pos]
            doc = store.docstore.search(doc_id)
            if not isinstance(doc, Document):
                raise ValueError(f"vectorstore: FAISS docstore has no document for id {doc_id!r}")
            if keep is None or keep(doc.metadata):
                docs.append(doc)
                kept.append(pos)
                if len(docs) == n:
                    break
        if len(docs) == n or width >= total or keep is None:
            break
        width = min(total, 4 * width)
    if not docs:
        return _empty()
    try:
        vectors = np.asarray(index.reconstruct_batch(np.asarray(kept, dtype=np.int64)))
    except RuntimeError:  # e.g. an IVF index without a direct map cannot reconstruct
        return Candidates(docs, None)
    return Candidates(docs, vectors)


# --- Chroma (langchain-chroma) -------------------------------------------------


def _check_chroma(kwargs: Mapping[str, Any]) -> None:
    if "filter" in kwargs and "where" in kwargs:
        raise ValueError("filter: give either 'filter' or 'where' (the same Chroma filter)")


# Chroma's n_results is a u32 (the server refuses more, the embedded client overflows
# past a C long); a fetch_k beyond any collection's size changes nothing, so cap it.
_CHROMA_MAX_RESULTS = 2**32 - 1


def _chroma_rejection(exc: Exception, query: list[float], kwargs: Mapping[str, Any]
                      ) -> ValueError | None:
    """A ValueError naming the argument Chroma rejected, or None if it is neither.

    Chroma checks the query's dimension and the filters only when it runs the
    query (the server, or the embedded client's Rust core) and answers with an
    ``InvalidArgumentError`` (the client's own filter checks raise a ValueError);
    neither names the argument. Transport and other errors are not handled here.
    """
    text = str(exc)
    if "dimension" in text.lower():
        return ValueError(
            f"embeddings: embed_query returned a {len(query)}-d vector that the Chroma "
            f"collection refuses ({text}); use the model the store was built with"
        )
    given = [name for name in ("filter", "where", "where_document") if name in kwargs]
    if not given:
        return None
    name = given[0]
    if "where_document" in given and ("document" in text.lower() or len(given) == 1):
        name = "where_document"
    return ValueError(f"{name}: Chroma refused the filter {kwargs[name]!r}: {text}")


def _fetch_chroma(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    from chromadb.errors import InvalidArgumentError

    _check_chroma(kwargs)
    where = kwargs.get("filter", kwargs.get("where"))
    # One round trip: an empty collection answers with empty lists.
    try:
        res = store._collection.query(
            query_embeddings=[query],
            n_results=min(n, _CHROMA_MAX_RESULTS),
            where=where,
            where_document=kwargs.get("where_document"),
            include=["embeddings", "documents", "metadatas", "distances"],
        )
    except (InvalidArgumentError, ValueError) as exc:
        err = _chroma_rejection(exc, query, {k: v for k, v in kwargs.items() if v is not None})
        if err is None:
            raise
        raise err from exc
    texts = res["documents"][0]
    # Rows without text are dropped as langchain-chroma drops them, with their vectors.
    rows = [i for i, text in enumerate(texts) if text is not None]
    if not rows:
        return _empty()
    metadatas, ids = res["metadatas"][0], res["ids"][0]
    docs = [Document(page_content=texts[i], metadata=metadatas[i] or {}, id=ids[i]) for i in rows]
    vectors = np.asarray(res["embeddings"][0])[rows]
    return Candidates(docs, vectors)


# --- Qdrant (langchain-qdrant) -------------------------------------------------


def _qdrant_dense(store: Any) -> bool:
    mode = getattr(store, "retrieval_mode", None)
    return (
        str(getattr(mode, "value", mode)) == "dense"
        and _has(store, "client", "_document_from_point", "vector_name")
    )


def _has(store: Any, *names: str) -> bool:
    """The store still has the internals a fast path reads (else: the generic fallback)."""
    return all(hasattr(store, name) for name in names)


def _qdrant_dimension(store: Any) -> int | None:
    """The collection's vector size (one more round trip), or None if unknown."""
    try:
        vectors = store.client.get_collection(store.collection_name).config.params.vectors
    except Exception:  # noqa: BLE001 - only used to explain another error
        return None
    if isinstance(vectors, dict):
        vectors = vectors.get(store.vector_name)
    size = getattr(vectors, "size", None)
    return size if isinstance(size, int) else None


def _fetch_qdrant(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    try:
        return _query_qdrant(store, query, n, kwargs)
    except Exception as exc:
        # Qdrant checks the dimension during the query (local mode: a numpy shape
        # error; a server: UnexpectedResponse). Only then ask for the collection's size.
        size = _qdrant_dimension(store)
        err = None if size is None else _dimension_error(query, size, "the Qdrant collection")
        if err is None:
            raise
        raise err from exc


def _query_qdrant(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    name = store.vector_name
    points = store.client.query_points(
        collection_name=store.collection_name,
        query=query,
        using=name or None,
        query_filter=kwargs.get("filter"),
        search_params=kwargs.get("search_params"),
        score_threshold=kwargs.get("score_threshold"),
        consistency=kwargs.get("consistency"),
        limit=n,
        with_payload=True,
        with_vectors=[name] if name else True,
    ).points
    if not points:
        return _empty()
    docs = [
        store._document_from_point(
            p, store.collection_name, store.content_payload_key, store.metadata_payload_key
        )
        for p in points
    ]
    raw = [p.vector[name] if isinstance(p.vector, dict) else p.vector for p in points]
    return Candidates(docs, np.asarray(raw, dtype=np.float64))


FAST_PATHS: tuple[FastPath, ...] = (
    FastPath(
        "in_memory", "langchain_core.vectorstores.in_memory", "InMemoryVectorStore",
        ("filter",), _fetch_in_memory, check=_check_in_memory,
        applies=lambda s: _has(s, "_similarity_search_with_score_by_vector"),
    ),
    FastPath(
        "faiss", "langchain_community.vectorstores.faiss", "FAISS", ("filter",), _fetch_faiss,
        applies=lambda s: _has(s, "index", "docstore", "index_to_docstore_id",
                               "_create_filter_func", "_normalize_L2"),
    ),
    FastPath(
        "chroma", "langchain_chroma.vectorstores", "Chroma",
        ("filter", "where", "where_document"), _fetch_chroma, check=_check_chroma,
        applies=lambda s: _has(s, "_collection"),
    ),
    FastPath(
        "qdrant", "langchain_qdrant.qdrant", "QdrantVectorStore",
        ("filter", "search_params", "score_threshold", "consistency"), _fetch_qdrant,
        applies=_qdrant_dense,
    ),
)


def unwrap(store: VectorStore) -> VectorStore:
    """The store that actually holds the vectors (``DiverseVectorStore`` unwrapped)."""
    inner = getattr(store, "wrapped_vectorstore", None)
    while isinstance(inner, VectorStore):
        store = inner
        inner = getattr(store, "wrapped_vectorstore", None)
    return store


def fast_path_for(store: VectorStore) -> FastPath | None:
    """The fast path for ``store`` (after unwrapping), or None for the generic fallback."""
    store = unwrap(store)
    for path in FAST_PATHS:
        cls = path.store_class()
        if cls is not None and isinstance(store, cls) and path.applies(store):
            return path
    return None


def check_search_kwargs(store: VectorStore, kwargs: Mapping[str, Any], hint: str = "") -> None:
    """ValueError if a fast path would not understand one of ``kwargs`` (names and, where
    cheap to check, values).

    The generic fallback passes search arguments to the store unchecked (the
    store's own search decides). ``hint`` is appended to the message (e.g. the
    method's options, when the argument may have been meant for the method).
    """
    path = fast_path_for(store)
    if path is None:
        return
    unknown = sorted(set(kwargs) - set(path.search_kwargs))
    if unknown:
        name = type(unwrap(store)).__name__
        raise ValueError(
            f"{unknown[0]}: not a search argument of {name} "
            f"(accepted: {', '.join(path.search_kwargs)}){hint}"
        )
    path.check(kwargs)


def fetch_candidates(
    store: VectorStore,
    query: str,
    query_vector: np.ndarray,
    n: int,
    search_kwargs: Mapping[str, Any],
    embeddings: Embeddings,
    cache: EmbeddingCache,
) -> Candidates:
    """The store's top-n for ``query_vector`` with their vectors (see the module doc).

    ``query_vector`` is the checked float64 array (``pipeline.check_query_vector``);
    stores get it as a list of floats. ``query`` (the text) is used only by stores
    that cannot search by vector.
    """
    store = unwrap(store)
    qlist = query_vector.tolist()
    kwargs = dict(search_kwargs)
    path = fast_path_for(store)
    if path is not None:
        found = path.fetch(store, qlist, n, kwargs)
        if found.vectors is not None or not found.documents:
            return found
        texts = [d.page_content for d in found.documents]
        return Candidates(found.documents, cache.embed_documents(embeddings, texts))
    try:
        docs = store.similarity_search_by_vector(qlist, k=n, **kwargs)
    except NotImplementedError:
        docs = store.similarity_search(query, k=n, **kwargs)
    docs = list(docs)[:n]
    if not docs:
        return _empty()
    vectors = cache.embed_documents(embeddings, [d.page_content for d in docs])
    return Candidates(docs, vectors)


async def afetch_candidates(
    store: VectorStore,
    query: str,
    query_vector: np.ndarray,
    n: int,
    search_kwargs: Mapping[str, Any],
    embeddings: Embeddings,
    cache: EmbeddingCache,
) -> Candidates:
    """Async ``fetch_candidates``: the store's async search and ``aembed_documents``.

    Fast paths call synchronous clients, so they run in the default executor.
    """
    store = unwrap(store)
    qlist = query_vector.tolist()
    kwargs = dict(search_kwargs)
    path = fast_path_for(store)
    if path is not None:
        found = await run_in_executor(
            None, path.fetch, store, qlist, n, kwargs
        )
        if found.vectors is not None or not found.documents:
            return found
        texts = [d.page_content for d in found.documents]
        vectors = await cache.aembed_documents(embeddings, texts)
        return Candidates(found.documents, vectors)
    try:
        docs = await store.asimilarity_search_by_vector(qlist, k=n, **kwargs)
    except NotImplementedError:
        docs = await store.asimilarity_search(query, k=n, **kwargs)
    docs = list(docs)[:n]
    if not docs:
        return _empty()
    vectors = await cache.aembed_documents(embeddings, [d.page_content for d in docs])
    return Candidates(docs, vectors)
