"""A Haystack pipeline around ``DiverseRanker``: an embedding retriever that returns the
documents' embeddings (``return_embedding=True``; Chroma's always does) -> the ranker.
Shared by the unit tests (InMemoryDocumentStore) and the real-store tests."""

from __future__ import annotations

from typing import Any

from haystack import Document, Pipeline

FETCH_K = 20


def retriever_for(store: Any, top_k: int = FETCH_K) -> Any:
    kind = type(store).__name__
    if kind == "InMemoryDocumentStore":
        from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever

        return InMemoryEmbeddingRetriever(store, top_k=top_k, return_embedding=True)
    if kind == "ChromaDocumentStore":  # returns the embeddings with every query
        from haystack_integrations.components.retrievers.chroma import ChromaEmbeddingRetriever

        return ChromaEmbeddingRetriever(store, top_k=top_k)
    from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever

    return QdrantEmbeddingRetriever(store, top_k=top_k, return_embedding=True)


def pipeline(store: Any, ranker: Any) -> Pipeline:
    pipe = Pipeline()
    pipe.add_component("retriever", retriever_for(store))
    pipe.add_component("ranker", ranker)
    pipe.connect("retriever.documents", "ranker.documents")
    return pipe


def run(pipe: Pipeline, query: list[float], **ranker: object) -> list[Document]:
    out = pipe.run({"retriever": {"query_embedding": query},
                    "ranker": {"query_embedding": query, **ranker}})
    return out["ranker"]["documents"]


def candidates(store: Any, query: list[float]) -> list[Document]:
    return retriever_for(store).run(query_embedding=query)["documents"]


def snapshot(store: Any) -> list[tuple]:
    """Every stored document (id, content, meta, embedding), in id order."""
    import numpy as np

    docs = sorted(store.filter_documents(), key=lambda d: d.id)
    return [(d.id, d.content, d.meta, np.asarray(d.embedding).round(6).tolist()) for d in docs]
