"""vrsd_langchain: relevant and diverse retrieval as LangChain retrievers.

* ``VRSDRetriever(vectorstore=store, k=4, fetch_k=20)``: any vector store; the default
  method is the recommended ``"complement"``, ``method="vrsd"`` the paper's greedy.
* ``DiverseVectorStore(store).as_retriever(search_type="complement", search_kwargs={...})``:
  the usual ``as_retriever`` call, with every core method as a search type:
  ``"complement"`` (the recommendation), ``"vrsd"`` (the paper's), ``"mmr"``, ``"dpp"``, ...
* ``VRSDCompressor(embeddings=...)``: rerank any retriever's output
  (for ``ContextualCompressionRetriever``).
* ``default_embeddings()``: the bundled all-MiniLM-L6-v2 (loaded on first call).

Every returned Document is a copy with ``metadata[METADATA_KEY]`` (``"vrsd"``)
= ``{"rank", "relevance", "gain", "method"}``.
"""

from .cache import EmbeddingCache
from .compressor import VRSDCompressor
from .documents import METADATA_KEY
from .embeddings import default_embeddings
from .retriever import VRSDRetriever
from .vectorstore import DiverseVectorStore, DiverseVectorStoreRetriever

__all__ = [
    "METADATA_KEY",
    "DiverseVectorStore",
    "DiverseVectorStoreRetriever",
    "EmbeddingCache",
    "VRSDCompressor",
    "VRSDRetriever",
    "default_embeddings",
]
