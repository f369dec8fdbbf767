"""Postgres + pgvector (langchain-postgres): ``PGVector`` and ``PGVectorStore``.

Both stores' own similarity query already selects the embedding column with
the rows (their MMR reads it), so the fast path runs that same query, the
store's private query method, and keeps the vectors: one SQL statement returns
the rows and their vectors in the store's order, filtered by the store's own
filter syntax (a dict such as ``{"split": {"$eq": "A"}}``).

* ``PGVector`` (the classic store, ``langchain_postgres.vectorstores``):
  ``_PGVector__query_collection`` in a synchronous session (a store built with
  ``async_mode=True`` has no synchronous session and falls back).
* ``PGVectorStore`` (``langchain_postgres.v2``, over a ``PGEngine``):
  ``AsyncPGVectorStore._AsyncPGVectorStore__query_collection`` run on the
  engine's background loop, as the store's own synchronous methods do. A store
  with a hybrid search configuration (dense + full-text fusion) falls back.

Server and connection errors (the server stopped, a refused connection) are
the driver's own ``sqlalchemy.exc.OperationalError``, raised as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from langchain_core.documents import Document

from ._base import Candidates, FastPath, empty, has, refused_dimension, refused_filter


def _check_filter(kwargs: Mapping[str, Any]) -> None:
    flt = kwargs.get("filter")
    if flt is not None and not isinstance(flt, dict):
        raise ValueError(
            "filter: Postgres stores filter with a dict, e.g. {'split': {'$eq': 'A'}}, "
            f"got {type(flt).__name__}"
        )


def _filter_error(exc: Exception, flt: Any) -> ValueError:
    return refused_filter("filter", "the Postgres store", flt, exc)


def _translate(exc: Exception, query: list[float]) -> ValueError | None:
    """A ValueError naming ``embeddings`` for pgvector's dimension check, else None."""
    text = str(exc)
    if "different vector dimensions" in text or ("expected" in text and "dimensions" in text):
        return refused_dimension(query, "the Postgres table", text.splitlines()[0])
    return None


def _run_query(run: Callable[[], Any], query: list[float]) -> Any:
    """``run()`` (the store's own query), with pgvector's dimension error as a ValueError
    naming ``embeddings``; any other database error passes through unchanged."""
    from sqlalchemy.exc import StatementError

    try:
        return run()
    except StatementError as exc:
        err = _translate(exc, query)
        if err is None:
            raise
        raise err from exc


def _vector(value: Any) -> np.ndarray:
    # pgvector's SQLAlchemy type gives a numpy array; a text column (PGVectorStore's raw
    # SQL) gives the vector's text form '[0.1,0.2,...]', which is valid JSON.
    if isinstance(value, str):
        return np.asarray(json.loads(value), dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


# --- PGVector (langchain_postgres.vectorstores) ---------------------------------


def _pgvector_applies(store: Any) -> bool:
    return (
        has(store, "_PGVector__query_collection", "_create_filter_clause", "async_mode",
            "use_jsonb", "embeddings")
        and not store.async_mode
    )


def _fetch_pgvector(store: Any, query: list[float], n: int, kwargs: dict[str, Any]
                    ) -> Candidates:

    _check_filter(kwargs)
    flt = kwargs.get("filter")
    if flt and store.use_jsonb:
        try:  # builds the SQL clause only; the store builds it again in its query
            store._create_filter_clause(flt)
        except (ValueError, NotImplementedError) as exc:
            raise _filter_error(exc, flt) from exc
    results = _run_query(
        lambda: store._PGVector__query_collection(embedding=query, k=n, filter=flt or None),
        query,
    )
    if not results:
        return empty()
    # The store's own row -> Document conversion (_results_to_docs_and_scores).
    docs = [
        Document(
            id=str(row.EmbeddingStore.id),
            page_content=row.EmbeddingStore.document,
            metadata=row.EmbeddingStore.cmetadata,
        )
        for row in results
    ]
    return Candidates(docs, np.stack([_vector(row.EmbeddingStore.embedding) for row in results]))


# --- PGVectorStore (langchain_postgres.v2) ---------------------------------------


def _inner(store: Any) -> Any:
    return getattr(store, "_PGVectorStore__vs", None)


def _pgvector_store_applies(store: Any) -> bool:
    vs = _inner(store)
    return (
        vs is not None
        and has(store, "_engine")
        and has(store._engine, "_run_as_sync")
        and has(vs, "_AsyncPGVectorStore__query_collection", "_create_filter_clause",
                "hybrid_search_config", "id_column", "content_column", "embedding_column",
                "metadata_columns", "metadata_json_column")
        and vs.hybrid_search_config is None
    )


def _fetch_pgvector_store(store: Any, query: list[float], n: int, kwargs: dict[str, Any]
                          ) -> Candidates:

    _check_filter(kwargs)
    vs = _inner(store)
    flt = kwargs.get("filter")
    if flt:
        try:
            vs._create_filter_clause(flt)
        except (ValueError, NotImplementedError) as exc:
            raise _filter_error(exc, flt) from exc
    rows = _run_query(
        lambda: store._engine._run_as_sync(
            vs._AsyncPGVectorStore__query_collection(query, k=n, filter=flt or None)
        ),
        query,
    )
    if not rows:
        return empty()
    docs = []
    for row in rows:  # as AsyncPGVectorStore.asimilarity_search_with_score_by_vector does
        json_meta = vs.metadata_json_column and row[vs.metadata_json_column]
        metadata = dict(json_meta) if json_meta else {}
        for col in vs.metadata_columns:
            metadata[col] = row[col]
        docs.append(Document(page_content=row[vs.content_column], metadata=metadata,
                             id=str(row[vs.id_column])))
    return Candidates(docs, np.stack([_vector(row[vs.embedding_column]) for row in rows]))


def _postgres_path(**own: Any) -> FastPath:
    """A Postgres fast path: what the two stores share, plus ``own``."""
    return FastPath(
        family="Postgres + pgvector",
        client="langchain-postgres",
        tested="==0.0.19",
        filters="a dict such as `{'split': {'$eq': 'A'}}`",
        tested_on="a real Postgres 16 + pgvector server (PyPI `pgserver`, unix socket), "
                  "started by the tests",
        search_kwargs=("filter",),
        check=_check_filter,
        **own,
    )


PGVECTOR = _postgres_path(
    name="pgvector",
    module="langchain_postgres.vectorstores",
    class_name="PGVector",
    vectors="the store's own SQL statement returns the rows and their vectors",
    limits="`async_mode=True`",
    private=("PGVector._PGVector__query_collection (name-mangled)",
             "PGVector._create_filter_clause"),
    fetch=_fetch_pgvector,
    applies=_pgvector_applies,
)

PGVECTOR_STORE = _postgres_path(
    name="pgvector_store",
    module="langchain_postgres.v2.vectorstores",
    class_name="PGVectorStore",
    vectors="the same query as the store's, embedding column kept",
    limits="a hybrid search configuration",
    private=("PGVectorStore._PGVectorStore__vs (name-mangled)",
             "AsyncPGVectorStore._AsyncPGVectorStore__query_collection (name-mangled)",
             "PGEngine._run_as_sync"),
    fetch=_fetch_pgvector_store,
    applies=_pgvector_store_applies,
)
