"""Stored vectors for nodes that arrive without ``node.embedding``.

Most LlamaIndex stores hand nodes back without their vectors (the
``VectorStoreIndex`` docstore strips them, Chroma rebuilds nodes from text and
metadata). Reading the vectors back from the store is much cheaper than
re-embedding the text, so each store that can return them gets a small lookup
here, keyed by ``class_name()``; any other store is tried through the generic
``get_nodes``. Whatever no lookup finds is embedded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Vector = Sequence[float]
StoreLookup = Callable[[Any, list[str]], dict[str, Vector]]


def _simple_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # SimpleVectorStore keeps every vector in a dict keyed by node id.
    embeddings = store.data.embedding_dict
    return {i: embeddings[i] for i in node_ids if i in embeddings}


def _chroma_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    # ChromaVectorStore.client is the chromadb collection; ids are node ids.
    got = store.client.get(ids=list(dict.fromkeys(node_ids)), include=["embeddings"])
    vectors = got.get("embeddings")
    if vectors is None:
        return {}
    return {i: v for i, v in zip(got["ids"], vectors, strict=True) if v is not None}


def _generic_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    get_nodes = getattr(store, "get_nodes", None)
    if get_nodes is None:
        return {}
    try:
        nodes = get_nodes(node_ids=node_ids)
    except NotImplementedError:  # the base class's answer for "I keep no nodes"
        return {}
    return {n.node_id: n.embedding for n in nodes if n.embedding}


STORE_LOOKUPS: dict[str, StoreLookup] = {
    "SimpleVectorStore": _simple_store,
    "ChromaVectorStore": _chroma_store,
}


def vectors_from_store(store: Any, node_ids: list[str]) -> dict[str, Vector]:
    """The vectors ``store`` holds for ``node_ids`` (ids it lacks are left out)."""
    if not node_ids:
        return {}
    class_name = getattr(store, "class_name", None)
    name = class_name() if callable(class_name) else type(store).__name__
    lookup = STORE_LOOKUPS.get(name, _generic_store)
    return lookup(store, node_ids)
