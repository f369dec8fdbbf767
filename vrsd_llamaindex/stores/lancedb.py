"""LanceDBVectorStore (llama-index-vector-stores-lancedb): its own query sets
``node.embedding``, so the record needs no lookup of its own."""

from __future__ import annotations

from ._base import StorePath

STORE_PATH = StorePath(
    name="lancedb", family="LanceDB",
    module="llama_index.vector_stores.lancedb.base", class_name="LanceDBVectorStore",
    client="llama-index-vector-stores-lancedb", tested="==0.6.0",
    vectors="its query sets `node.embedding`",
)
