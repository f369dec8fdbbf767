"""``DiverseRetriever``: relevant *and* diverse retrieval over any LangChain vector store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.vectorstores import VectorStore
from pydantic import (
    ConfigDict,
    Field,
    SkipValidation,
    model_validator,
)

from vrsd_core import DEFAULT_METHOD, MethodName
from vrsd_kit.rerank import METADATA_KEY
from vrsd_kit.settings import (
    DEFAULT_FETCH_K,
    GroupKey,
    RelevanceFn,
    Settings,
    SettingsModel,
    check_model_keywords,
)
from vrsd_kit.steps import arun_steps, run_steps
from vrsd_kit.stores import Reembed
from vrsd_kit.tokens import TokenCounter

from .cache import DEFAULT_CACHE_SIZE, EmbeddingCache
from .candidates import choose, fetch_steps, unwrap
from .settings import (
    PER_CANDIDATE,
    call_settings,
    resolve_embeddings,
    retriever_values,
    store_settings,
)


class DiverseRetriever(SettingsModel, BaseRetriever):
    """Over-fetch ``fetch_k`` candidates from a vector store, return ``k`` chosen by ``method``.

    The default, ``method="complement"`` (``vrsd_core.DEFAULT_METHOD``), is the
    project's recommendation for RAG: relevance from the candidates' vectors *and* their
    words (``lexical``), then the set of k that is most relevant and spans the most
    (a determinantal selection: a restatement of a pick adds almost nothing and waits).
    ``method="vrsd"`` picks the k documents whose *sum* vector is most
    cosine-aligned with the query (Gao, Deng & Zhang's greedy); any ``vrsd_core``
    method works (``"mmr"``, ``"dpp"``, ``"vrsd_exact"``, ``"similarity"``, ...).

    Candidate vectors come from the store when it keeps them (the stores of
    ``vrsd_langchain.stores.FAST_PATHS``, the README's store table), else the
    candidates' text is embedded with ``embeddings`` through a bounded cache, as
    ``reembed`` allows. Each returned Document is a copy with
    ``metadata["vrsd"] = {"rank", "relevance", "gain", "method"}`` (see
    ``vrsd_langchain.METADATA_KEY``), in selection order.

    Per-call overrides: ``retriever.invoke(q, k=2, fetch_k=40, filter=..., lambda_mult=0.3)``.
    ``k``/``fetch_k``/``relevance``/``group_by``/``max_per_group``/``max_tokens``/
    ``token_counter`` replace the fields,
    names of the method's options update ``method_kwargs`` for that call, everything
    else is added to ``search_kwargs`` (as LangChain's ``VectorStoreRetriever`` does).
    ``method=`` may be given per call too; it then runs with only that call's options.
    A search argument the store's fast path does not know, or a near-miss of one of
    the names above on any store (``fetchk=3``), is a ValueError naming the closest.

    Search arguments are the store's own (e.g. ``filter``: a callable for
    InMemoryVectorStore, a metadata dict for FAISS and Chroma, a
    ``qdrant_client.models.Filter`` for Qdrant); with a filter, the candidates are
    the store's top ``fetch_k`` among the documents that pass. For the methods that
    take a quality prior (``vrsd_core.methods_where(takes_prior=True)``: the default,
    ``similarity``, ``mmr``, ``dpp``) the option ``prior`` names a numeric metadata
    field (or is a callable ``(Document) -> float``), blended in with ``prior_weight``.

    Every setting is checked when the retriever is built (a misspelt keyword, bad
    method, option or value, ``k < 1``, ``fetch_k < k``, no embeddings): a
    ``ValueError`` at once, naming the argument (and for a typo, the closest keyword),
    not at the first query. A field assigned later (``retriever.k = 6``) is checked at
    the assignment (``vrsd_kit.settings.SettingsModel``): a bad value is a ValueError
    naming it, and the retriever keeps its previous settings. A dict field changed in
    place (``retriever.search_kwargs["filter"] = f``) is checked at the next call.

    Example:
        .. code-block:: python

            from langchain_core.vectorstores import InMemoryVectorStore
            from vrsd_langchain import DiverseRetriever, default_embeddings

            store = InMemoryVectorStore.from_texts(texts, default_embeddings())
            retriever = DiverseRetriever(vectorstore=store, k=4, fetch_k=50)
            docs = retriever.invoke("Why do leaves change colour?")
    """

    vectorstore: VectorStore
    """The store to retrieve from (any LangChain ``VectorStore``)."""
    # the settings are checked by the kit (vrsd_kit.settings), not coerced by pydantic
    # ("3" is refused, not read as 3): SkipValidation
    k: SkipValidation[int] = 4
    """How many documents to return (>= 1)."""
    fetch_k: SkipValidation[int] = DEFAULT_FETCH_K
    """How many candidates to fetch from the store and choose from (>= k)."""
    method: SkipValidation[MethodName] = DEFAULT_METHOD
    """A ``vrsd_core.METHOD_INFO`` name; default ``"complement"``, the project's recommendation
    (``"vrsd"`` is the paper's greedy)."""
    method_kwargs: SkipValidation[dict[str, Any]] = Field(default_factory=dict)
    """The method's options, e.g. ``{"refine": "swap"}`` or ``{"lambda_mult": 0.7}``."""
    search_kwargs: SkipValidation[dict[str, Any]] = Field(default_factory=dict)
    """Passed to the store's search, e.g. ``{"filter": ...}`` in the store's filter syntax."""
    relevance: SkipValidation[str | RelevanceFn[Document] | None] = None
    """Outside relevance for the methods that take one (the default, ``similarity``,
    ``mmr``, ``dpp``, ...; not ``vrsd`` nor ``vrsd_exact``): a numeric metadata field (a
    score the store or an upstream stage wrote) or a callable
    ``(query, documents) -> scores`` (e.g. a cross-encoder).
    None: cosine of each candidate's vector to the query."""
    group_by: SkipValidation[str | GroupKey[Document] | None] = None
    """The source of each candidate, for ``max_per_group``: a metadata field (e.g.
    ``"source"``) or a callable ``(Document) -> label``."""
    max_per_group: SkipValidation[int | None] = None
    """At most this many documents per ``group_by`` label (every method obeys it; fewer
    than k come back when the candidates run out of sources)."""
    max_tokens: SkipValidation[int | None] = None
    """A token budget for the LLM's context: the returned documents' ``page_content``
    token counts sum to at most this (at most k documents still; a document that does
    not fit is skipped for the next best that does). None: no budget."""
    token_counter: SkipValidation[TokenCounter | None] = None
    """Counts a text's tokens for ``max_tokens``, ideally the LLM's own tokenizer, e.g.
    ``lambda text: len(tokenizer.encode(text))``. None: ``vrsd_kit.tokens.approx_token_count``
    (offline, no dependency; about 5 % mean error on English prose)."""
    lexical: SkipValidation[bool] = True
    """The default method reads the candidates' words as well as their vectors: its
    relevance is z(z(cosine) + z(BM25 of the fetched texts against the query)), each z
    within the pool (``vrsd_core.pool_units``), and its similarity of two candidates the
    mean of their vectors' cosine and their word profiles' (``vrsd_kit.lexical``;
    ``metadata["vrsd"]`` shows ``cosine`` and ``lexical``). False: the vectors only.
    Other methods, and an outside ``relevance``, are unaffected."""
    language: SkipValidation[str | None] = None
    """The texts' language: the default reads each word as its Snowball stem (an ISO 639-1
    code or its name, ``"en"``, ``"german"``: ``vrsd_kit.lexical.LANGUAGES``), the query's
    words too, so "upgrades" meets "upgrade". None: the words as written."""
    background: SkipValidation[Any] = None
    """What is common outside the fetched pool (``vrsd_kit.lexical.Background``: e.g.
    ``Background.of_texts(your_documents, language)``, built once; or a list of them, ()
    for none): a word common there weighs little and makes no link. None: the language's
    common words (``Background.of_language``: with ``language``, PyPI ``wordfreq``'s list,
    the extra ``background``; without, the common words of ten languages, shipped)."""
    fill_with_copies: SkipValidation[bool] = False
    """The default keeps no copy of a kept document (``vrsd_kit.lexical.Judge``): when only
    copies are left, fewer than k come back (``metadata["vrsd"]["stopped"] ==
    "restatements"``). True: the copies make up k (their entry's ``copy_of`` names the
    document each repeats)."""
    metadata_key: SkipValidation[str] = METADATA_KEY
    """The metadata key of vrsd's entry. A key the document's own metadata already holds
    is kept, and the entry goes under this key + ``"_"`` (``"vrsd_"``; warned once)."""
    embeddings: Embeddings | None = None
    """Embeds the query (and, for stores without a fast path, the candidates); it must be
    the model the store's vectors were made with. Default: ``vectorstore.embeddings``."""
    cache: EmbeddingCache | None = None
    """Re-embedding cache, used only by stores without a fast path (may be shared with
    other retrievers or a ``DiverseCompressor``). Default: a new one of ``cache_size``
    entries; its ``hits``/``misses`` show what the fallback embedded."""
    cache_size: int = DEFAULT_CACHE_SIZE
    """Entries of the default cache."""
    reembed: SkipValidation[Reembed] = "warn"
    """When the store's vectors cannot be read (no fast path for its class, or one that
    does not apply to this instance), the candidates' text is embedded again:
    ``"warn"`` says so once per store class (a ``vrsd_kit.stores.ReembeddingWarning``
    naming the reason), ``"allow"`` is silent, ``"refuse"`` raises a ValueError instead
    (for embedding APIs paid per token; a store without a fast path is refused when the
    retriever is built)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    SETTING_FIELDS: ClassVar[frozenset[str]] = frozenset({
        "vectorstore", "embeddings", "k", "fetch_k", "method", "method_kwargs",
        "search_kwargs", "reembed", *PER_CANDIDATE})

    @model_validator(mode="before")
    @classmethod
    def _check_input(cls, data: Any) -> Any:
        check_model_keywords(cls, data)  # fetchk=4: a ValueError naming fetch_k
        return data

    @model_validator(mode="after")
    def _check(self) -> DiverseRetriever:
        self._keep_settings()
        if self.cache is None:
            self.cache = EmbeddingCache(self.cache_size)
        return self

    def _checked_settings(self, fields: Mapping[str, Any]) -> Settings:
        """The fields mapped onto the kit's settings, checked (with the store and the
        embeddings: ``store_settings``, ``resolve_embeddings``)."""
        if fields["fetch_k"] is None:  # the kit's None is a reranker's (candidates given)
            raise ValueError("fetch_k: expected an integer >= 1, got None")
        store = fields["vectorstore"]
        resolve_embeddings(store, fields["embeddings"], type(self).__name__)
        search = fields["search_kwargs"]
        misplaced = sorted({"k", "fetch_k"} & set(search)) if isinstance(search, dict) else []
        if misplaced:
            raise ValueError(
                f"search_kwargs: {misplaced[0]!r} is a field of {type(self).__name__} "
                f"(e.g. {type(self).__name__}(vectorstore=store, k=4, "
                f"fetch_k={DEFAULT_FETCH_K})), "
                "not a search argument"
            )
        return store_settings(store, retriever_values(fields))

    def _embedder(self) -> Embeddings:
        """``embeddings``, else the store's (one of them is there: ``_checked_settings``)."""
        found = self.embeddings if self.embeddings is not None else self.vectorstore.embeddings
        if found is None:  # the store's were taken away since
            return resolve_embeddings(self.vectorstore, None, type(self).__name__)
        return found

    def _cache(self) -> EmbeddingCache:
        return self.cache  # type: ignore[return-value]  # set by _check, before any call

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        params["ls_vector_store_provider"] = type(unwrap(self.vectorstore)).__name__
        params["ls_embedding_provider"] = type(self._embedder()).__name__
        return params

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        settings = self.settings()
        if kwargs:  # invoke(q, k=2, filter=...): this call's settings
            settings = call_settings(self.vectorstore, settings, kwargs)
        query_vector, candidates = run_steps(
            fetch_steps(self.vectorstore, self._embedder(), self._cache(), query, settings))
        return choose(query_vector, candidates, settings, query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        settings = self.settings()
        if kwargs:
            settings = call_settings(self.vectorstore, settings, kwargs)
        query_vector, candidates = await arun_steps(
            fetch_steps(self.vectorstore, self._embedder(), self._cache(), query, settings))
        return choose(query_vector, candidates, settings, query)
