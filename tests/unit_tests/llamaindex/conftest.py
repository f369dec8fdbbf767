"""LlamaIndex unit tests: an in-memory ``VectorStoreIndex`` (``SimpleVectorStore``) over
small texts, embedded by a deterministic word-hashing model (no model is loaded)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode

WORDS = ("water vapor liquid evaporation heat sun plants light rome empire senate bread "
         "dough oven cats dogs sleep").split()
DIM = 24


def texts(count: int = 40) -> list[str]:
    """Small texts over a shared vocabulary, so that the words say something, each with a
    word of its own in the middle (no text's word pairs all lie in another's: none is a
    copy of another, vrsd_kit.lexical.Judge)."""
    return [" ".join([*(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4)), f"item{i}",
                      *(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4, 8 + i % 5))])
            for i in range(count)]


class WordsEmbedding(BaseEmbedding):
    """Each text's vector: its words counted into ``DIM`` hashed buckets, plus a small
    constant (never a zero vector). Deterministic, offline."""

    def _vector(self, text: str) -> list[float]:
        vector = np.full(DIM, 0.01)
        for word in text.lower().split():
            vector[zlib.crc32(word.encode()) % DIM] += 1.0
        return vector.tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


@pytest.fixture
def embed_model() -> WordsEmbedding:
    return WordsEmbedding(model_name="words")


@pytest.fixture
def index(embed_model) -> VectorStoreIndex:
    """The default in-memory index: its retriever returns nodes without vectors, which the
    adapter reads back from the ``SimpleVectorStore``."""
    nodes = [TextNode(text=t, id_=f"n{i}", metadata={"row": i, "source": f"s{i % 6}"})
             for i, t in enumerate(texts())]
    return VectorStoreIndex(nodes, embed_model=embed_model)
