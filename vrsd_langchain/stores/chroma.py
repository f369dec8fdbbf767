"""Chroma (langchain-chroma): one ``collection.query`` with ``include=["embeddings", ...]``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from langchain_core.documents import Document

from ._base import Candidates, FastPath, empty, has, refused_dimension, refused_filter


def _check_chroma(kwargs: Mapping[str, Any]) -> None:
    if "filter" in kwargs and "where" in kwargs:
        raise ValueError("filter: give either 'filter' or 'where' (the same Chroma filter)")


# Chroma's n_results is a u32 (the server refuses more, the embedded client overflows
# past a C long); a fetch_k beyond any collection's size changes nothing, so cap it.
_CHROMA_MAX_RESULTS = 2**32 - 1


def _chroma_rejection(
    exc: Exception, query: list[float], kwargs: Mapping[str, Any]
) -> ValueError | None:
    """A ValueError naming the argument Chroma rejected, or None if it is neither.

    Chroma checks the query's dimension and the filters only when it runs the
    query (the server, or the embedded client's Rust core) and answers with an
    ``InvalidArgumentError`` (the client's own filter checks raise a ValueError);
    neither names the argument. Transport and other errors are not handled here.
    """
    text = str(exc)
    if "dimension" in text.lower():
        return refused_dimension(query, "the Chroma collection", text)
    given = [name for name in ("filter", "where", "where_document") if name in kwargs]
    if not given:
        return None
    name = given[0]
    if "where_document" in given and ("document" in text.lower() or len(given) == 1):
        name = "where_document"
    return refused_filter(name, "Chroma", kwargs[name], text)


def _fetch_chroma(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    from chromadb.errors import InvalidArgumentError

    _check_chroma(kwargs)
    where = kwargs.get("filter", kwargs.get("where"))
    # One round trip: an empty collection answers with empty lists.
    try:
        res = store._collection.query(
            query_embeddings=[query],
            n_results=min(n, _CHROMA_MAX_RESULTS),
            where=where,
            where_document=kwargs.get("where_document"),
            include=["embeddings", "documents", "metadatas", "distances"],
        )
    except (InvalidArgumentError, ValueError) as exc:
        err = _chroma_rejection(exc, query, {k: v for k, v in kwargs.items() if v is not None})
        if err is None:
            raise
        raise err from exc
    texts = res["documents"][0]
    # Rows without text are dropped as langchain-chroma drops them, with their vectors.
    rows = [i for i, text in enumerate(texts) if text is not None]
    if not rows:
        return empty()
    metadatas, ids = res["metadatas"][0], res["ids"][0]
    docs = [Document(page_content=texts[i], metadata=metadatas[i] or {}, id=ids[i]) for i in rows]
    vectors = np.asarray(res["embeddings"][0])[rows]
    return Candidates(docs, vectors)


FAST_PATH = FastPath(
    name="chroma",
    family="Chroma",
    module="langchain_chroma.vectorstores",
    class_name="Chroma",
    client="langchain-chroma",
    tested="==1.1.0",
    vectors='one query with `include=["embeddings"]`',
    private=("Chroma._collection",),
    filters="a metadata dict (`filter`/`where`), `where_document`",
    tested_on="embedded, and its own server on 127.0.0.1",
    search_kwargs=("filter", "where", "where_document"),
    fetch=_fetch_chroma,
    check=_check_chroma,
    applies=lambda s: has(s, "_collection"),
)
