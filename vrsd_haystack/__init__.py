"""vrsd for Haystack: ``VRSDRanker``, a diversity ranker on the retriever's own embeddings.

Imports the core and Haystack only. See ``vrsd_haystack.ranker`` for the usage.
"""

from vrsd_core.contract import METADATA_KEY

from .ranker import VRSDRanker

__all__ = ["METADATA_KEY", "VRSDRanker"]
