"""Stored vectors for nodes that arrive without ``node.embedding``.

Most LlamaIndex stores hand nodes back without their vectors (the
``VectorStoreIndex`` docstore strips them, Chroma rebuilds nodes from text and
metadata). Reading the vectors back from the store is much cheaper than
re-embedding the text, so each store that can return them gets a small lookup
here, keyed by ``class_name()``; any other store is tried through the generic
``get_nodes``. Whatever no lookup finds is embedded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Vector = Sequence[float]
StoreLookup = Callable[[Any, list[str]], dict[str, Vector]]


def _simple_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # SimpleVectorStore keeps every vector in a dict keyed by node id.
    embeddings = store.data.embedding_dict
    return {i: embeddings[i] for i in node_ids if i in embeddings}


def _chroma_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # ChromaVectorStore.client is the chromadb collection; ids are node ids.
    got = store.client.get(ids=list(dict.fromkeys(node_ids)), include=["embeddings"])
    vectors = got.get("embeddings")
    if vectors is None:
        return {}
    return {i: v for i, v in zip(got["ids"], vectors, strict=True) if v is not None}


def _generic_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    get_nodes = getattr(store, "get_nodes", None)
    if get_nodes is None:
        return {}
    try:
        nodes = get_nodes(node_ids=node_ids)
    except NotImplementedError:  # the base class's answer for "I keep no nodes"
        return {}
    return {n.node_id: n.embedding for n in nodes if n.embedding}


def _postgres_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # PGVectorStore (llama-index-vector-stores-postgres): one SELECT of the ids and vectors
    # only (its get_nodes also reads text and metadata the caller already has).
    table = getattr(store, "_table_class", None)
    if table is None or not hasattr(store, "_session") or not hasattr(store, "_initialize"):
        return _generic_store(store, node_ids)
    from sqlalchemy import select

    store._initialize()
    stmt = select(table.node_id, table.embedding).where(
        table.node_id.in_(list(dict.fromkeys(node_ids)))
    )
    with store._session() as session, session.begin():
        rows = session.execute(stmt).all()
    return {r.node_id: list(r.embedding) for r in rows if r.embedding is not None}


STORE_LOOKUPS: dict[str, StoreLookup] = {
    "SimpleVectorStore": _simple_store,
    "ChromaVectorStore": _chroma_store,
    "PGVectorStore": _postgres_store,
}


# --- Stores whose own query can return the vectors with the nodes ----------------
#
# ``VRSDRetriever`` over a ``VectorIndexRetriever`` asks the store for the candidates
# through a per-call view of it whose ``query`` also fills ``node.embedding`` from the
# same round trip; the postprocessor then has every vector and looks nothing up.

StoreQuery = Callable[[Any, Any, dict[str, Any]], Any]


def _postgres_query(store: Any, query: Any, kwargs: dict[str, Any]) -> Any:
    """PGVectorStore.query in default (dense) mode, reading the embedding column too.

    ``_query_with_embedding`` is the store's own MMR prefetch: the same SELECT, order,
    filters and session settings as its default query, plus the embedding column.
    """
    from llama_index.core.vector_stores.types import VectorStoreQueryMode

    if query.mode != VectorStoreQueryMode.DEFAULT or query.query_embedding is None:
        return store.query(query, **kwargs)
    store._initialize()
    found = store._query_with_embedding(
        query.query_embedding, query.similarity_top_k, query.filters, **kwargs
    )
    return _with_embeddings(store, found)


async def _apostgres_query(store: Any, query: Any, kwargs: dict[str, Any]) -> Any:
    from llama_index.core.vector_stores.types import VectorStoreQueryMode

    if query.mode != VectorStoreQueryMode.DEFAULT or query.query_embedding is None:
        return await store.aquery(query, **kwargs)
    store._initialize()
    found = await store._async_query_with_embedding(
        query.query_embedding, query.similarity_top_k, query.filters, **kwargs
    )
    return _with_embeddings(store, found)


def _with_embeddings(store: Any, found: list[tuple[Any, list[float]]]) -> Any:
    result = store._db_rows_to_query_result([row for row, _ in found])
    for node, (_, vector) in zip(result.nodes, found, strict=True):
        if vector:
            node.embedding = list(vector)
    return result


def _postgres_applies(store: Any) -> bool:
    return all(
        hasattr(store, name)
        for name in ("_query_with_embedding", "_async_query_with_embedding",
                     "_db_rows_to_query_result", "_initialize")
    )


def _qdrant_query(store: Any, query: Any, kwargs: dict[str, Any]) -> Any:
    """QdrantVectorStore.query in default dense mode, with ``with_vectors`` set.

    The same ``query_points`` call as the store's own (filter, shard key, search
    params), plus the vectors; the store's ``parse_to_query_result`` already puts a
    returned vector on ``node.embedding``.
    """
    from llama_index.core.vector_stores.types import VectorStoreQueryMode
    from qdrant_client.http import models as rest

    if (query.mode != VectorStoreQueryMode.DEFAULT or query.query_embedding is None
            or store.enable_hybrid):
        return store.query(query, **kwargs)
    query_filter = kwargs.get("qdrant_filters")
    if query_filter is None:
        query_filter = store._build_query_filter(query)
    shard = kwargs.get("shard_identifier")
    params = kwargs.get("search_params")
    if isinstance(params, dict):
        params = rest.SearchParams(**params)
    name = store.dense_vector_name
    response = store._client.query_points(
        collection_name=store.collection_name,
        query=query.query_embedding,
        using=name,
        limit=query.similarity_top_k,
        query_filter=query_filter,
        shard_key_selector=(store._generate_shard_key_selector(shard)
                            if shard is not None else None),
        search_params=params,
        with_vectors=[name] if name else True,
    )
    return store.parse_to_query_result(response.points)


async def _aqdrant_query(store: Any, query: Any, kwargs: dict[str, Any]) -> Any:
    # The async client is separate (and a local path admits one client): the store's own
    # aquery; the postprocessor then reads the vectors by id (get_nodes).
    return await store.aquery(query, **kwargs)


def _qdrant_applies(store: Any) -> bool:
    return all(
        hasattr(store, name)
        for name in ("_client", "_build_query_filter", "parse_to_query_result",
                     "dense_vector_name", "enable_hybrid", "collection_name",
                     "_generate_shard_key_selector")
    )


STORE_QUERIES: dict[str, tuple[Callable[[Any], bool], StoreQuery, Any]] = {
    "PGVectorStore": (_postgres_applies, _postgres_query, _apostgres_query),
    "QdrantVectorStore": (_qdrant_applies, _qdrant_query, _aqdrant_query),
}


class VectorsAlongside:
    """A view of ``store`` whose ``query``/``aquery`` return nodes with their vectors.

    Every other attribute is the store's own. The store itself is not changed.
    """

    def __init__(self, store: Any, query: StoreQuery, aquery: Any) -> None:
        self._store = store
        self._query = query
        self._aquery = aquery

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def query(self, query: Any, **kwargs: Any) -> Any:
        return self._query(self._store, query, kwargs)

    async def aquery(self, query: Any, **kwargs: Any) -> Any:
        return await self._aquery(self._store, query, kwargs)


def _store_name(store: Any) -> str:
    class_name = getattr(store, "class_name", None)
    return class_name() if callable(class_name) else type(store).__name__


def with_vectors(store: Any) -> Any:
    """``store`` as a ``VectorsAlongside`` view when its query can return vectors, else
    ``store`` itself."""
    entry = STORE_QUERIES.get(_store_name(store))
    if entry is None or not entry[0](store):
        return store
    return VectorsAlongside(store, entry[1], entry[2])


def vectors_from_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    """The vectors ``store`` holds for ``node_ids`` (ids it lacks are left out)."""
    if not node_ids:
        return {}
    lookup = STORE_LOOKUPS.get(_store_name(store), _generic_store)
    return lookup(store, node_ids)
