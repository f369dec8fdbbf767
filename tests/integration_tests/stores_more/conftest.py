"""Milvus Lite, LanceDB and (for LlamaIndex) Qdrant local: real embedded stores in a
temporary directory, each holding the first 200 ARC-DA texts with their vectors
computed once by the bundled model, and a spy on the model each store queries with."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

CORPUS_SIZE = 200
DIM = 384


class SpyEmbeddings(Embeddings):
    """Forwards to real embeddings and counts what it was asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.query_calls = 0
            self.documents_embedded = 0

    @property
    def counts(self) -> tuple[int, int]:
        return self.query_calls, self.documents_embedded

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.documents_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            self.query_calls += 1
        return self.inner.embed_query(text)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


@pytest.fixture(scope="session")
def lc_embeddings() -> Embeddings:
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore

    from vrsd_langchain import default_embeddings

    return CacheBackedEmbeddings.from_bytes_store(
        default_embeddings(), InMemoryByteStore(), namespace="all-MiniLM-L6-v2",
        query_embedding_cache=True, key_encoder="sha256",
    )


@pytest.fixture(scope="session")
def corpus(arc_da) -> list[Document]:
    return [
        Document(id=f"arc-{i}", page_content=text, metadata={"row": i, "split": "AB"[i % 2]})
        for i, text in enumerate(arc_da.corpus[:CORPUS_SIZE])
    ]


@pytest.fixture(scope="session")
def corpus_vectors(corpus, lc_embeddings) -> np.ndarray:
    return np.asarray(lc_embeddings.embed_documents([d.page_content for d in corpus]))


@pytest.fixture(scope="session")
def queries(arc_da) -> list[str]:
    return arc_da.queries[:4]


# --- LangChain ------------------------------------------------------------------


@pytest.fixture(scope="session")
def lc_milvus(tmp_path_factory, corpus, corpus_vectors, lc_embeddings) -> Any:
    from langchain_milvus import Milvus

    uri = str(tmp_path_factory.mktemp("milvus") / "lc.db")
    store = Milvus(
        SpyEmbeddings(lc_embeddings),
        # db_name: langchain-milvus otherwise reads a database name out of the file path
        connection_args={"uri": uri, "db_name": "default"},
        collection_name="arc", auto_id=False, drop_old=True,
        index_params={"metric_type": "COSINE", "index_type": "FLAT"},
    )
    store.add_embeddings([d.page_content for d in corpus], corpus_vectors.tolist(),
                         [dict(d.metadata) for d in corpus], ids=[d.id for d in corpus])
    return store


@pytest.fixture(scope="session")
def lc_lancedb(tmp_path_factory, corpus, corpus_vectors, lc_embeddings) -> Any:
    from langchain_community.vectorstores import LanceDB

    spy = SpyEmbeddings(lc_embeddings)
    store = LanceDB(embedding=spy, uri=str(tmp_path_factory.mktemp("lancedb")),
                    table_name="arc", distance="cosine")
    # LanceDB.add_texts embeds through the store's embeddings: count it, then reset.
    store.add_texts([d.page_content for d in corpus], [dict(d.metadata) for d in corpus],
                    ids=[d.id for d in corpus])
    spy.reset()
    return store


# --- LlamaIndex -----------------------------------------------------------------


@pytest.fixture(scope="session")
def li_embed_model():
    from vrsd_llamaindex import default_embed_model

    return default_embed_model()


def make_li_spy(inner):
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class SpyEmbedding(BaseEmbedding):
        _inner: Any = PrivateAttr()
        _queries: int = PrivateAttr(default=0)
        _texts: int = PrivateAttr(default=0)

        def __init__(self, inner: Any) -> None:
            super().__init__(model_name=f"spy:{inner.model_name}")
            self._inner = inner

        def reset(self) -> None:
            self._queries = 0
            self._texts = 0

        @property
        def counts(self) -> tuple[int, int]:
            return self._queries, self._texts

        def _get_query_embedding(self, query: str) -> list[float]:
            self._queries += 1
            return self._inner.get_query_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            self._queries += 1
            return await self._inner.aget_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            self._texts += len(texts)
            return self._inner.get_text_embedding_batch(texts)

    return SpyEmbedding(inner)


def _nodes(corpus, corpus_vectors):
    import uuid

    from llama_index.core.schema import TextNode

    return [
        TextNode(id_=str(uuid.uuid5(uuid.NAMESPACE_URL, d.id)), text=d.page_content,
                 metadata=dict(d.metadata), embedding=v.tolist())
        for d, v in zip(corpus, corpus_vectors, strict=True)
    ]


def _index(store, corpus, corpus_vectors, li_embed_model):
    from llama_index.core import VectorStoreIndex

    store.add(_nodes(corpus, corpus_vectors))
    spy = make_li_spy(li_embed_model)
    return VectorStoreIndex.from_vector_store(store, embed_model=spy), spy


@pytest.fixture(scope="session")
def li_qdrant(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(tmp_path_factory.mktemp("li_qdrant")))
    store = QdrantVectorStore(client=client, collection_name="arc")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(scope="session")
def li_lancedb(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    store = LanceDBVectorStore(uri=str(tmp_path_factory.mktemp("li_lancedb")), table_name="arc",
                               mode="overwrite")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(scope="session")
def li_milvus(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.milvus import MilvusVectorStore

    store = MilvusVectorStore(uri=str(tmp_path_factory.mktemp("li_milvus") / "li.db"),
                              dim=DIM, overwrite=True, collection_name="arc",
                              use_async_client=False,  # pymilvus 2.6: needs a running loop
                              db_name="default",  # else read out of the file path
                              similarity_metric="COSINE")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(params=["li_qdrant", "li_lancedb", "li_milvus"])
def li_case(request):
    index, spy = request.getfixturevalue(request.param)
    spy.reset()
    return request.param, index, spy
