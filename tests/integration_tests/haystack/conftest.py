"""Haystack fixtures: the first 200 ARC-DA texts as Haystack Documents with the bundled
model's vectors (computed once), written to real document stores: Haystack's
InMemoryDocumentStore, Qdrant in local mode (qdrant-haystack) and an embedded Chroma
(chroma-haystack)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from haystack import Document

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    arc_corpus_fixture,
    lc_embeddings_fixture,
)
from tests.helpers.spies import one_torch_thread


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    with one_torch_thread():
        yield


@pytest.fixture(scope="session")
def hs_documents(corpus, lc_embeddings) -> list[Document]:
    """Haystack Documents with embeddings; meta ``row``, ``split`` and ``source``
    (``row // 3``: three consecutive rows share a source, for the group cap)."""
    vectors = lc_embeddings.embed_documents([d.page_content for d in corpus])
    return [
        Document(id=f"arc-{i}", content=d.page_content, embedding=list(v),
                 meta={**d.metadata, "source": f"s{int(d.metadata['row']) // 3}"})
        for i, (d, v) in enumerate(zip(corpus, vectors, strict=True))
    ]


@pytest.fixture(scope="session")
def query_vectors(arc_da, lc_embeddings) -> list[list[float]]:
    return [list(map(float, lc_embeddings.embed_query(q))) for q in arc_da.queries[:4]]


@pytest.fixture(scope="session")
def in_memory_store(hs_documents):
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([Document(id=d.id, content=d.content, embedding=list(d.embedding),
                                    meta=dict(d.meta)) for d in hs_documents])
    return store


@pytest.fixture(scope="session")
def qdrant_store(hs_documents, tmp_path_factory):
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    store = QdrantDocumentStore(path=str(tmp_path_factory.mktemp("hs_qdrant")),
                                index="arc", embedding_dim=len(hs_documents[0].embedding),
                                similarity="cosine", recreate_index=True)
    store.write_documents([Document(id=d.id, content=d.content, embedding=list(d.embedding),
                                    meta=dict(d.meta)) for d in hs_documents])
    return store


@pytest.fixture(scope="session")
def chroma_store(hs_documents, tmp_path_factory):
    from haystack_integrations.document_stores.chroma import ChromaDocumentStore

    store = ChromaDocumentStore(collection_name="arc", distance_function="cosine",
                                persist_path=str(tmp_path_factory.mktemp("hs_chroma")))
    store.write_documents([Document(id=d.id, content=d.content, embedding=list(d.embedding),
                                    meta=dict(d.meta)) for d in hs_documents])
    return store
