"""vrsd_langchain: relevant and diverse retrieval as LangChain retrievers.

* ``DiverseRetriever(vectorstore=store, k=4, fetch_k=50)``: any vector store; the default
  method is the recommended ``"complement"``, ``method="vrsd"`` the paper's greedy.
* ``DiverseVectorStore(store).as_retriever(search_type="complement", search_kwargs={...})``:
  the usual ``as_retriever`` call, with every core method as a search type:
  ``"complement"`` (the recommendation), ``"vrsd"`` (the paper's), ``"mmr"``, ``"dpp"``, ...
* ``DiverseCompressor(embeddings=...)``: rerank any retriever's output
  (for ``ContextualCompressionRetriever``).
* ``default_embeddings()``: the bundled all-MiniLM-L6-v2 (loaded on first call).
* ``fetch_candidates(store, query, query_vector, n, search_kwargs, embeddings, cache)``:
  the store's top-n with their vectors, as every retriever gets them (for evaluations
  that run other selectors on the same candidates).
* ``inspect_store(store)``: will the default change anything on this store? How crowded
  its top-k is, label-free (the reports: ``vrsd_kit.inspection``).

Every returned Document is a copy with ``metadata[METADATA_KEY]`` (``"vrsd"``)
= ``{"rank", "relevance", "gain", "method"}``.
"""

from vrsd_kit.adapters import register
from vrsd_kit.rerank import METADATA_KEY

from .cache import EmbeddingCache
from .candidates import Candidates, fetch_candidates
from .compressor import DiverseCompressor
from .embeddings import default_embeddings
from .inspection import inspect_store
from .retriever import DiverseRetriever
from .vectorstore import DiverseVectorStore, DiverseVectorStoreRetriever

register(__name__)

__all__ = [
    "METADATA_KEY",
    "Candidates",
    "DiverseVectorStore",
    "DiverseVectorStoreRetriever",
    "EmbeddingCache",
    "DiverseCompressor",
    "DiverseRetriever",
    "default_embeddings",
    "fetch_candidates",
    "inspect_store",
]
