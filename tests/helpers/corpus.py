"""The integration tests' LangChain corpus: the first ARC-DA texts as Documents."""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document


def arc_documents(arc_da: Any, size: int, *, source: bool = False) -> list[Document]:
    """The first ``size`` ARC-DA corpus texts, ids ``arc-<row>``, with metadata ``row``
    (position), ``source`` (the ARC-DA id; only if asked) and ``split`` ("A" for even
    rows, "B" for odd)."""
    docs = []
    for i, text in enumerate(arc_da.corpus[:size]):
        metadata: dict[str, Any] = {"row": i}
        if source:
            metadata["source"] = arc_da.corpus_ids[i]
        metadata["split"] = "AB"[i % 2]
        docs.append(Document(id=f"arc-{i}", page_content=text, metadata=metadata))
    return docs
