"""One fast path per store: see ``_base`` for the shape, each module for its store.

Fast paths are found by class, without importing any store package: a store
whose package was never imported cannot be an instance of it.
"""

from __future__ import annotations

from ._base import Candidates, FastPath, empty
from .chroma import FAST_PATH as CHROMA
from .faiss import FAST_PATH as FAISS
from .in_memory import FAST_PATH as IN_MEMORY
from .lancedb import FAST_PATH as LANCEDB
from .milvus import FAST_PATH as MILVUS
from .postgres import PGVECTOR, PGVECTOR_STORE
from .qdrant import FAST_PATH as QDRANT

FAST_PATHS: tuple[FastPath, ...] = (
    IN_MEMORY, FAISS, CHROMA, QDRANT, PGVECTOR, PGVECTOR_STORE, MILVUS, LANCEDB
)

__all__ = ["FAST_PATHS", "Candidates", "FastPath", "empty"]
