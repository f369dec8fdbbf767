"""LanceDB (langchain-community ``LanceDB``): the store's own ``_query`` returns an Arrow
table that holds the vector column beside the text and metadata.

The fast path runs that query (same search, limit, filter, prefilter and metric as
``similarity_search_by_vector``), converts the rows with the store's own
``results_to_docs`` and keeps the vector column: one query, the store's order.
Filters are the store's: a SQL ``where`` string (``"metadata.split = 'A'"``) or a
dict it converts. Hybrid (full-text + vector) search is not a vector search and
is not taken here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._base import Candidates, FastPath, empty, has, refused_dimension, refused_filter

_VECTOR_QUERY_KWARGS = ("prefilter", "metrics")


def _applies(store: Any) -> bool:
    return has(store, "_query", "results_to_docs", "_vector_key", "get_table")


def _check(kwargs: Mapping[str, Any]) -> None:
    flt = kwargs.get("filter")
    if flt is not None and not isinstance(flt, (str, dict)):
        raise ValueError(
            "filter: LanceDB filters with a SQL where string such as \"metadata.split = 'A'\" "
            f"(or a dict), got {type(flt).__name__}"
        )


def _fetch(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    _check(kwargs)
    flt = kwargs.get("filter")
    extra = {k: kwargs[k] for k in _VECTOR_QUERY_KWARGS if kwargs.get(k) is not None}
    try:
        table = store._query(query, n, filter=flt, name=kwargs.get("name"), **extra)
    except ValueError as exc:  # lancedb: bad where clause, wrong dimension, ...
        text = str(exc)
        if "dim" in text.lower():
            raise refused_dimension(query, "the LanceDB table", text) from exc
        if flt is not None:
            raise refused_filter("filter", "LanceDB", flt, text) from exc
        raise
    if len(table) == 0:
        return empty()
    docs = store.results_to_docs(table)
    vectors = np.asarray(table[store._vector_key].to_pylist(), dtype=np.float64)
    return Candidates(docs, vectors)


FAST_PATH = FastPath(
    name="lancedb",
    family="LanceDB",
    module="langchain_community.vectorstores.lancedb",
    class_name="LanceDB",
    client="langchain-community",
    tested="==0.4.2",
    vectors="its query's vector column",
    private=("LanceDB._query", "LanceDB._vector_key"),
    filters="a SQL where string or a dict",
    search_kwargs=("filter", "name", *_VECTOR_QUERY_KWARGS),
    fetch=_fetch,
    check=_check,
    applies=_applies,
)
