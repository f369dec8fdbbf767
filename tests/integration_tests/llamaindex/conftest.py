"""Fixtures for the LlamaIndex adapter: the bundled model, ~200 OpenBookQA texts
embedded once, and two real indexes over them (in-memory and Chroma)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from llama_index.core import Settings, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import MetadataMode, TextNode

from tests.helpers.spies import one_torch_thread
from tests.helpers.store_cases import cases_in

N_TEXTS = 200


@pytest.fixture(autouse=True)
def _one_torch_thread() -> Iterator[None]:
    with one_torch_thread():
        yield


class SpyEmbedding(BaseEmbedding):
    """A real embedding model (wraps another BaseEmbedding) that records its calls."""

    _inner: BaseEmbedding = PrivateAttr()
    _calls: dict[str, int] = PrivateAttr()
    _texts: list[str] = PrivateAttr()

    def __init__(self, inner: BaseEmbedding, **kwargs: Any) -> None:
        super().__init__(model_name=f"spy:{inner.model_name}", **kwargs)
        self._inner = inner
        self.reset()

    def reset(self) -> None:
        self._calls = {"query": 0, "aquery": 0, "batch": 0, "abatch": 0}
        self._texts = []

    @property
    def calls(self) -> dict[str, int]:
        return dict(self._calls)

    @property
    def texts(self) -> list[str]:
        """Every text embedded, in order."""
        return list(self._texts)

    def _get_query_embedding(self, query: str) -> list[float]:
        self._calls["query"] += 1
        return self._inner.get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        self._calls["aquery"] += 1
        return await self._inner.aget_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self._texts.extend(texts)
        return self._inner.get_text_embedding_batch(texts)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self._texts.extend(texts)
        return await self._inner.aget_text_embedding_batch(texts)

    def get_text_embedding_batch(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        self._calls["batch"] += 1
        return super().get_text_embedding_batch(texts, **kwargs)

    async def aget_text_embedding_batch(self, texts: list[str], **kwargs: Any
                                        ) -> list[list[float]]:
        self._calls["abatch"] += 1
        return await super().aget_text_embedding_batch(texts, **kwargs)


@pytest.fixture(scope="session")
def hf_embed(model_path):
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=model_path)


@pytest.fixture
def spy(hf_embed) -> SpyEmbedding:
    return SpyEmbedding(hf_embed, embed_batch_size=64)


@pytest.fixture(scope="session")
def embedded_nodes(openbookqa, hf_embed) -> list[TextNode]:
    """The first N_TEXTS corpus texts as nodes, embedded once for the whole session."""
    nodes = [
        TextNode(text=text, id_=node_id, metadata={"source": "openbookqa"})
        for text, node_id in zip(
            openbookqa.corpus[:N_TEXTS], openbookqa.corpus_ids[:N_TEXTS], strict=True
        )
    ]
    with one_torch_thread():
        vectors = hf_embed.get_text_embedding_batch(
            [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
        )
    for node, vector in zip(nodes, vectors, strict=True):
        node.embedding = vector
    return nodes


@pytest.fixture(scope="session")
def vectors_by_id(embedded_nodes) -> dict[str, np.ndarray]:
    """The test's own record of every node's vector (independent of any store)."""
    return {n.node_id: np.asarray(n.embedding) for n in embedded_nodes}


def _fresh(nodes: list[TextNode]) -> list[TextNode]:
    return [n.model_copy(deep=True) for n in nodes]


@pytest.fixture(scope="session")
def simple_index(embedded_nodes, hf_embed) -> VectorStoreIndex:
    """The default in-memory index (SimpleVectorStore + docstore without vectors)."""
    return VectorStoreIndex(_fresh(embedded_nodes), embed_model=hf_embed)


@pytest.fixture(scope="session")
def chroma_index(embedded_nodes, hf_embed, tmp_path_factory) -> Iterator[VectorStoreIndex]:
    """The same nodes in an embedded, persistent Chroma collection (cosine space)."""
    import chromadb
    from llama_index.vector_stores.chroma import ChromaVectorStore

    client = chromadb.PersistentClient(path=str(tmp_path_factory.mktemp("chroma")))
    collection = client.create_collection("obqa", metadata={"hnsw:space": "cosine"})
    store = ChromaVectorStore(chroma_collection=collection)
    index = VectorStoreIndex(
        _fresh(embedded_nodes),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=hf_embed,
    )
    yield index


@pytest.fixture(params=cases_in("llamaindex", "llamaindex"))
def index(request) -> VectorStoreIndex:
    return request.getfixturevalue(f"{request.param}_index")


@pytest.fixture
def settings_embed_model():
    """Set ``Settings.embed_model`` for one test (pass the model to the returned
    setter; None leaves it unset) and restore whatever was there afterwards."""
    saved = Settings._embed_model

    def set_model(model: BaseEmbedding | None) -> None:
        Settings._embed_model = model

    yield set_model
    Settings._embed_model = saved


@pytest.fixture
def queries(openbookqa) -> list[str]:
    return openbookqa.queries[:2]
