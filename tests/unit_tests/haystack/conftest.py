"""Haystack unit fixtures: small Documents over a shared vocabulary (so that the words say
something) with fixed random vectors, in Haystack's InMemoryDocumentStore (no model is
loaded)."""

from __future__ import annotations

import numpy as np
import pytest
from haystack import Document

DIM = 16
WORDS = ("water vapor liquid evaporation heat sun plants light rome empire senate bread "
         "dough oven cats dogs sleep").split()


def vector(seed: int) -> list[float]:
    return np.random.default_rng(seed).standard_normal(DIM).tolist()


@pytest.fixture(scope="session")
def hs_documents() -> list[Document]:
    """40 Documents with embeddings; meta ``row`` and ``source`` (``row // 3``: three
    consecutive rows share a source, for the group cap). Each text has a word of its own in
    the middle: none is a copy of another (``vrsd_kit.lexical.Judge``)."""
    texts = [" ".join([*(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4)), f"item{i}",
                       *(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(4, 8 + i % 5))])
             for i in range(40)]
    return [Document(id=f"doc-{i}", content=t, embedding=vector(i),
                     meta={"row": i, "source": f"s{i // 3}"}) for i, t in enumerate(texts)]


@pytest.fixture(scope="session")
def query_vectors() -> list[list[float]]:
    return [vector(1000 + i) for i in range(4)]


@pytest.fixture
def in_memory_store(hs_documents):
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([Document(id=d.id, content=d.content, embedding=list(d.embedding),
                                    meta=dict(d.meta)) for d in hs_documents])
    return store
