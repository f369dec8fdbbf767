"""InMemoryVectorStore (langchain-core): its own search returns each stored vector."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from langchain_core.vectorstores import InMemoryVectorStore

from ._base import Candidates, FastPath, check_dimension, empty, has


def _check_in_memory(kwargs: Mapping[str, Any]) -> None:
    flt = kwargs.get("filter")
    if flt is not None and not callable(flt):
        raise ValueError(
            "filter: InMemoryVectorStore filters with a callable (Document) -> bool, "
            f"got {type(flt).__name__}"
        )


def _fetch_in_memory(
    store: InMemoryVectorStore, query: list[float], n: int, kwargs: dict[str, Any]
) -> Candidates:
    flt = kwargs.get("filter")
    first = next(iter(store.store.values()), None)
    if first is not None:  # else langchain_core's "Number of columns in X and Y must be ..."
        check_dimension(query, len(first["vector"]), "InMemoryVectorStore")
    # The store's own search; its third element is the stored vector.
    hits = store._similarity_search_with_score_by_vector(embedding=query, k=n, filter=flt)
    if not hits:
        return empty()
    return Candidates([doc for doc, _, _ in hits], np.asarray([vec for _, _, vec in hits]))


FAST_PATH = FastPath(
    name="in_memory",
    family="in memory",
    module="langchain_core.vectorstores.in_memory",
    class_name="InMemoryVectorStore",
    client="langchain-core",
    tested="==1.7.2",
    vectors="its own search returns the stored vectors",
    private=("InMemoryVectorStore._similarity_search_with_score_by_vector",),
    filters="a callable `(Document) -> bool`",
    search_kwargs=("filter",),
    fetch=_fetch_in_memory,
    check=_check_in_memory,
    applies=lambda s: has(s, "_similarity_search_with_score_by_vector"),
)
