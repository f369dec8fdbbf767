"""What every LlamaIndex store record shares: the ``StorePath`` record and the
generic lookup through the store's own ``get_nodes``.

Most LlamaIndex stores hand nodes back without their vectors (the
``VectorStoreIndex`` docstore strips them, Chroma rebuilds nodes from text and
metadata). Reading the vectors back from the store is much cheaper than
re-embedding the text, so each store that can return them gets a ``StorePath``
record in its own module beside this one, the only place that touches that
store's internals: a lookup by node id, and for some a query that returns the
vectors with the nodes. Any other store is tried through ``generic_lookup``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vrsd_kit.stores import StoreRecord

Vector = Sequence[float]
StoreLookup = Callable[[Any, list[str]], dict[str, Vector]]
StoreQuery = Callable[[Any, Any, dict[str, Any]], Any]
AsyncStoreQuery = Callable[[Any, Any, dict[str, Any]], Awaitable[Any]]


def generic_lookup(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    """The vectors the store's public ``get_nodes`` returns with the nodes (none if it
    keeps no nodes)."""
    get_nodes = getattr(store, "get_nodes", None)
    if get_nodes is None:
        return {}
    try:
        nodes = get_nodes(node_ids=node_ids)
    except NotImplementedError:  # the base class's answer for "I keep no nodes"
        return {}
    return {n.node_id: n.embedding for n in nodes if n.embedding}


@dataclass(frozen=True, kw_only=True)
class StorePath(StoreRecord):
    """How to read stored vectors from one kind of LlamaIndex vector store.

    Attributes (beside ``StoreRecord``'s):
        lookup: ``(store, node ids) -> {node id: vector}``; None: the store's ``get_nodes``.
        query, aquery: the store's query, returning the nodes with their vectors
            (``DiverseRerankRetriever`` queries through them); None: the store's own query.
        query_applies: the instance has what ``query`` reads.
    """

    lookup: StoreLookup | None = None
    query: StoreQuery | None = None
    aquery: AsyncStoreQuery | None = None
    query_applies: Callable[[Any], bool] = lambda store: True
