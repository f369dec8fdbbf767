"""Every LangChain entry point gives the same result sync and async on the same input,
along each I/O path of its one body (``vrsd_kit.steps``): a store fast path, the
re-embedding fallback (search by vector, and by text when the store has no search
by vector), the compressor. Each mode gets fresh objects so neither reads the other's
embedding cache."""

from __future__ import annotations

import copy

import pytest

from tests.helpers.approx import approx_scores, results
from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore

K, FETCH_K = 3, 12


def _hidden(corpus_docs, spy, hidden_store_cls, by_vector: bool):
    store = hidden_store_cls(spy, by_vector=by_vector)
    store.add_texts([d.page_content for d in corpus_docs],
                    copy.deepcopy([d.metadata for d in corpus_docs]),
                    ids=[d.id for d in corpus_docs])
    return store


@pytest.fixture(params=["fast_path", "fallback_by_vector", "fallback_by_text"])
def store(request, in_memory_store, corpus_docs, make_spy, hidden_store_cls):
    if request.param == "fast_path":
        return in_memory_store
    return _hidden(corpus_docs, make_spy(), hidden_store_cls,
                   by_vector=request.param == "fallback_by_vector")


@pytest.mark.filterwarnings("ignore::vrsd_kit.stores.ReembeddingWarning")
async def test_retrievers_sync_equals_async(store, queries):
    def retrievers():
        return [
            DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K),
            DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, method="mmr"),
            DiverseVectorStore(store).as_retriever(
                search_type="dpp", search_kwargs={"k": K, "fetch_k": FETCH_K}),
        ]

    for sync, asynchronous in zip(retrievers(), retrievers(), strict=True):
        for query in queries[:3]:
            want = sync.invoke(query)
            assert len(want) == K
            assert results(await asynchronous.ainvoke(query)) == approx_scores(results(want))


async def test_compressor_sync_equals_async(corpus_docs, make_spy, queries):
    docs = corpus_docs[:FETCH_K]
    for query in queries[:3]:
        want = DiverseCompressor(embeddings=make_spy(), k=K).compress_documents(docs, query)
        got = await DiverseCompressor(embeddings=make_spy(), k=K).acompress_documents(docs, query)
        assert len(want) == K and results(got) == approx_scores(results(want))


async def test_errors_are_the_same_sync_and_async(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=K)
    with pytest.raises(ValueError, match="query") as sync_error:
        retriever.invoke("   ")
    with pytest.raises(ValueError, match="query") as async_error:
        await retriever.ainvoke("   ")
    assert str(sync_error.value) == str(async_error.value)
