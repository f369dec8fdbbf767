"""What every fast path shares: the ``Candidates`` it returns and its ``FastPath`` record.

A fast path reads the candidates of a query *and their stored vectors* from one
kind of store, in the store's own order, so that only the query is embedded.
Each store's fast path lives in its own module beside this one, the only place
that touches that store's internals; ``applies`` checks the internals are still
there, so a changed store version falls back to re-embedding instead of breaking.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.documents import Document


@dataclass(frozen=True)
class Candidates:
    """The store's top-n for a query, in the store's order.

    Attributes:
        documents: the candidate Documents as the store returned them (not yet copied).
        vectors: (n, d) their vectors, row i belonging to ``documents[i]``; None when
            a fast path found the documents but the store could not hand out their
            vectors (e.g. a FAISS index without reconstruction): they are then
            re-embedded like the fallback's.
    """

    documents: list[Document]
    vectors: np.ndarray | None

    def __len__(self) -> int:
        return len(self.documents)


def empty() -> Candidates:
    return Candidates([], np.zeros((0, 0)))


def dimension_error(query: Sequence[float], stored: int, store: str) -> ValueError | None:
    """A ValueError naming ``embeddings`` if the query vector's length is not ``stored``."""
    if len(query) == stored:
        return None
    return ValueError(
        f"embeddings: embed_query returned a {len(query)}-d vector but {store}'s "
        f"vectors are {stored}-d; use the model the store was built with"
    )


def check_dimension(query: Sequence[float], stored: int, store: str) -> None:
    err = dimension_error(query, stored, store)
    if err is not None:
        raise err


def has(store: Any, *names: str) -> bool:
    """The store still has the internals a fast path reads (else: the generic fallback)."""
    return all(hasattr(store, name) for name in names)


@dataclass(frozen=True)
class FastPath:
    """How to read candidates and their stored vectors from one kind of store."""

    name: str
    module: str
    class_name: str
    search_kwargs: tuple[str, ...]
    fetch: Callable[[Any, list[float], int, dict[str, Any]], Candidates]
    applies: Callable[[Any], bool] = lambda store: True
    check: Callable[[Mapping[str, Any]], None] = lambda kwargs: None
    """Raises ValueError for search argument values the store would reject."""

    def store_class(self) -> type | None:
        mod = sys.modules.get(self.module)
        return getattr(mod, self.class_name, None) if mod is not None else None
