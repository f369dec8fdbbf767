"""One record per store whose vectors can be read back: see ``_base`` for the shape,
each module for its store; ``STORE_PATHS`` lists them (docs/stores.md is checked
against it). Below: how a node's store finds its record and reads the vectors.

Records are found by class, without importing any store package: a store whose
package was never imported cannot be an instance of it. Whatever no lookup finds
is embedded by the caller, under its ``reembed`` policy
(``vrsd_kit.stores.check_reembedding``).
"""

from __future__ import annotations

from typing import Any

from ._base import AsyncStoreQuery, StorePath, StoreQuery, Vector, generic_lookup
from .chroma import STORE_PATH as CHROMA
from .lancedb import STORE_PATH as LANCEDB
from .milvus import STORE_PATH as MILVUS
from .postgres import STORE_PATH as POSTGRES
from .qdrant import STORE_PATH as QDRANT
from .simple import STORE_PATH as SIMPLE

STORE_PATHS: tuple[StorePath, ...] = (SIMPLE, CHROMA, POSTGRES, QDRANT, MILVUS, LANCEDB)

__all__ = ["STORE_PATHS", "StorePath", "VectorsAlongside", "path_for", "reembedding_reason",
           "vectors_from_store", "with_vectors"]


def path_for(store: Any) -> StorePath | None:
    """The record for ``store``'s class, or None."""
    return next((path for path in STORE_PATHS if path.is_for(store)), None)


def reembedding_reason(store: Any) -> str:
    """Why nodes from ``store`` (None: no store given) have to be embedded again."""
    if store is None:
        return "the nodes came without embeddings and no vector_store was given to read them"
    if path_for(store) is None:
        return ("the nodes came without embeddings and no vector lookup is registered for its "
                "class (vrsd_llamaindex.STORE_PATHS); its get_nodes gave none")
    return "the nodes came without embeddings and the store did not return them"


class VectorsAlongside:
    """A view of ``store`` whose ``query``/``aquery`` return nodes with their vectors.

    Every other attribute is the store's own. The store itself is not changed.
    """

    def __init__(self, store: Any, query: StoreQuery, aquery: AsyncStoreQuery) -> None:
        self._store = store
        self._query = query
        self._aquery = aquery

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def query(self, query: Any, **kwargs: Any) -> Any:
        return self._query(self._store, query, kwargs)

    async def aquery(self, query: Any, **kwargs: Any) -> Any:
        return await self._aquery(self._store, query, kwargs)


def with_vectors(store: Any) -> Any:
    """``store`` as a ``VectorsAlongside`` view when its query can return vectors, else
    ``store`` itself."""
    path = path_for(store)
    if path is None or path.query is None or path.aquery is None or not path.query_applies(store):
        return store
    return VectorsAlongside(store, path.query, path.aquery)


def vectors_from_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    """The vectors ``store`` holds for ``node_ids`` (ids it lacks are left out)."""
    if not node_ids:
        return {}
    path = path_for(store)
    lookup = path.lookup if path is not None and path.lookup is not None else generic_lookup
    return lookup(store, node_ids)
