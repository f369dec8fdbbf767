"""Small deterministic embeddings for the fresh-environment quick starts (no model, no
torch): each word adds +-1 to one of 64 dimensions chosen by its hash, so texts that
share words point the same way. Copied into the fresh environment's script, so it
imports nothing from this repository."""

from __future__ import annotations

import hashlib

DIM = 64


def toy_vector(text: str) -> list[float]:
    vector = [0.0] * DIM
    for word in text.lower().split():
        digest = int(hashlib.sha256(word.strip(".,;:?!").encode()).hexdigest(), 16)
        vector[digest % DIM] += 1.0 if (digest >> 8) % 2 else -1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


def langchain_embeddings():
    from langchain_core.embeddings import Embeddings

    class ToyEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [toy_vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return toy_vector(text)

    return ToyEmbeddings()


def llamaindex_embed_model():
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class ToyEmbedModel(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return toy_vector(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return toy_vector(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return toy_vector(text)

    return ToyEmbedModel()
