"""vrsd for Haystack: ``DiverseRanker``, a diversity ranker on the retriever's own embeddings.

Imports the core, the kit and Haystack only. See ``vrsd_haystack.ranker`` for the usage;
``inspect_store(store, embedder=...)`` says how crowded a store's top-k is.
"""

from vrsd_kit.adapters import register
from vrsd_kit.rerank import METADATA_KEY

from .inspection import inspect_store
from .ranker import DiverseRanker

register(__name__)

__all__ = ["METADATA_KEY", "DiverseRanker", "inspect_store"]
