"""vrsd for LlamaIndex: a diversity-aware node postprocessor and reranking retriever.

``index.as_query_engine(similarity_top_k=20, node_postprocessors=[VRSDPostprocessor(top_n=5)])``
keeps the 5 of 20 retrieved nodes whose sum is best aligned with the query;
``VRSDRetriever(index.as_retriever(), top_n=5, fetch_k=20)`` does the same as a
retriever. Both need the embedding model the index was built with (``embed_model=``
or ``Settings.embed_model``); ``default_embed_model()`` is the bundled one.

``STORE_PATHS`` lists the stores whose vectors are read directly (see docs/stores.md).
"""

from vrsd_kit.adapters import register

from .base import METADATA_KEY, VRSDPostprocessor
from .embeddings import default_embed_model
from .inspection import inspect_index
from .retriever import VRSDRetriever
from .stores import STORE_PATHS

register(__name__)

__all__ = ["METADATA_KEY", "STORE_PATHS", "VRSDPostprocessor", "VRSDRetriever",
           "default_embed_model", "inspect_index"]
