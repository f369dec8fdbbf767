"""InMemoryVectorStore (langchain-core): its own search returns each stored vector."""

from __future__ import annotations

from collections import Counter
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


def _lengths(store: InMemoryVectorStore) -> Counter[int]:
    """How many stored vectors have each length."""
    return Counter(len(entry["vector"]) for entry in store.store.values())


def mixed_lengths(store: InMemoryVectorStore, lengths: Counter[int], query: int) -> ValueError:
    """The ValueError (naming ``vectorstore``) for a store whose vectors differ in length:
    the odd ones are named, and the query's length says which side the model is on."""
    usual = lengths.most_common(1)[0][0]
    odd = [(key, len(entry["vector"])) for key, entry in store.store.items()
           if len(entry["vector"]) != usual]
    shown = ", ".join(f"{key!r} ({size}-d)" for key, size in odd[:3])
    more = f" and {len(odd) - 3} more" if len(odd) > 3 else ""
    agrees = (f"the query's {query}-d vector agrees with the rest" if query == usual else
              f"the query's vector is {query}-d")
    return ValueError(
        f"vectorstore: InMemoryVectorStore holds vectors of different lengths: "
        f"{lengths[usual]} are {usual}-d, but {shown}{more}; {agrees}. Add those "
        "documents again with the store's embeddings")


def _fetch_in_memory(
    store: InMemoryVectorStore, query: list[float], n: int, kwargs: dict[str, Any]
) -> Candidates:
    flt = kwargs.get("filter")
    lengths = _lengths(store)
    if len(lengths) > 1:  # the store is damaged, whatever the query's length
        raise mixed_lengths(store, lengths, len(query))
    if lengths:  # else langchain_core's "Number of columns in X and Y must be ..."
        check_dimension(query, next(iter(lengths)), "InMemoryVectorStore")
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
