"""The n candidates of a query, each a Document with its vector, from any vector store,
and how the one rerank body reads them.

One pipeline for every store and every LangChain entry point: query -> query vector
(embedded once, ``query_vector_steps``) -> n candidates (Document + vector,
``candidate_steps``) -> ``vrsd_kit.rerank.rerank`` through ``DocumentView`` (``choose``)
-> annotated Document copies, in selection order. The I/O is one body of steps for the
sync and the async entry point (``fetch_steps``, ``vrsd_kit.steps``). Only the middle
step depends on the store:

* fast paths read the vectors the store already keeps (no re-embedding): one
  module per store in ``stores/``, one record per store in ``stores.FAST_PATHS``
  (the README's store table is checked against it);
* any other store: ``similarity_search_by_vector`` (else ``similarity_search``,
  which embeds the query a second time inside the store), then the candidates'
  ``page_content`` is embedded with the given embeddings through an
  ``EmbeddingCache``, under the caller's ``reembed`` policy (``"warn"``: one
  ``ReembeddingWarning`` per store class naming the reason; ``"allow"``;
  ``"refuse"``: a ValueError, see ``vrsd_kit.stores.check_reembedding``).

Each fast path searches the way its store does (same candidates, same order)
and says which search arguments it understands; anything else is a
``ValueError`` rather than silently ignored. Fast paths are found by class,
without importing any store package: a store whose package was never imported
cannot be an instance of it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables.config import run_in_executor
from langchain_core.vectorstores import VectorStore
from numpy.typing import NDArray

from vrsd_kit.rerank import ItemView, check_query_text, check_query_vector, rerank
from vrsd_kit.settings import Settings, did_you_mean
from vrsd_kit.steps import Steps, call, run_steps
from vrsd_kit.stores import Reembed, check_reembed, check_reembedding

from .cache import EmbeddingCache
from .stores import FAST_PATHS, Candidates, FastPath, empty

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["Candidates", "DocumentView", "candidate_steps", "check_fallback",
           "check_reembed_policy", "check_search_kwargs", "choose", "fast_path_for",
           "fetch_by_vector_steps", "fetch_candidates", "fetch_steps", "query_vector_steps",
           "reembedding_reason", "unwrap"]


def unwrap(store: VectorStore) -> VectorStore:
    """The store that actually holds the vectors (``DiverseVectorStore`` unwrapped)."""
    inner = getattr(store, "wrapped_vectorstore", None)
    while isinstance(inner, VectorStore):
        store = inner
        inner = getattr(store, "wrapped_vectorstore", None)
    return store


_PATH_OF_CLASS: dict[type, FastPath | None] = {}  # a store class's record, found once


def fast_path_for(store: VectorStore) -> FastPath | None:
    """The fast path for ``store`` (after unwrapping), or None for the generic fallback."""
    store = unwrap(store)
    kind = type(store)
    if kind not in _PATH_OF_CLASS:
        _PATH_OF_CLASS[kind] = next((p for p in FAST_PATHS if p.is_for(store)), None)
    path = _PATH_OF_CLASS[kind]
    return path if path is not None and path.applies(store) else None


def reembedding_reason(store: VectorStore) -> str:
    """Why the candidates of ``store`` (after unwrapping) have to be embedded again."""
    store = unwrap(store)
    for path in FAST_PATHS:
        if path.is_for(store):
            if not path.applies(store):
                why = path.limits or "the store internals it reads are missing"
                return (f"its {path.name!r} fast path does not apply to it ({why}; tested "
                        f"with {path.client} {path.tested})")
            return "the store returned the candidates without their vectors"
    return "no fast path is registered for its class (vrsd_langchain.stores.FAST_PATHS)"


def check_fallback(store: VectorStore, count: int, reembed: Reembed) -> None:
    """Apply the ``reembed`` policy before ``count`` candidates of ``store`` are embedded."""
    name = type(unwrap(store)).__name__
    check_reembedding(reembed, name, reembedding_reason(store), count)


def check_reembed_policy(store: VectorStore, reembed: Any, count: int) -> Reembed:
    """``reembed`` checked; ``"refuse"`` on a store without a fast path is refused now,
    before any query (a fast path that finds no vectors is refused when it does)."""
    reembed = check_reembed(reembed)
    if reembed == "refuse" and fast_path_for(store) is None:
        check_fallback(store, count, reembed)
    return reembed


# A store without a fast path gets its search arguments unchecked; a name this close
# (difflib's ratio) to one of vrsd's own keywords is a typo, not the store's argument.
TYPO_CUTOFF = 0.8


def check_search_kwargs(store: VectorStore, kwargs: Mapping[str, Any],
                        own: Collection[str] = (), hint: str = "") -> None:
    """ValueError if a fast path would not understand one of ``kwargs`` (names and, where
    cheap to check, values), naming the closest accepted name.

    ``own`` are vrsd's keywords for the call (``k``, ``fetch_k``, the method's options,
    ...), suggested beside the store's. The generic fallback passes search arguments to
    the store's own search unchecked, as LangChain's ``VectorStoreRetriever`` does,
    except a name within a typo of one of ``own`` (``fetchk``), which is refused.
    ``hint`` is appended to the message (e.g. the method's options, when the argument
    may have been meant for the method).
    """
    name = type(unwrap(store)).__name__
    path = fast_path_for(store)
    if path is None:
        for key in sorted(kwargs):
            typo = did_you_mean(key, set(own) - {key}, cutoff=TYPO_CUTOFF)
            if typo:
                raise ValueError(
                    f"{key}: unknown keyword{typo} ({name} has no fast path, so its search "
                    "arguments go to its own search unchecked; this one looks misspelt)"
                )
        return
    unknown = sorted(set(kwargs) - set(path.search_kwargs))
    if unknown:
        raise ValueError(
            f"{unknown[0]}: not a search argument of {name} "
            f"(accepted: {', '.join(path.search_kwargs)}){hint}"
            f"{did_you_mean(unknown[0], {*path.search_kwargs, *own} - {unknown[0]})}"
        )
    path.check(kwargs)


def candidate_steps(
    store: VectorStore,
    query: str,
    query_vector: NDArray[np.float64],
    n: int,
    search_kwargs: Mapping[str, Any],
    embeddings: Embeddings,
    cache: EmbeddingCache,
    reembed: Reembed = "warn",
) -> Steps[Candidates]:
    """The store's top-n for ``query_vector`` with their vectors (see the module doc), as
    steps (``vrsd_kit.steps``): ``fetch_candidates`` and ``pipeline.fetch_steps`` run them.

    ``query_vector`` is the checked float64 array (``vrsd_kit.rerank.check_query_vector``);
    stores get it as a list of floats. ``query`` (the text) is used only by stores
    that cannot search by vector. Fast paths call synchronous clients, so the async
    run gives them to the default executor.
    """
    store = unwrap(store)
    qlist = query_vector.tolist()
    kwargs = dict(search_kwargs)
    path = fast_path_for(store)
    if path is not None:
        found = yield call(path.fetch, lambda *args: run_in_executor(None, path.fetch, *args),
                          store, qlist, n, kwargs)
        if found.vectors is not None or not found.documents:
            return found
        docs = found.documents
    else:
        try:
            docs = yield call(store.similarity_search_by_vector,
                              store.asimilarity_search_by_vector, qlist, k=n, **kwargs)
        except NotImplementedError:
            docs = yield call(store.similarity_search, store.asimilarity_search,
                              query, k=n, **kwargs)
        docs = list(docs)[:n]
        if not docs:
            return empty()
    check_fallback(store, len(docs), reembed)
    vectors = yield from cache.embed_steps(embeddings, [d.page_content for d in docs])
    return Candidates(docs, vectors)


def fetch_candidates(
    store: VectorStore,
    query: str,
    query_vector: NDArray[np.float64],
    n: int,
    search_kwargs: Mapping[str, Any],
    embeddings: Embeddings,
    cache: EmbeddingCache,
    reembed: Reembed = "warn",
) -> Candidates:
    """``candidate_steps`` run synchronously."""
    return run_steps(candidate_steps(store, query, query_vector, n, search_kwargs, embeddings,
                                     cache, reembed))


# --- one query: the I/O, then the one rerank body -------------------------------------------

class DocumentView(ItemView[Document]):
    """How the rerank body reads a LangChain ``Document``: the words and the token budget
    read ``page_content``; the copy gets a new metadata dict with the entry (the
    metadata's values are the caller's own, not copies)."""

    def id(self, item: Document) -> Any:
        return item.id

    def text(self, item: Document) -> str:
        return item.page_content

    def metadata(self, item: Document) -> Mapping[str, Any]:
        return item.metadata

    def annotated(self, item: Document, metadata: dict[str, Any],
                  entry: dict[str, Any]) -> Document:
        return item.model_copy(update={"metadata": metadata})


DOCUMENTS = DocumentView()


def query_vector_steps(embeddings: Embeddings, query: str) -> Steps[NDArray[np.float64]]:
    """The checked vector of the checked ``query`` text, as steps (``embed_query`` /
    ``aembed_query``)."""
    vector = yield call(embeddings.embed_query, embeddings.aembed_query, check_query_text(query))
    return check_query_vector(vector)


def fetch_steps(store: VectorStore, embeddings: Embeddings, cache: EmbeddingCache,
                query: str, settings: Settings
                ) -> Steps[tuple[NDArray[np.float64], Candidates]]:
    """(the query vector, the settings' candidates with their vectors) as steps: the query
    is embedded exactly once; ``run_steps`` makes the calls, ``arun_steps`` awaits
    ``aembed_query``, the store's async search and ``aembed_documents``."""
    query_vector = yield from query_vector_steps(embeddings, query)
    candidates = yield from candidate_steps(store, query, query_vector, _fetch(settings),
                                            settings.search, embeddings, cache, settings.reembed)
    return query_vector, candidates


def fetch_by_vector_steps(store: VectorStore, embeddings: Embeddings, cache: EmbeddingCache,
                          vector: Any, settings: Settings
                          ) -> Steps[tuple[NDArray[np.float64], Candidates]]:
    """``fetch_steps`` for a query given as a vector (nothing is embedded but, for stores
    without a fast path, the candidates).

    Raises:
        ValueError: naming ``relevance`` for a callable ``(query, documents) -> scores``:
            there is no query text to give it (a metadata field works).
    """
    if callable(settings.relevance):
        raise ValueError(
            "relevance: a callable (query, documents) -> scores needs the query text, and "
            "a search by vector has none; name a metadata field instead")
    query_vector = check_query_vector(vector)
    candidates = yield from candidate_steps(store, "", query_vector, _fetch(settings),
                                            settings.search, embeddings, cache, settings.reembed)
    return query_vector, candidates


def _fetch(settings: Settings) -> int:
    return settings.k if settings.fetch_k is None else settings.fetch_k


def choose(query_vector: NDArray[np.float64], candidates: Candidates, settings: Settings,
           query: str | None = None) -> list[Document]:
    """The one rerank body on the candidates: annotated copies in selection order."""
    return rerank(DOCUMENTS, candidates.documents, query=query, query_vector=query_vector,
                  vectors=candidates.vectors if candidates.vectors is not None else [],
                  settings=settings)
