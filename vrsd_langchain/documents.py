"""What a returned Document carries: a copy of the store's, plus why it was picked."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document

from vrsd_core import Selection
from vrsd_kit.contract import METADATA_KEY, selection_metadata_all
from vrsd_kit.lexical import PoolRelevance

__all__ = ["METADATA_KEY", "annotate"]


def annotate(documents: Sequence[Document], selection: Selection,
             words: PoolRelevance | None = None) -> list[Document]:
    """The picked documents, in selection order, as annotated copies.

    ``documents`` are the candidates in the order the selection indexes them.
    Each output is a copy (``page_content``, ``id`` and a deep copy of the
    metadata) whose metadata gains ``METADATA_KEY`` = ``{"rank", "relevance",
    "gain", "method"}`` (``vrsd_kit.contract.selection_metadata``; an entry
    already under the key is replaced), so neither the store's nor the
    caller's objects change.
    """
    out: list[Document] = []
    ids = [doc.id for doc in documents]
    entries = selection_metadata_all(selection, ids, words)
    for index, entry in zip(selection.indices.tolist(), entries, strict=True):
        doc = documents[index]
        metadata: dict[str, Any] = copy.deepcopy(dict(doc.metadata))
        metadata[METADATA_KEY] = entry
        out.append(doc.model_copy(update={"metadata": metadata}))
    return out
