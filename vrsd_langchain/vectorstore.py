"""``as_retriever(search_type="complement")``: the usual call with diverse search types.

``DiverseVectorStore(store)`` wraps any vector store and delegates everything
to it (adding, deleting, searching, its embeddings, store-specific attributes);
only its ``as_retriever`` differs: it returns a ``DiverseVectorStoreRetriever``,
a ``VectorStoreRetriever`` whose search types are

* ``"similarity"``, ``"similarity_score_threshold"``: the store's own search,
  exactly as LangChain's ``VectorStoreRetriever`` runs it (Documents untouched, no
  ``metadata["vrsd"]``: results identical to the store's own retriever, and the
  threshold needs the store's own relevance scores); a ``search_kwargs`` name within
  a typo of LangChain's or vrsd's keywords (``fetchk``) is refused, any other goes
  to the store's search as in LangChain;
* ``"complement"``: this library's recommended selection (``vrsd_core.DEFAULT_METHOD``);
* ``"vrsd"``: the paper's greedy VRSD, as ``method="vrsd"`` everywhere
  (``search_kwargs={"refine": "swap"}`` adds its 1-swap refinement);
* ``"mmr"``, ``"dpp"`` and every other ``vrsd_core`` method by its own name
  (``"vrsd_exact"``, ``"threshold"``, ``"top_m"``, ``"top_p"``, ``"cluster"``);
* all of these run the shared pipeline (fetch ``fetch_k`` candidates with their
  vectors, let the core choose ``k``), returning annotated copies in selection order.

``"mmr"`` deliberately goes through ``vrsd_core``'s MMR rather than the store's
``max_marginal_relevance_search``: one meaning of ``lambda_mult`` on every store
(1 = relevance only, 0 = diversity only; langchain-qdrant's own MMR passes it
as Qdrant's ``diversity``, which inverts it), the selection order kept
(langchain-chroma's returns similarity order), and a ``metadata["vrsd"]``
entry with relevance and MMR score for each pick. The wrapper's own
``max_marginal_relevance_search`` (and its ``_by_vector`` and async forms) is
the core's MMR too: this project never hands ``lambda_mult`` to a store's
native MMR. The store's own MMR stays reachable as
``DiverseVectorStore(store).wrapped_vectorstore.max_marginal_relevance_search``.

``search_kwargs`` for the core search types: ``k`` (default 4), ``fetch_k``
(default ``vrsd_kit.settings.DEFAULT_FETCH_K``, 50; for ``"mmr"`` LangChain's own, 20,
as its ``max_marginal_relevance_search`` has it), the method's options (e.g.
``lambda_mult``, ``theta``, ``refine``), the per-candidate inputs ``relevance``, ``group_by`` and
``max_per_group``, the token budget ``max_tokens`` with ``token_counter`` (as in
``DiverseRetriever``), and the store's search arguments (e.g. ``filter``). A name that is
none of these (for a store without a fast path: a near-miss of vrsd's own, ``fetchk``)
is a ValueError naming the closest valid one, as is a misspelt ``as_retriever`` keyword.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, ClassVar, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore, VectorStoreRetriever
from pydantic import ConfigDict, model_validator

from vrsd_core import DEFAULT_METHOD, METHOD_INFO, MethodName
from vrsd_kit.settings import (
    DEFAULT_FETCH_K,
    Settings,
    SettingsModel,
    check_model_keywords,
    did_you_mean,
)
from vrsd_kit.steps import arun_steps, run_steps
from vrsd_kit.stores import Reembed, check_reembed

from ._compat import relevance_score_fn, retriever_tags
from .cache import DEFAULT_CACHE_SIZE, EmbeddingCache, built_cache
from .candidates import TYPO_CUTOFF, choose, fetch_by_vector_steps, fetch_steps
from .settings import (
    OWN_KEYWORDS,
    PER_CANDIDATE,
    call_settings,
    resolve_embeddings,
    split_options,
    store_settings,
)

STOCK_SEARCH_TYPES = ("similarity", "similarity_score_threshold")
"""Search types run by the store itself, as in LangChain's ``VectorStoreRetriever``."""
CORE_SEARCH_TYPES = ("mmr", *(m for m in METHOD_INFO if m not in ("similarity", "mmr")))
"""Search types run by ``vrsd_core`` (``"mmr"``, ``"vrsd"``, ``"dpp"``, ...): every core
method but ``"similarity"``."""
DEFAULT_K = 4
LANGCHAIN_MMR_FETCH_K: int = inspect.signature(
    VectorStore.max_marginal_relevance_search).parameters["fetch_k"].default
"""``search_type="mmr"``'s ``fetch_k`` when none is given: LangChain's own (its
``max_marginal_relevance_search`` signature, which this wrapper's keeps), so that an
``"mmr"`` retriever fetches what LangChain's would; vrsd's own search types fetch
``vrsd_kit.settings.DEFAULT_FETCH_K``."""
STOCK_KEYWORDS = ("k", "filter", "score_threshold", "fetch_k", "lambda_mult", *OWN_KEYWORDS)
"""The names a typo of which is refused for the stock search types: LangChain's
``search_kwargs`` and vrsd's own; any other name goes to the store's search, as in
LangChain."""


VRSD_ONLY = tuple(key for key in OWN_KEYWORDS if key not in ("k", "fetch_k"))
"""vrsd's own settings (``max_tokens``, ``lexical``, ``method``, ...): refused on the stock
search types, whose store search would ignore them."""


def check_stock_kwargs(kwargs: Collection[str]) -> None:
    """ValueError for one of vrsd's own settings (``VRSD_ONLY``), or a name within a typo
    of ``STOCK_KEYWORDS`` (``fetchk``): the store's own search would ignore it without a
    word."""
    for key in sorted(kwargs):
        if key in VRSD_ONLY:
            raise ValueError(
                f"{key}: a setting of vrsd's own search types; the similarity search types "
                "pass their search arguments to the store's own search, where it would do "
                f"nothing (use search_type={DEFAULT_METHOD!r}, or another vrsd method)"
            )
        if key in STOCK_KEYWORDS:
            continue
        typo = did_you_mean(key, STOCK_KEYWORDS, cutoff=TYPO_CUTOFF)
        if typo:
            raise ValueError(
                f"{key}: unknown keyword{typo} (the similarity search types pass their "
                "search arguments to the store's own search, which would ignore this one)"
            )


class DiverseVectorStoreRetriever(SettingsModel, VectorStoreRetriever):
    """``VectorStoreRetriever`` with the ``vrsd_core`` methods as extra search types.

    See the module doc for what each search type does. Settings are checked
    when the retriever is built: an unknown search type is a ``ValueError``
    listing the allowed ones; a bad option, ``fetch_k < k`` or missing
    embeddings too; and at every assignment (``retriever.search_kwargs = {...}``,
    ``vrsd_kit.settings.SettingsModel``): a bad value is refused there and the
    retriever keeps its settings. ``search_kwargs`` changed in place (LangChain's
    ``retriever.search_kwargs["k"] = 6``) are checked at the next call.
    ``invoke(q, k=2, filter=...)`` overrides ``search_kwargs`` for one call, as in
    LangChain.
    """

    allowed_search_types: ClassVar[Collection[str]] = (*STOCK_SEARCH_TYPES, *CORE_SEARCH_TYPES)

    embeddings: Embeddings | None = None
    """For the core search types: embeds the query (and candidates of stores without a
    fast path). Default: the store's embeddings."""
    cache: EmbeddingCache | None = None
    """Re-embedding cache for stores without a fast path; default: the
    ``DiverseVectorStore``'s, else a new one."""
    reembed: Reembed | None = None
    """For stores whose vectors cannot be read: ``"warn"``, ``"allow"`` or ``"refuse"``
    (see ``DiverseRetriever.reembed``); default: the ``DiverseVectorStore``'s."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset({
        "vectorstore", "search_type", "search_kwargs", "embeddings", "reembed"})

    @model_validator(mode="before")
    @classmethod
    def _check_keywords(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # as_retriever(searchtype=...): names search_type
        return data

    @model_validator(mode="after")
    def _check_core_settings(self) -> DiverseVectorStoreRetriever:
        if self.cache is None:
            shared = getattr(self.vectorstore, "cache", None)
            self.cache = shared if isinstance(shared, EmbeddingCache) else EmbeddingCache()
        if self.reembed is None:
            self.reembed = getattr(self.vectorstore, "reembed", "warn")
        self._keep_settings()
        return self

    def _embedder(self) -> Embeddings:
        return resolve_embeddings(self.vectorstore, self.embeddings, type(self).__name__)

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings | None:
        """The core search types' settings, read from ``search_kwargs`` (None for the stock
        search types, whose ``search_kwargs`` go to the store's own search)."""
        search_type, merged = fields["search_type"], dict(fields["search_kwargs"])
        if search_type not in self.allowed_search_types:
            raise ValueError(f"search_type: {search_type!r} is not one of "
                             f"{tuple(self.allowed_search_types)}"
                             f"{did_you_mean(str(search_type), self.allowed_search_types)}")
        if search_type not in CORE_SEARCH_TYPES:
            check_stock_kwargs(merged)
            return None
        store = fields["vectorstore"]
        resolve_embeddings(store, fields["embeddings"], type(self).__name__)
        values = {"k": merged.pop("k", DEFAULT_K),
                  "fetch_k": merged.pop("fetch_k", LANGCHAIN_MMR_FETCH_K
                                        if search_type == "mmr" else DEFAULT_FETCH_K),
                  "reembed": fields["reembed"] or "warn"}
        values.update({name: merged.pop(name) for name in PER_CANDIDATE if name in merged})
        if "method" in merged:
            raise ValueError(f"search_kwargs: 'method' is not a search argument; the search "
                             f"type names the method (search_type={search_type!r})")
        method = cast(MethodName, search_type)  # a core method (CORE_SEARCH_TYPES)
        options, search = split_options(method, merged)
        return store_settings(store, {**values, "method": method, "options": options,
                                      "search": search},
                              names={"options": "search_kwargs", "search": "search_kwargs"})

    def _core_settings(self, kwargs: Mapping[str, Any]) -> Settings:
        settings = self.settings()
        if settings is None:
            raise RuntimeError(f"search_type {self.search_type!r} is run by the store itself")
        return call_settings(self.vectorstore, settings, kwargs)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        if self.search_type not in CORE_SEARCH_TYPES:
            check_stock_kwargs(kwargs)
            return super()._get_relevant_documents(query, run_manager=run_manager, **kwargs)
        settings = self._core_settings(kwargs)
        query_vector, candidates = run_steps(
            fetch_steps(self.vectorstore, self._embedder(), built_cache(self), query, settings))
        return choose(query_vector, candidates, settings, query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        if self.search_type not in CORE_SEARCH_TYPES:
            check_stock_kwargs(kwargs)
            return await super()._aget_relevant_documents(
                query, run_manager=run_manager, **kwargs
            )
        settings = self._core_settings(kwargs)
        query_vector, candidates = await arun_steps(
            fetch_steps(self.vectorstore, self._embedder(), built_cache(self), query, settings))
        return choose(query_vector, candidates, settings, query)


class DiverseVectorStore(VectorStore):
    """A vector store wrapper whose ``as_retriever`` offers ``"vrsd"``, ``"dpp"``, ...

    Everything else is the wrapped store's: its methods are called directly,
    and any other attribute (``index``, ``client``, ...) is looked up on it.

    Args:
        vectorstore: the store to wrap (any LangChain ``VectorStore``).
        embeddings: for the core search types, instead of the store's own
            (needed when the store exposes none).
        cache: re-embedding cache shared by the retrievers made here
            (default: a new ``EmbeddingCache(cache_size)``).
        reembed: ``"warn"``, ``"allow"`` or ``"refuse"``: what its retrievers do when
            the wrapped store's vectors cannot be read (see ``DiverseRetriever.reembed``).

    Example:
        .. code-block:: python

            store = DiverseVectorStore(FAISS.from_texts(texts, embeddings))
            retriever = store.as_retriever(
                search_type="complement", search_kwargs={"k": 4, "fetch_k": 50}
            )
    """

    def __init__(
        self,
        vectorstore: VectorStore,
        *,
        embeddings: Embeddings | None = None,
        cache: EmbeddingCache | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        reembed: Reembed = "warn",
    ) -> None:
        if not isinstance(vectorstore, VectorStore):
            raise ValueError(
                f"vectorstore: expected a LangChain VectorStore, got {type(vectorstore).__name__}"
            )
        if embeddings is not None and not isinstance(embeddings, Embeddings):
            raise ValueError(
                f"embeddings: expected a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        self.wrapped_vectorstore = vectorstore
        self._embeddings = embeddings
        self.cache = cache if cache is not None else EmbeddingCache(cache_size)
        self.reembed = check_reembed(reembed)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: store-specific attributes.
        inner = self.__dict__.get("wrapped_vectorstore")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)

    def __repr__(self) -> str:
        return f"DiverseVectorStore({self.wrapped_vectorstore!r})"

    @property
    def embeddings(self) -> Embeddings | None:
        """The ``embeddings`` given here, else the wrapped store's."""
        if self._embeddings is not None:
            return self._embeddings
        return self.wrapped_vectorstore.embeddings

    # --- the retriever -------------------------------------------------------

    def _get_retriever_tags(self) -> list[str]:
        return retriever_tags(self.wrapped_vectorstore)

    def as_retriever(self, **kwargs: Any) -> DiverseVectorStoreRetriever:
        """A ``DiverseVectorStoreRetriever`` on this store.

        Args:
            **kwargs: ``search_type`` (``"similarity"``, ``"similarity_score_threshold"``,
                ``"mmr"``, ``"vrsd"``, ``"dpp"``, ...), ``search_kwargs`` (``k``,
                ``fetch_k``, method options, the store's search arguments), and any
                other retriever field (``tags``, ``embeddings``, ...).
        """
        tags = kwargs.pop("tags", None) or [*self._get_retriever_tags()]
        return DiverseVectorStoreRetriever(vectorstore=self, tags=tags, **kwargs)

    def search(self, query: str, search_type: str, **kwargs: Any) -> list[Document]:
        """``search_type`` may also be a core search type (``"vrsd"``, ``"dpp"``, ...);
        ``"mmr"`` is then the core's MMR too, as in ``as_retriever``."""
        if search_type in CORE_SEARCH_TYPES:
            return self.as_retriever(search_type=search_type, search_kwargs=kwargs).invoke(query)
        check_stock_kwargs(kwargs)
        return self.wrapped_vectorstore.search(query, search_type, **kwargs)

    async def asearch(self, query: str, search_type: str, **kwargs: Any) -> list[Document]:
        """Async ``search``."""
        if search_type in CORE_SEARCH_TYPES:
            retriever = self.as_retriever(search_type=search_type, search_kwargs=kwargs)
            return await retriever.ainvoke(query)
        check_stock_kwargs(kwargs)
        return await self.wrapped_vectorstore.asearch(query, search_type, **kwargs)

    # --- everything else is the wrapped store's ------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        if ids is not None:
            kwargs["ids"] = ids
        return self.wrapped_vectorstore.add_texts(texts, metadatas, **kwargs)

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        if ids is not None:
            kwargs["ids"] = ids
        return await self.wrapped_vectorstore.aadd_texts(texts, metadatas, **kwargs)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        return self.wrapped_vectorstore.add_documents(documents, **kwargs)

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        return await self.wrapped_vectorstore.aadd_documents(documents, **kwargs)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        return self.wrapped_vectorstore.delete(ids, **kwargs)

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        return await self.wrapped_vectorstore.adelete(ids, **kwargs)

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return self.wrapped_vectorstore.get_by_ids(ids)

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return await self.wrapped_vectorstore.aget_by_ids(ids)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return self.wrapped_vectorstore.similarity_search(query, k=k, **kwargs)

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return await self.wrapped_vectorstore.asimilarity_search(query, k=k, **kwargs)

    def similarity_search_with_score(
        self, *args: Any, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return self.wrapped_vectorstore.similarity_search_with_score(*args, **kwargs)

    async def asimilarity_search_with_score(
        self, *args: Any, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return await self.wrapped_vectorstore.asimilarity_search_with_score(*args, **kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        return self.wrapped_vectorstore.similarity_search_by_vector(embedding, k=k, **kwargs)

    async def asimilarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        return await self.wrapped_vectorstore.asimilarity_search_by_vector(
            embedding, k=k, **kwargs
        )

    def similarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return self.wrapped_vectorstore.similarity_search_with_relevance_scores(
            query, k=k, **kwargs
        )

    async def asimilarity_search_with_relevance_scores(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        return await self.wrapped_vectorstore.asimilarity_search_with_relevance_scores(
            query, k=k, **kwargs
        )

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return relevance_score_fn(self.wrapped_vectorstore)

    # MMR: the core's, with LangChain's lambda_mult meaning on every store (see the module
    # doc); the wrapped store's own MMR is never handed lambda_mult.

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any
    ) -> list[Document]:
        """The core's MMR (1 = relevance only), as ``as_retriever(search_type="mmr")``."""
        return self.search(query, "mmr", k=k, fetch_k=fetch_k, lambda_mult=lambda_mult, **kwargs)

    async def amax_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any
    ) -> list[Document]:
        return await self.asearch(
            query, "mmr", k=k, fetch_k=fetch_k, lambda_mult=lambda_mult, **kwargs
        )

    def _mmr_retriever(self, k: int, fetch_k: int, lambda_mult: float,
                       kwargs: dict[str, Any]) -> DiverseVectorStoreRetriever:
        return self.as_retriever(
            search_type="mmr",
            search_kwargs={"k": k, "fetch_k": fetch_k, "lambda_mult": lambda_mult, **kwargs},
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """The core's MMR for a query vector (nothing else is embedded on fast-path stores)."""
        retriever = self._mmr_retriever(k, fetch_k, lambda_mult, kwargs)
        settings = retriever._core_settings({})
        query_vector, candidates = run_steps(fetch_by_vector_steps(
            self, retriever._embedder(), built_cache(retriever), embedding, settings))
        return choose(query_vector, candidates, settings)

    async def amax_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """Async ``max_marginal_relevance_search_by_vector`` (the store's async search and
        ``aembed_documents`` for stores without a fast path)."""
        retriever = self._mmr_retriever(k, fetch_k, lambda_mult, kwargs)
        settings = retriever._core_settings({})
        query_vector, candidates = await arun_steps(fetch_by_vector_steps(
            self, retriever._embedder(), built_cache(retriever), embedding, settings))
        return choose(query_vector, candidates, settings)

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        vectorstore_cls: type[VectorStore] = InMemoryVectorStore,
        **kwargs: Any,
    ) -> DiverseVectorStore:
        """Build a ``vectorstore_cls`` (default ``InMemoryVectorStore``) from texts, wrapped.

        ``kwargs`` go to ``vectorstore_cls.from_texts``.
        """
        if ids is not None:
            kwargs["ids"] = ids
        inner = vectorstore_cls.from_texts(texts, embedding, metadatas=metadatas, **kwargs)
        return cls(inner)
