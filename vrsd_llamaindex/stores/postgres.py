"""PGVectorStore (llama-index-vector-stores-postgres): its own query with the embedding
column, and one SELECT of ids and vectors for a lookup."""

from __future__ import annotations

from typing import Any

from ._base import StorePath, Vector, generic_lookup


def _postgres_lookup(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # one SELECT of the ids and vectors only (its get_nodes also reads text and metadata
    # the caller already has)
    table = getattr(store, "_table_class", None)
    if table is None or not hasattr(store, "_session") or not hasattr(store, "_initialize"):
        return generic_lookup(store, node_ids)
    from sqlalchemy import select

    store._initialize()
    stmt = select(table.node_id, table.embedding).where(
        table.node_id.in_(list(dict.fromkeys(node_ids)))
    )
    with store._session() as session, session.begin():
        rows = session.execute(stmt).all()
    return {r.node_id: list(r.embedding) for r in rows if r.embedding is not None}


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


STORE_PATH = StorePath(
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
    lookup=_postgres_lookup, query=_postgres_query, aquery=_apostgres_query,
    query_applies=_postgres_applies,
)
