"""Embeddings loaded on the first text to encode (``cached_embeddings(lazy=True)``)."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from .disk_embeddings import base_embeddings


class LazyEmbeddings(Embeddings):
    """``base_embeddings(model)``, loaded on the first text to encode, encoding each
    distinct text of a call once.

    Behind the cache, a command whose texts are all cached (re-indexing unchanged
    files, a repeated search) never imports torch nor loads the weights; and the
    same chunk in many files (licences, boilerplate) is encoded once per batch.
    """

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    @property
    def loaded(self) -> Embeddings:
        """The model's embeddings, loaded now if they were not yet."""
        return base_embeddings(self.model)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        distinct = list(dict.fromkeys(texts))
        vectors = dict(zip(distinct, self.loaded.embed_documents(distinct), strict=True))
        return [vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.loaded.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)
