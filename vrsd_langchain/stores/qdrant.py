"""Qdrant (langchain-qdrant), dense mode: ``query_points(with_vectors=...)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Candidates, FastPath, dimension_error, empty, has


def _qdrant_dense(store: Any) -> bool:
    mode = getattr(store, "retrieval_mode", None)
    return str(getattr(mode, "value", mode)) == "dense" and has(
        store, "client", "_document_from_point", "vector_name"
    )


def _qdrant_dimension(store: Any) -> int | None:
    """The collection's vector size (one more round trip), or None if unknown."""
    try:
        vectors = store.client.get_collection(store.collection_name).config.params.vectors
    except Exception:  # noqa: BLE001 - only used to explain another error
        return None
    if isinstance(vectors, dict):
        vectors = vectors.get(store.vector_name)
    size = getattr(vectors, "size", None)
    return size if isinstance(size, int) else None


def _fetch_qdrant(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    try:
        return _query_qdrant(store, query, n, kwargs)
    except Exception as exc:
        # Qdrant checks the dimension during the query (local mode: a numpy shape
        # error; a server: UnexpectedResponse). Only then ask for the collection's size.
        size = _qdrant_dimension(store)
        err = None if size is None else dimension_error(query, size, "the Qdrant collection")
        if err is None:
            raise
        raise err from exc


def _query_qdrant(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    name = store.vector_name
    points = store.client.query_points(
        collection_name=store.collection_name,
        query=query,
        using=name or None,
        query_filter=kwargs.get("filter"),
        search_params=kwargs.get("search_params"),
        score_threshold=kwargs.get("score_threshold"),
        consistency=kwargs.get("consistency"),
        limit=n,
        with_payload=True,
        with_vectors=[name] if name else True,
    ).points
    if not points:
        return empty()
    docs = [
        store._document_from_point(
            p, store.collection_name, store.content_payload_key, store.metadata_payload_key
        )
        for p in points
    ]
    raw = [p.vector[name] if isinstance(p.vector, dict) else p.vector for p in points]
    return Candidates(docs, np.asarray(raw, dtype=np.float64))


FAST_PATH = FastPath(
    name="qdrant",
    family="Qdrant",
    module="langchain_qdrant.qdrant",
    class_name="QdrantVectorStore",
    client="langchain-qdrant",
    tested="==1.1.0",
    vectors="`query_points(with_vectors=...)`",
    limits="sparse and hybrid retrieval modes",
    private=("QdrantVectorStore._document_from_point",),
    filters="a `qdrant_client.models.Filter`",
    tested_on="local mode",
    search_kwargs=("filter", "search_params", "score_threshold", "consistency"),
    fetch=_fetch_qdrant,
    applies=_qdrant_dense,
)
