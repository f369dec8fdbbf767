"""SimpleVectorStore (llama-index-core): every vector in a dict keyed by node id."""

from __future__ import annotations

from typing import Any

from ._base import StorePath, Vector


def _simple_lookup(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    embeddings = store.data.embedding_dict
    return {i: embeddings[i] for i in node_ids if i in embeddings}


STORE_PATH = StorePath(
    name="simple", family="in memory",
    module="llama_index.core.vector_stores.simple", class_name="SimpleVectorStore",
    client="llama-index-core", tested="==0.14.25",
    vectors="stored, by node id (and `node.embedding`)",
    lookup=_simple_lookup,
)
