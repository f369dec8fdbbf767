"""LangChain unit tests: in-memory stores and LangChain's deterministic fake embeddings
(no model is loaded)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

WORDS = ("water vapor liquid evaporation heat sun plants light rome empire senate bread "
         "dough oven cats dogs sleep").split()


def texts(count: int = 40) -> list[str]:
    """Small texts over a shared vocabulary, so that the words say something."""
    return [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(8 + i % 5))
            for i in range(count)]


@pytest.fixture
def embeddings() -> Embeddings:
    return DeterministicFakeEmbedding(size=24)


@pytest.fixture
def in_memory_store(embeddings) -> InMemoryVectorStore:
    docs = [Document(page_content=t, metadata={"row": i, "source": f"s{i % 6}"})
            for i, t in enumerate(texts())]
    store = InMemoryVectorStore(embeddings)
    store.add_documents(docs)
    return store
