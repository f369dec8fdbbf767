"""The vector store every protocol retrieves from: a LangChain store over precomputed
vectors, each document's metadata holding its row."""

from __future__ import annotations

import warnings
from typing import Any

STORES = ("faiss", "memory")


def build_store(kind: str, texts: list[str], vectors: list[list[float]], embeddings: Any) -> Any:
    """A LangChain vector store holding ``texts`` with their precomputed ``vectors``.

    Each document's metadata carries ``row`` (its position in ``texts``).
    ``faiss``: exact cosine (flat inner-product index over L2-normalised vectors);
    ``memory``: ``InMemoryVectorStore`` (exact cosine, ~40 ms per query at 5k texts).
    """
    ids = [str(i) for i in range(len(texts))]
    metadatas = [{"row": i} for i in range(len(texts))]
    if kind == "faiss":
        from langchain_community.vectorstores import FAISS
        from langchain_community.vectorstores.utils import DistanceStrategy

        with warnings.catch_warnings():
            # FAISS warns that normalize_L2 "is not applicable" to inner product, yet
            # applies it (to the index and every query): exactly the cosine we want.
            warnings.filterwarnings("ignore", message="Normalizing L2")
            return FAISS.from_embeddings(
                list(zip(texts, vectors, strict=True)), embeddings, metadatas=metadatas,
                ids=ids, distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
                normalize_L2=True,
            )
    if kind == "memory":
        from langchain_core.vectorstores import InMemoryVectorStore

        store = InMemoryVectorStore(embeddings)
        # Embeds through ``embeddings``: with the on-disk cache, a lookup, not a re-encode.
        store.add_texts(texts, metadatas=metadatas, ids=ids)
        return store
    raise ValueError(f"store: expected one of {STORES}, got {kind!r}")
