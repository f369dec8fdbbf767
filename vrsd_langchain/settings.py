"""The LangChain classes' fields mapped onto the kit's settings.

``DiverseRetriever``, ``DiverseVectorStoreRetriever`` and ``DiverseCompressor`` differ only in
where their settings come from: fields, ``search_kwargs``, a call's keywords. Each is
checked into one frozen ``vrsd_kit.settings.Settings`` when the model is built and at
every assignment (``vrsd_kit.settings.SettingsModel``), with what only the store can say
(``store_settings``); a call checks only what it overrides (``call_settings``). The query's
I/O and the rerank are ``candidates``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from vrsd_core import method_defaults
from vrsd_kit.settings import DEFAULTS, Settings, build_settings

from .candidates import check_reembed_policy, check_search_kwargs

__all__ = ["FIELD_NAMES", "OWN_KEYWORDS", "PER_CANDIDATE", "call_settings", "resolve_embeddings",
           "retriever_values", "split_options", "store_settings"]

# Per-candidate inputs besides the method's options: where each comes from (see README),
# whether the default reads the candidates' words, and the metadata key of the entry.
PER_CANDIDATE = ("relevance", "group_by", "max_per_group", "max_tokens", "token_counter",
                 "lexical", "language", "background", "fill_with_copies", "metadata_key")
# Every call's own keywords besides the method's options (the rest are store search arguments).
OWN_KEYWORDS = ("k", "fetch_k", "method", *PER_CANDIDATE)
FIELD_NAMES = {"options": "method_kwargs", "search": "search_kwargs"}
"""The settings a LangChain field names otherwise (``vrsd_kit.settings.SETTINGS``)."""


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
    for name in ("k", "fetch_k"):  # a count given is one: None is refused, as at construction
        if name in kwargs and kwargs[name] is None:
            raise ValueError(f"{name}: expected an integer >= 1, got None")
    if kwargs.keys() <= {"k", "fetch_k"}:
        return settings.with_counts(kwargs.get("k"), kwargs.get("fetch_k"))
    given = dict(kwargs)
    values = settings.values()
    if "method" in given:  # invoke(q, method=...): that method, with only this call's options
        values["method"], values["options"] = given.pop("method"), {}
    for name in ("k", "fetch_k", *PER_CANDIDATE):
        if name in given:
            values[name] = given.pop(name)
    options, search = split_options(values["method"], given)
    values["options"] = {**values["options"], **options}
    values["search"] = {**values["search"], **search}
    return store_settings(store, values, settings.names)


def retriever_values(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A model's fields (``DiverseRetriever``'s names) as the kit's setting values."""
    return {name: fields[FIELD_NAMES.get(name, name)] for name in DEFAULTS
            if FIELD_NAMES.get(name, name) in fields}
