"""LangChain's private members that the adapter reads outside its store fast paths:
each read is a function here and a ``PrivateMember`` in ``PRIVATE_MEMBERS`` with the
versions it was tested on (the tests check the installed version and that nothing
else in vrsd reads them)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.vectorstores import VectorStore

from vrsd_core.stores import PrivateMember

_CORE, _TESTED = "langchain-core", "==1.7.2"

PRIVATE_MEMBERS: tuple[PrivateMember, ...] = (
    PrivateMember(
        member="VectorStore._get_retriever_tags", client=_CORE, tested=_TESTED,
        why="DiverseVectorStore's retrievers carry the wrapped store's tags (LangSmith "
            "traces name the real store); a hook every VectorStore has"),
    PrivateMember(
        member="VectorStore._select_relevance_score_fn", client=_CORE, tested=_TESTED,
        why="DiverseVectorStore scores relevance as the wrapped store does (its distance "
            "convention); a hook every VectorStore has"),
)


def retriever_tags(store: VectorStore) -> list[str]:
    """The tags LangChain gives ``store``'s retrievers."""
    return store._get_retriever_tags()


def relevance_score_fn(store: VectorStore) -> Callable[[float], float]:
    """How ``store`` turns its distances into relevance scores in [0, 1]."""
    return store._select_relevance_score_fn()
