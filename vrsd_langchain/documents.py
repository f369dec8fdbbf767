"""What a returned Document carries: a copy of the store's, plus why it was picked."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from vrsd_core import Selection
from vrsd_kit.contract import METADATA_KEY, selection_metadata_all, source_of, with_entry
from vrsd_kit.lexical import PoolRelevance

__all__ = ["METADATA_KEY", "annotate"]


def annotate(documents: Sequence[Document], selection: Selection,
             words: PoolRelevance | None = None,
             metadata_key: str = METADATA_KEY) -> list[Document]:
    """The picked documents, in selection order, as annotated copies.

    ``documents`` are the candidates in the order the selection indexes them.
    Each output is a copy (``page_content``, ``id`` and a deep copy of the
    metadata) whose metadata gains ``metadata_key`` = ``{"rank", "relevance",
    "gain", "method"}`` (``vrsd_kit.contract.selection_metadata``; a vrsd entry
    already under the key is replaced, a value of the user's own is kept and the
    entry goes under ``metadata_key + "_"``: ``vrsd_kit.contract.with_entry``), so
    neither the store's nor the caller's objects change.
    """
    out: list[Document] = []
    entries = selection_metadata_all(selection, [doc.id for doc in documents], words,
                                     [doc.page_content for doc in documents],
                                     [source_of(doc.metadata) for doc in documents])
    for index, entry in zip(selection.indices.tolist(), entries, strict=True):
        doc = documents[index]
        metadata, _ = with_entry(doc.metadata, entry, metadata_key)
        out.append(doc.model_copy(update={"metadata": metadata}))
    return out
