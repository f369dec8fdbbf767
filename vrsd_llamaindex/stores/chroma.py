"""ChromaVectorStore (llama-index-vector-stores-chroma): ``collection.get`` by node id."""

from __future__ import annotations

from typing import Any

from ._base import StorePath, Vector


def _chroma_lookup(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # ChromaVectorStore.client is the chromadb collection; ids are node ids.
    got = store.client.get(ids=list(dict.fromkeys(node_ids)), include=["embeddings"])
    vectors = got.get("embeddings")
    if vectors is None:
        return {}
    return {i: v for i, v in zip(got["ids"], vectors, strict=True) if v is not None}


STORE_PATH = StorePath(
    name="chroma", family="Chroma",
    module="llama_index.vector_stores.chroma.base", class_name="ChromaVectorStore",
    client="llama-index-vector-stores-chroma", tested="==0.6.0",
    vectors="`collection.get(ids, include=[\"embeddings\"])`",
    lookup=_chroma_lookup,
)
