"""What every fast path shares: the ``Candidates`` it returns, its ``FastPath`` record,
and the errors a store's refusal is translated into.

A fast path reads the candidates of a query *and their stored vectors* from one
kind of store, in the store's own order, so that only the query is embedded.
Each store's fast path lives in its own module beside this one, the only place
that touches that store's internals; ``applies`` checks the internals are still
there, so a changed store version falls back to re-embedding instead of breaking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.documents import Document

from vrsd_kit.stores import StoreRecord


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


def refused_dimension(query: Sequence[float], store: str, detail: str) -> ValueError:
    """The ValueError (naming ``embeddings``) for a query vector the store's dimension
    check refused; ``detail`` is the store's own words or the stored dimension."""
    return ValueError(
        f"embeddings: embed_query returned a {len(query)}-d vector that {store} refuses "
        f"({detail}); use the model the store was built with"
    )


def refused_filter(name: str, store: str, value: Any, detail: Any) -> ValueError:
    """The ValueError (naming the search argument ``name``) for a filter the store refused."""
    return ValueError(f"{name}: {store} refused the filter {value!r}: {detail}")


def dimension_error(query: Sequence[float], stored: int, store: str) -> ValueError | None:
    """``refused_dimension`` if the query vector's length is not ``stored``, else None."""
    if len(query) == stored:
        return None
    return refused_dimension(query, store, f"its vectors are {stored}-d")


def check_dimension(query: Sequence[float], stored: int, store: str) -> None:
    err = dimension_error(query, stored, store)
    if err is not None:
        raise err


def has(store: Any, *names: str) -> bool:
    """The store still has the internals a fast path reads (else: the generic fallback)."""
    return all(hasattr(store, name) for name in names)


def _always(store: Any) -> bool:
    return True


def _nothing_to_check(kwargs: Mapping[str, Any]) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class FastPath(StoreRecord):
    """How to read candidates and their stored vectors from one kind of store.

    Attributes (beside ``StoreRecord``'s):
        search_kwargs: the search arguments it understands; any other is a ValueError.
        fetch: ``(store, query vector, n, search kwargs) -> Candidates``.
        applies: the instance has what ``fetch`` reads (else the fallback, with
            ``limits`` as the reason given).
        check: raises ValueError for search argument values the store would reject.
    """

    search_kwargs: tuple[str, ...]
    fetch: Callable[[Any, list[float], int, dict[str, Any]], Candidates]
    applies: Callable[[Any], bool] = _always
    check: Callable[[Mapping[str, Any]], None] = _nothing_to_check
