"""A vector of the wrong length is blamed on what is wrong (issue 52, defect 8): one
8-d vector among an InMemoryVectorStore's 16-d ones is the store's fault when the
model's own vector agrees with the rest; a model whose vectors match none is the
model's."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from vrsd_langchain import DiverseRetriever


def store_with(size: int, odd_at: int | None) -> tuple[InMemoryVectorStore, list[str]]:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=size))
    ids = store.add_texts([f"note {i} on kettles" for i in range(6)])
    if odd_at is not None:
        store.store[ids[odd_at]]["vector"] = [0.25] * 8
    return store, ids


@pytest.mark.parametrize("odd_at", [0, 3, 5])
def test_one_short_vector_in_the_store_is_the_stores_fault(odd_at):
    store, ids = store_with(16, odd_at)
    retriever = DiverseRetriever(vectorstore=store, k=2, fetch_k=4)
    with pytest.raises(ValueError, match="^vectorstore: ") as caught:
        retriever.invoke("kettles")
    message = str(caught.value)
    assert repr(ids[odd_at]) in message and "5 are 16-d" in message
    assert "the query's 16-d vector agrees with the rest" in message


def test_a_model_whose_vectors_match_none_is_the_models_fault():
    store, _ = store_with(16, None)
    retriever = DiverseRetriever(vectorstore=store, k=2, fetch_k=4,
                                 embeddings=DeterministicFakeEmbedding(size=8))
    with pytest.raises(ValueError, match="^embeddings: embed_query returned a 8-d vector"):
        retriever.invoke("kettles")
