"""What every LangChain entry point shares: its fields mapped onto the kit's settings, the
I/O of a query, and how the one rerank body reads a ``Document``.

query -> query vector (embedded once) -> n = fetch_k candidates with their vectors
(``candidates``) -> ``vrsd_kit.rerank.rerank`` -> annotated Document copies.
``VRSDRetriever``, ``DiverseVectorStoreRetriever`` and ``VRSDCompressor`` differ only
in where their settings come from. The settings are checked into a frozen
``vrsd_kit.settings.Settings`` when a model is built and at every assignment
(``vrsd_kit.settings.SettingsModel``); a call checks only what it overrides. The I/O is
one body of steps for the sync and the async entry point (``fetch_steps``,
``vrsd_kit.steps``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from numpy.typing import NDArray

from vrsd_core import method_defaults, resolve_method
from vrsd_kit.inputs import check_query_text, check_query_vector
from vrsd_kit.rerank import ItemView, rerank
from vrsd_kit.settings import DEFAULTS, Settings, build_settings
from vrsd_kit.steps import Steps, call

from .candidates import Candidates, candidate_steps, check_reembed_policy, check_search_kwargs

if TYPE_CHECKING:
    from .cache import EmbeddingCache

__all__ = ["FIELD_NAMES", "OWN_KEYWORDS", "PER_CANDIDATE", "DocumentView", "call_settings",
           "choose", "fetch_by_vector_steps", "fetch_steps", "query_vector_steps",
           "resolve_embeddings", "store_settings"]

# Per-candidate inputs besides the method's options: where each comes from (see README),
# whether the default reads the candidates' words, and the metadata key of the entry.
PER_CANDIDATE = ("relevance", "group_by", "max_per_group", "max_tokens", "token_counter",
                 "lexical", "metadata_key")
# Every call's own keywords besides the method's options (the rest are store search arguments).
OWN_KEYWORDS = ("k", "fetch_k", "method", *PER_CANDIDATE)
FIELD_NAMES = {"options": "method_kwargs", "search": "search_kwargs"}
"""The settings a LangChain field names otherwise (``vrsd_kit.settings.SETTINGS``)."""


class DocumentView(ItemView[Document]):
    """How the rerank body reads a LangChain ``Document``: the words and the token budget
    read ``page_content``; the copy gets a deep copy of the metadata with the entry."""

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


def _options_text(method: str) -> str:
    return ", ".join(sorted(method_defaults(method))) or "none"


def split_options(method: str, kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split mixed keyword arguments into (method options, store search arguments);
    the per-candidate inputs (``PER_CANDIDATE``) must have been taken out first."""
    params = method_defaults(method)
    options = {key: v for key, v in kwargs.items() if key in params}
    search = {key: v for key, v in kwargs.items() if key not in params}
    return options, search


def resolve_embeddings(
    store: VectorStore, embeddings: Embeddings | None, owner: str
) -> Embeddings:
    """``embeddings``, else the store's; ValueError saying how to pass them if neither."""
    if embeddings is not None:
        if not isinstance(embeddings, Embeddings):
            raise ValueError(
                f"embeddings: expected a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        return embeddings
    found = store.embeddings
    if found is None:
        raise ValueError(
            f"embeddings: {type(store).__name__} exposes no embeddings (its .embeddings is None); "
            f"pass the model its vectors were made with, e.g. "
            f"{owner}(vectorstore=store, embeddings=HuggingFaceEmbeddings(model_name=...)) "
            "or vrsd_langchain.default_embeddings() for the bundled all-MiniLM-L6-v2"
        )
    return found


def store_settings(store: VectorStore, values: Mapping[str, Any],
                   names: Mapping[str, str] = FIELD_NAMES) -> Settings:
    """``values`` (by the kit's setting names) checked into ``Settings``, and what only the
    store can say: its search arguments (a fast path's, by name and value) and the
    re-embedding policy (``"refuse"`` on a store without a fast path is refused now)."""
    settings = build_settings(values, names=names)
    method = settings.method
    check_search_kwargs(
        store, settings.search, own=OWN_KEYWORDS + tuple(method_defaults(method)),
        hint=f", nor an option of {method!r} (its options: {_options_text(method)})")
    check_reembed_policy(store, settings.reembed, settings.fetch_k or settings.k)
    return settings


def call_settings(store: VectorStore, settings: Settings, kwargs: Mapping[str, Any]
                  ) -> Settings:
    """The settings of one call with ``kwargs`` (``invoke(q, k=2, filter=...)``): ``k``,
    ``fetch_k``, ``method`` and the per-candidate inputs replace the settings', the
    method's options update its options (``method=`` starts from none), anything else is
    added to the store's search arguments. Only the counts: checked alone."""
    if not kwargs:
        return settings
    if kwargs.keys() <= {"k", "fetch_k"}:
        return settings.with_counts(kwargs.get("k"), kwargs.get("fetch_k"))
    given = dict(kwargs)
    values = settings.values()
    if "method" in given:  # invoke(q, method=...): that method, with only this call's options
        values["method"], values["options"] = resolve_method(given.pop("method"))
    for name in ("k", "fetch_k", *PER_CANDIDATE):
        if name in given:
            values[name] = given.pop(name)
    options, search = split_options(values["method"], given)
    values["options"] = {**values["options"], **options}
    values["search"] = {**values["search"], **search}
    return store_settings(store, values, settings.names)


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


def retriever_values(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A model's fields (``VRSDRetriever``'s names) as the kit's setting values."""
    return {name: fields[FIELD_NAMES.get(name, name)] for name in DEFAULTS
            if FIELD_NAMES.get(name, name) in fields}
