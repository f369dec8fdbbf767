"""Which test directory builds a real store for each store registry record.

The store tests' parametrisation reads these maps (``cases_in``), and
``tests/integration_tests/test_store_registry.py`` checks their keys are exactly
the registries' names: a new store record without a real-store test fails there.
A new store adds its record, its fixture in the directory named here, and its line.
"""

from __future__ import annotations

LANGCHAIN = {  # vrsd_langchain.stores.FAST_PATHS
    "in_memory": "langchain",
    "faiss": "langchain",
    "chroma": "langchain",
    "qdrant": "langchain",
    "milvus": "stores_more",
    "lancedb": "stores_more",
    "pgvector": "postgres",
    "pgvector_store": "postgres",
}

LLAMAINDEX = {  # vrsd_llamaindex.STORE_PATHS
    "simple": "llamaindex",
    "chroma": "llamaindex",
    "qdrant": "stores_more",
    "lancedb": "stores_more",
    "milvus": "stores_more",
    "postgres": "postgres",
}

HAYSTACK = {  # vrsd_haystack.stores.RETRIEVERS
    "in_memory": "haystack",
    "qdrant": "haystack",
    "chroma": "haystack",
}


def cases_in(cases: dict[str, str], directory: str, prefix: str = "") -> list[str]:
    """The store cases ``directory``'s tests are parametrised with (``prefix`` + name)."""
    return [prefix + name for name, where in cases.items() if where == directory]
