"""vrsd for LlamaIndex: a diversity-aware node postprocessor and reranking retriever.

``index.as_query_engine(similarity_top_k=50, node_postprocessors=[DiversePostprocessor(top_n=5)])``
keeps 5 of the 50 retrieved nodes, relevant and unlike one another;
``DiverseRerankRetriever(index.as_retriever(), top_n=5, fetch_k=50)`` does the same as a
retriever. Both need the embedding model the index was built with (``embed_model=``
or ``Settings.embed_model``); ``default_embed_model()`` is the bundled one.

``STORE_PATHS`` lists the stores whose vectors are read directly (see docs/stores.md).
"""

from vrsd_kit.adapters import register

from .base import METADATA_KEY, DiversePostprocessor
from .embeddings import default_embed_model
from .inspection import inspect_index
from .retriever import DiverseRerankRetriever
from .stores import STORE_PATHS

register(__name__)

__all__ = ["METADATA_KEY", "STORE_PATHS", "DiversePostprocessor", "DiverseRerankRetriever",
           "default_embed_model", "inspect_index"]
