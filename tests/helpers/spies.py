"""Test helpers shared by the integration conftests: counting spies around real
embedding models, the session's cached LangChain embeddings, and the one-thread
torch setting.

Imported as ``tests.helpers.spies`` (``python -m pytest`` puts the repository root
on ``sys.path``). LlamaIndex and torch are imported inside the functions that need
them, so importing this module costs only ``langchain_core``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.embeddings import Embeddings


class SpyEmbeddings(Embeddings):
    """Forwards to real embeddings and counts what it was asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.query_calls = 0
            self.document_calls = 0
            self.documents_embedded = 0

    @property
    def counts(self) -> tuple[int, int]:
        """(queries embedded, documents embedded)."""
        return self.query_calls, self.documents_embedded

    def _count_documents(self, texts: Sequence[str]) -> None:
        with self._lock:
            self.document_calls += 1
            self.documents_embedded += len(texts)

    def _count_query(self) -> None:
        with self._lock:
            self.query_calls += 1

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._count_documents(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self._count_query()
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self._count_documents(texts)
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        self._count_query()
        return await self.inner.aembed_query(text)


def cached_embeddings(inner: Embeddings | None = None) -> Embeddings:
    """``inner`` (default: ``vrsd_langchain.default_embeddings()``) behind LangChain's
    ``CacheBackedEmbeddings`` on an in-memory byte store, queries cached too."""
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore

    if inner is None:
        from vrsd_langchain import default_embeddings

        inner = default_embeddings()
    return CacheBackedEmbeddings.from_bytes_store(
        inner, InMemoryByteStore(), namespace="all-MiniLM-L6-v2",
        query_embedding_cache=True, key_encoder="sha256",
    )


def make_li_spy(inner: Any) -> Any:
    """A real LlamaIndex ``BaseEmbedding`` around ``inner`` that counts queries and
    texts embedded: ``counts`` is (queries, texts), ``reset()`` zeroes both and
    ``_inner`` is the wrapped model."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class SpyEmbedding(BaseEmbedding):
        """A real LlamaIndex model that counts queries and texts embedded."""

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


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run the model on one intra-op thread, then restore the setting.

    On a machine whose few cores are shared with other work, torch's worker
    threads wait on each other: 10 short queries took 15 s with 2 threads and
    0.7 s with 1 here. The vectors are the same either way.
    """
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)
