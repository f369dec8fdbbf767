"""MilvusVectorStore (llama-index-vector-stores-milvus): its ``get_nodes`` returns the
vectors, so the record needs no lookup of its own."""

from __future__ import annotations

from ._base import StorePath

STORE_PATH = StorePath(
    name="milvus", family="Milvus",
    module="llama_index.vector_stores.milvus.base", class_name="MilvusVectorStore",
    client="llama-index-vector-stores-milvus", tested="==1.2.0",
    vectors="`get_nodes` by id", tested_on="Milvus Lite (the same client API as a cluster)",
)
