"""Which test directory builds a real store for each store registry record.

``CASES`` has one map per adapter of ``vrsd_kit.adapters.ADAPTERS`` (by its name):
record name -> directory. The store tests' parametrisation reads them
(``cases_in``), and ``tests/integration_tests/adapters/test_store_registry.py`` checks the
adapters and their keys are exactly the table's and the registries' names: a new
store record, or a new adapter, without a real-store test fails there. A new store
adds its record, its fixture in the directory named here, and its line.
"""

from __future__ import annotations

CASES: dict[str, dict[str, str]] = {
    "langchain": {  # vrsd_langchain.stores.FAST_PATHS
        "in_memory": "langchain",
        "faiss": "langchain",
        "chroma": "langchain",
        "qdrant": "langchain",
        "milvus": "stores_more",
        "lancedb": "stores_more",
        "pgvector": "postgres",
        "pgvector_store": "postgres",
    },
    "llamaindex": {  # vrsd_llamaindex.STORE_PATHS
        "simple": "llamaindex",
        "chroma": "llamaindex",
        "qdrant": "stores_more",
        "lancedb": "stores_more",
        "milvus": "stores_more",
        "postgres": "postgres",
    },
    "haystack": {  # vrsd_haystack.stores.RETRIEVERS
        "in_memory": "haystack",
        "qdrant": "haystack",
        "chroma": "haystack",
    },
}


def cases_in(adapter: str, directory: str, prefix: str = "") -> list[str]:
    """The store cases of ``adapter`` (its name) that ``directory``'s tests are
    parametrised with (``prefix`` + record name)."""
    return [prefix + name for name, where in CASES[adapter].items() if where == directory]
