"""FAISS (langchain-community): ``index.reconstruct_batch`` for the hits' vectors; a
filtered search is widened until ``n`` documents pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from langchain_core.documents import Document

from ._base import Candidates, FastPath, check_dimension, empty, has


def _fetch_faiss(store: Any, query: list[float], n: int, kwargs: dict[str, Any]) -> Candidates:
    index = store.index
    total = int(index.ntotal)
    if total == 0:
        return empty()
    check_dimension(query, int(index.d), "FAISS")  # else an AssertionError from faiss
    q = np.asarray([query], dtype=np.float32)
    if store._normalize_L2:
        import faiss

        faiss.normalize_L2(q)
    flt = kwargs.get("filter")
    keep = store._create_filter_func(flt) if flt is not None else None
    # Unfiltered: the index's top-n. Filtered: the top-n of the documents that
    # pass, widening the search until n pass or the index is exhausted (the
    # stock search stops at a fixed fetch_k and may return fewer).
    width = min(n, total) if keep is None else min(total, max(4 * n, 64))
    while True:
        _, found = index.search(q, width)
        positions = found[0][found[0] >= 0]
        docs: list[Document] = []
        kept: list[int] = []
        for pos in positions.tolist():
            doc_id = store.index_to_docstore_id[pos]
            doc = store.docstore.search(doc_id)
            if not isinstance(doc, Document):
                raise ValueError(f"vectorstore: FAISS docstore has no document for id {doc_id!r}")
            if keep is None or keep(doc.metadata):
                docs.append(doc)
                kept.append(pos)
                if len(docs) == n:
                    break
        if len(docs) == n or width >= total or keep is None:
            break
        width = min(total, 4 * width)
    if not docs:
        return empty()
    try:
        vectors = np.asarray(index.reconstruct_batch(np.asarray(kept, dtype=np.int64)))
    except RuntimeError:  # e.g. an IVF index without a direct map cannot reconstruct
        return Candidates(docs, None)
    return Candidates(docs, vectors)


FAST_PATH = FastPath(
    name="faiss",
    family="FAISS",
    module="langchain_community.vectorstores.faiss",
    class_name="FAISS",
    client="langchain-community",
    tested="==0.4.2",
    vectors="`index.reconstruct_batch`; an index that cannot reconstruct (IVF without a "
            "direct map) is re-embedded",
    private=("FAISS._create_filter_func", "FAISS._normalize_L2"),
    filters="a metadata dict or a callable",
    search_kwargs=("filter",),
    fetch=_fetch_faiss,
    applies=lambda s: has(
        s, "index", "docstore", "index_to_docstore_id", "_create_filter_func", "_normalize_L2"
    ),
)
