"""The LangChain hooks ``DiverseVectorStore`` forwards to the store it wraps: private
members of ``VectorStore``, read here only (see ``vrsd_kit.stores.PrivateMember``)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.vectorstores import VectorStore

from vrsd_kit.stores import private_members

PRIVATE_MEMBERS = private_members("langchain-core", "==1.7.2", {
    "VectorStore._get_retriever_tags": "the wrapped store's retriever tags (LangSmith "
    "traces name the real store)",
    "VectorStore._select_relevance_score_fn": "the wrapped store's distance-to-relevance "
    "conversion",
})


def retriever_tags(store: VectorStore) -> list[str]:
    """The tags LangChain gives ``store``'s retrievers."""
    return store._get_retriever_tags()


def relevance_score_fn(store: VectorStore) -> Callable[[float], float]:
    """How ``store`` turns its distances into relevance scores in [0, 1]."""
    return store._select_relevance_score_fn()
