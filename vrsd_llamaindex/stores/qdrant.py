"""QdrantVectorStore (llama-index-vector-stores-qdrant): ``query_points`` with the
vectors, through ``DiverseRerankRetriever``; else ``get_nodes`` by id."""

from __future__ import annotations

from typing import Any

from ._base import StorePath


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


STORE_PATH = StorePath(
    name="qdrant", family="Qdrant",
    module="llama_index.vector_stores.qdrant.base", class_name="QdrantVectorStore",
    client="llama-index-vector-stores-qdrant", tested="==0.10.4",
    vectors="`query_points(with_vectors=...)` through `vrsd_llamaindex.DiverseRerankRetriever`; "
            "else `get_nodes` by id",
    limits="hybrid mode",
    private=("QdrantVectorStore._client", "QdrantVectorStore._build_query_filter",
             "QdrantVectorStore._generate_shard_key_selector"),
    tested_on="local mode",
    query=_qdrant_query, aquery=_aqdrant_query, query_applies=_qdrant_applies,
)
