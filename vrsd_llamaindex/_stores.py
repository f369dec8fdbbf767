"""Stored vectors for nodes that arrive without ``node.embedding``.

Most LlamaIndex stores hand nodes back without their vectors (the
``VectorStoreIndex`` docstore strips them, Chroma rebuilds nodes from text and
metadata). Reading the vectors back from the store is much cheaper than
re-embedding the text, so each store that can return them gets a ``StorePath``
record in ``STORE_PATHS`` (recognised by class, as the LangChain fast paths
are): a lookup by node id, and for some a query that returns the vectors with
the nodes. Any other store is tried through the generic ``get_nodes``.
Whatever no lookup finds is embedded by the caller, under its ``reembed``
policy (``vrsd_core.stores.check_reembedding``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vrsd_core.stores import StoreRecord

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


AsyncStoreQuery = Callable[[Any, Any, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class StorePath(StoreRecord):
    """How to read stored vectors from one kind of LlamaIndex vector store.

    Attributes (beside ``StoreRecord``'s):
        lookup: ``(store, node ids) -> {node id: vector}``; None: the store's ``get_nodes``.
        query, aquery: the store's query, returning the nodes with their vectors
            (``VRSDRetriever`` queries through them); None: the store's own query.
        query_applies: the instance has what ``query`` reads.
    """

    lookup: StoreLookup | None = None
    query: StoreQuery | None = None
    aquery: AsyncStoreQuery | None = None
    query_applies: Callable[[Any], bool] = lambda store: True


STORE_PATHS: tuple[StorePath, ...] = (
    StorePath(
        name="simple", family="in memory",
        module="llama_index.core.vector_stores.simple", class_name="SimpleVectorStore",
        client="llama-index-core", tested="==0.14.25",
        vectors="stored, by node id (and `node.embedding`)",
        lookup=_simple_store,
    ),
    StorePath(
        name="chroma", family="Chroma",
        module="llama_index.vector_stores.chroma.base", class_name="ChromaVectorStore",
        client="llama-index-vector-stores-chroma", tested="==0.6.0",
        vectors="`collection.get(ids, include=[\"embeddings\"])`",
        lookup=_chroma_store,
    ),
    StorePath(
        name="postgres", family="Postgres + pgvector",
        module="llama_index.vector_stores.postgres.base", class_name="PGVectorStore",
        client="llama-index-vector-stores-postgres", tested="==0.9.0",
        vectors="its own query with the embedding column (`_query_with_embedding`)",
        limits="hybrid and sparse query modes",
        private=("PGVectorStore._query_with_embedding",
                 "PGVectorStore._async_query_with_embedding",
                 "PGVectorStore._db_rows_to_query_result", "PGVectorStore._table_class",
                 "PGVectorStore._session", "PGVectorStore._initialize"),
        tested_on="a real Postgres 16 + pgvector server (PyPI `pgserver`, unix socket), "
                  "started by the tests",
        lookup=_postgres_store, query=_postgres_query, aquery=_apostgres_query,
        query_applies=_postgres_applies,
    ),
    StorePath(
        name="qdrant", family="Qdrant",
        module="llama_index.vector_stores.qdrant.base", class_name="QdrantVectorStore",
        client="llama-index-vector-stores-qdrant", tested="==0.10.4",
        vectors="`query_points(with_vectors=...)` through `vrsd_llamaindex.VRSDRetriever`; "
                "else `get_nodes` by id",
        limits="hybrid mode",
        private=("QdrantVectorStore._client", "QdrantVectorStore._build_query_filter",
                 "QdrantVectorStore._generate_shard_key_selector"),
        tested_on="local mode",
        query=_qdrant_query, aquery=_aqdrant_query, query_applies=_qdrant_applies,
    ),
    StorePath(
        name="milvus", family="Milvus",
        module="llama_index.vector_stores.milvus.base", class_name="MilvusVectorStore",
        client="llama-index-vector-stores-milvus", tested="==1.2.0",
        vectors="`get_nodes` by id", tested_on="Milvus Lite (the same client API as a cluster)",
    ),
    StorePath(
        name="lancedb", family="LanceDB",
        module="llama_index.vector_stores.lancedb.base", class_name="LanceDBVectorStore",
        client="llama-index-vector-stores-lancedb", tested="==0.6.0",
        vectors="its query sets `node.embedding`",
    ),
)


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
    lookup = path.lookup if path is not None and path.lookup is not None else _generic_store
    return lookup(store, node_ids)
