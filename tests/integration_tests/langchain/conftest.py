"""Fixtures for the LangChain adapter tests: the real model, a real corpus, real stores.

Embeddings: langchain-huggingface's ``HuggingFaceEmbeddings`` on the bundled
all-MiniLM-L6-v2 (as ``default_embeddings()`` makes it), loaded once per session,
behind LangChain's own ``CacheBackedEmbeddings`` (in-memory byte store) so the four
stores and the queries do not embed the same 200 texts again and again. The vectors are the
model's, bit for bit.

Corpus: the first 200 texts of the ARC-DA corpus (the paper's protocol), as
Documents with metadata ``row`` (position), ``source`` (the ARC-DA question id)
and ``split`` ("A" for even rows, "B" for odd: the field the filter tests use).

Each store kind is built once per session around its own ``SpyEmbeddings``
(a real ``Embeddings`` that forwards to the model and counts calls), so a test
can reset the counters and see exactly what a query embedded.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

from tests.helpers.corpus import arc_documents
from tests.helpers.spies import SpyEmbeddings, cached_embeddings
from tests.helpers.store_cases import cases_in

CORPUS_SIZE = 200
STORE_KINDS = tuple(cases_in("langchain", "langchain"))


class HiddenStore(VectorStore):
    """A minimal real store with no fast path: an InMemoryVectorStore behind plain methods.

    It searches by vector but never hands out vectors, so the adapter must
    re-embed the candidates. ``by_vector=False`` removes search-by-vector too
    (the adapter then falls back to ``similarity_search``).
    """

    def __init__(
        self, embedding: Embeddings | None, *, by_vector: bool = True, inner_embedding=None
    ) -> None:
        self._inner = InMemoryVectorStore(inner_embedding or embedding)
        self._embedding = embedding
        self._by_vector = by_vector

    @property
    def embeddings(self) -> Embeddings | None:
        return self._embedding

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        docs = [
            Document(page_content=t, metadata=m or {})
            for t, m in zip(texts, metadatas or [{}] * 10**6, strict=False)
        ]
        return self._inner.add_documents(docs, ids=ids)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return self._inner.similarity_search(query, k=k, **kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        if not self._by_vector:
            raise NotImplementedError
        return self._inner.similarity_search_by_vector(embedding, k=k, **kwargs)

    @classmethod
    def from_texts(cls, texts, embedding, metadatas=None, **kwargs):  # noqa: ANN001, ANN206
        store = cls(embedding)
        store.add_texts(texts, metadatas, **kwargs)
        return store


@dataclass
class StoreCase:
    """One real store over the corpus, with what a test needs to check it independently."""

    kind: str
    store: VectorStore
    spy: SpyEmbeddings
    filter_a: Any  # the store's own filter syntax for split == "A"
    candidates: Callable[..., tuple[list[Document], np.ndarray]]
    snapshot: Callable[[], Any]


def row_of(doc: Document) -> int:
    return int(doc.metadata["row"])


@pytest.fixture(scope="session")
def hf_embeddings(model_path):
    """``vrsd_langchain.default_embeddings()``: HuggingFaceEmbeddings on the bundled model."""
    from vrsd_langchain import default_embeddings

    return default_embeddings()


@pytest.fixture(scope="session")
def embeddings(hf_embeddings):
    return cached_embeddings(hf_embeddings)


@pytest.fixture(scope="session")
def corpus_docs(arc_da) -> list[Document]:
    return arc_documents(arc_da, CORPUS_SIZE, source=True)


@pytest.fixture(scope="session")
def queries(arc_da) -> list[str]:
    return arc_da.queries[:6]


@pytest.fixture(scope="session")
def make_spy(embeddings) -> Callable[[], SpyEmbeddings]:
    return lambda: SpyEmbeddings(embeddings)


def _build_in_memory(docs, spy, tmp) -> StoreCase:
    store = InMemoryVectorStore(spy)
    store.add_documents(copy.deepcopy(docs))

    def candidates(qvec, n, keep=lambda d: True):
        entries = [e for e in store.store.values() if keep(Document(
            page_content=e["text"], metadata=e["metadata"]))]
        vecs = np.asarray([e["vector"] for e in entries])
        cos = vecs @ qvec / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(qvec))
        order = np.argsort(-cos, kind="stable")[:n]
        return (
            [Document(id=entries[i]["id"], page_content=entries[i]["text"],
                      metadata=entries[i]["metadata"]) for i in order],
            vecs[order],
        )

    return StoreCase(
        "in_memory", store, spy, lambda d: d.metadata["split"] == "A",
        lambda qvec, n, filtered=False: candidates(
            qvec, n, (lambda d: d.metadata["split"] == "A") if filtered else (lambda d: True)
        ),
        lambda: copy.deepcopy(store.store),
    )


def _build_faiss(docs, spy, tmp) -> StoreCase:
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

    # FAISS.from_documents' defaults, built empty first so that ``docs`` may be empty
    store = FAISS(spy, faiss.IndexFlatL2(384), InMemoryDocstore(), {})
    if docs:
        store.add_documents(copy.deepcopy(docs))
    position = {doc_id: pos for pos, doc_id in store.index_to_docstore_id.items()}

    def candidates(qvec, n, filtered=False):
        kwargs = {"filter": {"split": "A"}, "fetch_k": store.index.ntotal} if filtered else {}
        hits = store.similarity_search_with_score_by_vector(list(qvec), k=n, **kwargs)
        docs_ = [d for d, _ in hits]
        vecs = np.asarray([store.index.reconstruct(position[d.id]) for d in docs_])
        return docs_, vecs

    def snapshot():
        return (
            store.index.ntotal,
            store.index.reconstruct_n(0, store.index.ntotal).copy(),
            dict(store.index_to_docstore_id),
            copy.deepcopy(store.docstore._dict),
        )

    return StoreCase("faiss", store, spy, {"split": "A"}, candidates, snapshot)


def _build_chroma(docs, spy, tmp) -> StoreCase:
    from langchain_chroma import Chroma

    store = Chroma(
        collection_name="arc_da",
        embedding_function=spy,
        persist_directory=str(tmp / "chroma"),
        collection_metadata={"hnsw:space": "cosine"},
    )
    if docs:
        store.add_documents(copy.deepcopy(docs), ids=[d.id for d in docs])

    def candidates(qvec, n, filtered=False):
        res = store._collection.query(
            query_embeddings=[list(qvec)], n_results=n,
            where={"split": "A"} if filtered else None,
            include=["embeddings", "documents", "metadatas"],
        )
        docs_ = [
            Document(id=i, page_content=t, metadata=m)
            for i, t, m in zip(res["ids"][0], res["documents"][0], res["metadatas"][0],
                               strict=True)
        ]
        return docs_, np.asarray(res["embeddings"][0])

    def snapshot():
        got = store._collection.get(include=["embeddings", "documents", "metadatas"])
        order = np.argsort(got["ids"])
        return (
            [got["ids"][i] for i in order],
            [got["documents"][i] for i in order],
            [got["metadatas"][i] for i in order],
            np.asarray(got["embeddings"])[order],
        )

    return StoreCase("chroma", store, spy, {"split": "A"}, candidates, snapshot)


def _build_qdrant(docs, spy, tmp) -> StoreCase:
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(tmp / "qdrant"))
    client.create_collection(
        "arc_da",
        vectors_config=models.VectorParams(size=384, distance=models.Distance.COSINE),
    )
    store = QdrantVectorStore(client=client, collection_name="arc_da", embedding=spy)
    if docs:
        store.add_documents(
            copy.deepcopy(docs), ids=[str(uuid.uuid5(uuid.NAMESPACE_URL, d.id)) for d in docs]
        )
    flt = models.Filter(
        must=[models.FieldCondition(key="metadata.split", match=models.MatchValue(value="A"))]
    )

    def candidates(qvec, n, filtered=False):
        hits = store.similarity_search_with_score_by_vector(
            list(qvec), k=n, filter=flt if filtered else None
        )
        docs_ = [d for d, _ in hits]
        points = client.retrieve("arc_da", ids=[d.metadata["_id"] for d in docs_],
                                 with_vectors=True)
        by_id = {p.id: p.vector for p in points}
        return docs_, np.asarray([by_id[d.metadata["_id"]] for d in docs_])

    def snapshot():
        points, _ = client.scroll("arc_da", limit=10_000, with_vectors=True, with_payload=True)
        points = sorted(points, key=lambda p: str(p.id))
        return [(p.id, p.payload) for p in points], np.asarray([p.vector for p in points])

    return StoreCase("qdrant", store, spy, flt, candidates, snapshot)


# kind -> builder(docs, spy, tmp) -> StoreCase; ``docs`` may be empty (an empty store).
BUILDERS = {
    "in_memory": _build_in_memory,
    "faiss": _build_faiss,
    "chroma": _build_chroma,
    "qdrant": _build_qdrant,
}


@pytest.fixture(scope="session")
def store_cases(corpus_docs, make_spy, tmp_path_factory) -> dict[str, StoreCase]:
    """Lazily built, one per kind, for the whole session."""
    built: dict[str, StoreCase] = {}

    class _Lazy(dict):
        def __missing__(self, kind: str) -> StoreCase:
            tmp = tmp_path_factory.mktemp(kind)
            built[kind] = BUILDERS[kind](corpus_docs, make_spy(), tmp)
            self[kind] = built[kind]
            return built[kind]

    return _Lazy()


@pytest.fixture(params=STORE_KINDS)
def case(request, store_cases) -> StoreCase:
    c = store_cases[request.param]
    c.spy.reset()
    return c


@pytest.fixture(scope="session")
def in_memory_store(store_cases) -> InMemoryVectorStore:
    return store_cases["in_memory"].store


@pytest.fixture(scope="session")
def hidden_store_cls() -> type[HiddenStore]:
    return HiddenStore


@pytest.fixture(scope="session")
def spy_cls() -> type[SpyEmbeddings]:
    return SpyEmbeddings
