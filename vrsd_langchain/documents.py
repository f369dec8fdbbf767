"""What a returned Document carries: a copy of the store's, plus why it was picked."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document

from vrsd_core import Selection

METADATA_KEY = "vrsd"
"""The metadata entry every returned Document gets::

    doc.metadata["vrsd"] == {
        "rank": 0,             # position in the selection order (0-based)
        "relevance": 0.71,     # cosine of the document's vector to the query vector
        "gain": 0.71,          # the method's objective gain when it was picked
        "method": "vrsd",      # the selection method
    }

For ``vrsd`` the gain is the sum-vector cosine after the pick; for ``mmr`` the
MMR score at pick time; for ``dpp`` the determinant ratio. An entry already
under this key (e.g. from an earlier reranking stage) is replaced.
"""


def annotate(documents: Sequence[Document], selection: Selection) -> list[Document]:
    """The picked documents, in selection order, as annotated copies.

    ``documents`` are the candidates in the order the selection indexes them.
    Each output is a copy (``page_content``, ``id`` and a deep copy of the
    metadata), so neither the store's nor the caller's objects change.
    """
    out: list[Document] = []
    picks = zip(
        selection.indices.tolist(),
        selection.relevance.tolist(),
        selection.gains.tolist(),
        strict=True,
    )
    for rank, (index, relevance, gain) in enumerate(picks):
        doc = documents[index]
        metadata: dict[str, Any] = copy.deepcopy(dict(doc.metadata))
        metadata[METADATA_KEY] = {
            "rank": rank,
            "relevance": float(relevance),
            "gain": float(gain),
            "method": selection.method,
        }
        out.append(doc.model_copy(update={"metadata": metadata}))
    return out
