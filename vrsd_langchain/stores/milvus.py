"""Milvus (langchain-milvus; Milvus Lite or a server), one dense vector field.

The store's own search (``_collection_search``) asks Milvus for every field of
the collection, the vector field included, and its document conversion then
drops the vector. The fast path runs that same search and keeps the vector: one
request returns the documents and their vectors in the store's order, filtered
by the store's own boolean expression (``expr='split == "A"'``). Should a
deployment return hits without the vector field, the candidates are kept and
only their vectors are re-embedded (``Candidates.vectors`` None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._base import Candidates, FastPath, empty, has, refused_dimension, refused_filter


def _applies(store: Any) -> bool:
    if not has(store, "_collection_search", "_parse_document", "_vector_field", "fields",
               "_is_multi_vector", "_is_sparse"):
        return False
    return (
        isinstance(store._vector_field, str)
        and not store._is_multi_vector
        and not store._is_sparse
        and store._vector_field in store.fields
    )


def _check(kwargs: Mapping[str, Any]) -> None:
    expr = kwargs.get("expr")
    if expr is not None and not isinstance(expr, str):
        raise ValueError(
            f"expr: Milvus filters with a boolean expression string such as "
            f"'split == \"A\"', got {type(expr).__name__}"
        )
    param = kwargs.get("param")
    if param is not None and not isinstance(param, dict):
        raise ValueError(f"param: Milvus search params are a dict, got {type(param).__name__}")


def _rejection(exc: Exception, query: list[float], kwargs: Mapping[str, Any]
               ) -> ValueError | None:
    text = str(exc)
    low = text.lower()
    if "dimension" in low or "dim" in low.split():
        return refused_dimension(query, "the Milvus collection", text)
    if kwargs.get("expr") and ("expr" in low or "parse" in low or "plan" in low):
        return refused_filter("expr", "Milvus", kwargs["expr"], text)
    return None


def _fetch(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    from pymilvus.exceptions import MilvusException

    _check(kwargs)
    try:
        res = store._collection_search(
            query, k=n, param=kwargs.get("param"), expr=kwargs.get("expr"),
            timeout=kwargs.get("timeout"),
        )
    except MilvusException as exc:
        err = _rejection(exc, query, kwargs)
        if err is None:
            raise
        raise err from exc
    hits = list(res[0]) if res else []
    if not hits:
        return empty()
    field = store._vector_field
    raw = [hit["entity"].get(field) for hit in hits]
    # _parse_document pops fields from the dict it is given: give it a copy.
    docs = [store._parse_document(dict(hit["entity"])) for hit in hits]
    if any(v is None for v in raw):
        return Candidates(docs, None)
    return Candidates(docs, np.asarray(raw, dtype=np.float64))


FAST_PATH = FastPath(
    name="milvus",
    family="Milvus",
    module="langchain_milvus.vectorstores.milvus",
    class_name="Milvus",
    client="langchain-milvus",
    tested="==0.3.3",
    vectors="the search returns the vector field",
    limits="several or sparse vector fields",
    private=("Milvus._collection_search", "Milvus._parse_document", "Milvus._vector_field",
             "Milvus._is_multi_vector", "Milvus._is_sparse"),
    filters="a boolean expression string (`expr`)",
    tested_on="Milvus Lite (the same client API as a cluster)",
    search_kwargs=("expr", "param", "timeout"),
    fetch=_fetch,
    check=_check,
    applies=_applies,
)
