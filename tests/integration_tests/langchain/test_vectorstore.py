"""DiverseVectorStore delegates everything to the wrapped store; only as_retriever differs."""

from __future__ import annotations

import copy

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever

from tests.helpers.approx import approx_scores, results
from vrsd_core import DEFAULT_METHOD
from vrsd_langchain import METADATA_KEY, DiverseVectorStore, DiverseVectorStoreRetriever

QUERY = "How do plants make their food?"


def rows(docs) -> list[int]:
    return [int(d.metadata["row"]) for d in docs]


@pytest.fixture
def small(make_spy, corpus_docs):
    inner = InMemoryVectorStore(make_spy())
    inner.add_documents(copy.deepcopy(corpus_docs[:30]))
    return inner, DiverseVectorStore(inner)


def test_writes_and_reads_go_to_the_wrapped_store(small, corpus_docs):
    inner, wrapped = small
    ids = wrapped.add_texts(["photosynthesis uses light"], [{"row": 999}], ids=["extra"])
    assert ids == ["extra"] and "extra" in inner.store
    wrapped.add_documents([Document(id="extra2", page_content="x", metadata={"row": 998})])
    assert wrapped.get_by_ids(["extra", "extra2"]) == inner.get_by_ids(["extra", "extra2"])
    wrapped.delete(["extra", "extra2"])
    assert "extra" not in inner.store and len(inner.store) == 30
    assert wrapped.embeddings is inner.embeddings
    assert wrapped.store is inner.store  # store-specific attributes pass through


async def test_async_writes_go_to_the_wrapped_store(small):
    inner, wrapped = small
    await wrapped.aadd_texts(["a"], [{"row": 1000}], ids=["async"])
    assert (await wrapped.aget_by_ids(["async"]))[0].page_content == "a"
    await wrapped.adelete(["async"])
    assert "async" not in inner.store


def test_searches_are_the_wrapped_stores(small, store_cases):
    inner, wrapped = small
    assert wrapped.similarity_search(QUERY, k=3) == inner.similarity_search(QUERY, k=3)
    assert results(wrapped.similarity_search_with_score(QUERY, k=3)) == approx_scores(
        results(inner.similarity_search_with_score(QUERY, k=3)))
    # MMR is the core's (one lambda_mult meaning on every store), not the store's own
    assert results(wrapped.max_marginal_relevance_search(QUERY, k=3, lambda_mult=0.3)) == (
        approx_scores(results(wrapped.search(QUERY, "mmr", k=3, lambda_mult=0.3))))
    stock = wrapped.as_retriever(search_type="similarity", search_kwargs={"k": 3})
    assert stock.invoke(QUERY) == inner.as_retriever(search_kwargs={"k": 3}).invoke(QUERY)
    # Relevance scores need a store that defines them (InMemoryVectorStore does not): FAISS.
    faiss_store = store_cases["faiss"].store
    wrapped_faiss = DiverseVectorStore(faiss_store)
    scored = wrapped_faiss.similarity_search_with_relevance_scores(QUERY, k=5)
    assert results(scored) == approx_scores(
        results(faiss_store.similarity_search_with_relevance_scores(QUERY, k=5)))
    cut = float(scored[1][1] + scored[2][1]) / 2
    threshold = wrapped_faiss.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": cut, "k": 5}
    )
    assert threshold.invoke(QUERY) == [doc for doc, _ in scored[:2]]
    assert wrapped_faiss.index is faiss_store.index


async def test_async_searches_are_the_wrapped_stores(small):
    inner, wrapped = small
    assert await wrapped.asimilarity_search(QUERY, k=2) == await inner.asimilarity_search(
        QUERY, k=2
    )


def test_as_retriever_gives_the_subclass_with_diverse_types(small):
    inner, wrapped = small
    retriever = wrapped.as_retriever(search_type=DEFAULT_METHOD, search_kwargs={"k": 3})
    assert isinstance(retriever, DiverseVectorStoreRetriever)
    assert isinstance(retriever, VectorStoreRetriever)
    assert retriever.tags == ["InMemoryVectorStore", "SpyEmbeddings"]
    got = retriever.invoke(QUERY)
    assert [d.metadata[METADATA_KEY]["method"] for d in got] == [DEFAULT_METHOD] * 3
    assert results(wrapped.search(QUERY, DEFAULT_METHOD, k=3)) == approx_scores(results(got))
    assert wrapped.search(QUERY, "similarity", k=3) == inner.similarity_search(QUERY, k=3)
    # Any core method is a search type, e.g. the exact VRSD optimum over a small pool.
    exact = wrapped.as_retriever(search_type="vrsd_exact", search_kwargs={"k": 3, "fetch_k": 8})
    assert [d.metadata[METADATA_KEY]["method"] for d in exact.invoke(QUERY)] == ["vrsd_exact"] * 3


async def test_async_search_type(small):
    _, wrapped = small
    retriever = wrapped.as_retriever(search_type="dpp", search_kwargs={"k": 3, "theta": 0.7})
    want = approx_scores(results(retriever.invoke(QUERY)))
    assert results(await retriever.ainvoke(QUERY)) == want
    assert results(await wrapped.asearch(QUERY, "dpp", k=3, theta=0.7)) == want


def test_from_texts_builds_and_wraps(make_spy):
    wrapped = DiverseVectorStore.from_texts(["one", "two"], make_spy(), [{"row": 0}, {"row": 1}])
    assert isinstance(wrapped.wrapped_vectorstore, InMemoryVectorStore)
    assert sorted(rows(wrapped.as_retriever(search_type="complement").invoke("one"))) == [0, 1]


def test_wrapping_something_else_is_an_error():
    with pytest.raises(ValueError, match="vectorstore: expected a LangChain VectorStore"):
        DiverseVectorStore(object())
