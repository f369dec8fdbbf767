"""The LangChain classes' settings: checked when built and at every assignment (a bad
value refused there, the object unchanged and still working), a dict changed in place
checked at the next call, a call's overrides checked for that call only; and the walk
from a call to the selection has no steps machinery on it."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.frames import frames_to_select
from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore, EmbeddingCache

QUERY = "Which process changes liquid water into water vapor?"


def test_a_plain_call_uses_the_settings_built_with_the_retriever(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    settings = retriever.settings()
    for _ in range(2):
        assert len(retriever.invoke(QUERY)) == 3
    assert asyncio.run(retriever.ainvoke(QUERY))
    assert retriever.settings() is settings
    assert len(retriever.invoke(QUERY, k=2)) == 2  # a call's override is that call's only
    assert retriever.invoke(QUERY, lexical=False)[0].metadata["vrsd"].keys() >= {"relevance"}
    assert "lexical" not in retriever.invoke(QUERY, lexical=False)[0].metadata["vrsd"]
    assert retriever.settings() is settings


def test_an_assigned_field_is_checked_and_honoured(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    retriever.k = 6
    assert retriever.settings().k == 6 and len(retriever.invoke(QUERY)) == 6
    retriever.search_kwargs = {"filter": lambda doc: int(doc.metadata["row"]) % 2 == 0}
    assert all(int(d.metadata["row"]) % 2 == 0 for d in retriever.invoke(QUERY))
    # changed in place (LangChain's idiom): the same dict, a new value in it
    retriever.search_kwargs["filter"] = lambda doc: int(doc.metadata["row"]) % 2 == 1
    assert all(int(d.metadata["row"]) % 2 == 1 for d in retriever.invoke(QUERY))
    copied = retriever.model_copy(update={"k": 2})  # checked like an assignment
    assert len(copied.invoke(QUERY)) == 2 and len(retriever.invoke(QUERY)) == 6
    with pytest.raises(ValueError, match="^k: "):
        retriever.model_copy(update={"k": 0})
    retriever.method_kwargs["prior_weight"] = 0.5  # in place: an option the default lacks
    with pytest.raises(ValueError, match="prior_weight"):
        retriever.invoke(QUERY)


def test_the_settings_are_not_a_field(in_memory_store):
    cache = EmbeddingCache()
    one, two = (DiverseRetriever(vectorstore=in_memory_store, k=3, cache=cache) for _ in "12")
    assert one.settings() is not two.settings() and one == two
    dumped = one.model_dump()
    assert not any(key.startswith("_") for key in dumped) and "_vrsd" not in repr(one)


@pytest.mark.parametrize(("field", "value", "name"), [
    ("k", 0, "k"), ("k", "3", "k"), ("fetch_k", 2, "fetch_k"), ("fetch_k", "20", "fetch_k"),
    ("fetch_k", None, "fetch_k"),  # None is a reranker's (candidates given), not a retriever's
    ("method", "nope", "method"), ("method_kwargs", {"lamda": 0.5}, "lamda"),
    ("max_tokens", -5, "max_tokens"), ("search_kwargs", {"fetchk": 3}, "fetchk"),
    ("lexical", "no", "lexical"), ("relevance", 3, "relevance"),
    ("max_per_group", 2, "group_by"), ("reembed", "never", "reembed"),
])
def test_an_invalid_assignment_is_refused_there(in_memory_store, field, value, name):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    before, settings = getattr(retriever, field), retriever.settings()
    with pytest.raises(ValueError, match=f"^{name}:"):
        setattr(retriever, field, value)
    assert getattr(retriever, field) == before and retriever.settings() is settings
    assert len(retriever.invoke(QUERY)) == 3 and len(asyncio.run(retriever.ainvoke(QUERY))) == 3


def test_a_misspelt_field_is_refused_with_the_closest(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store)
    with pytest.raises(ValueError, match=r"^fetchk: not a field of DiverseRetriever; did you mean "
                                         r"fetch_k\?"):
        retriever.fetchk = 3  # type: ignore[attr-defined]


def test_the_search_type_retriever_checks_assignments(in_memory_store):
    retriever = DiverseVectorStore(in_memory_store).as_retriever(
        search_type="complement", search_kwargs={"k": 3, "fetch_k": 12})
    assert len(retriever.invoke(QUERY)) == 3 and len(retriever.invoke(QUERY, k=2)) == 2
    retriever.search_kwargs["k"] = 5  # in place, as in LangChain: seen at the next call
    assert len(retriever.invoke(QUERY)) == 5
    with pytest.raises(ValueError, match="^k:"):
        retriever.search_kwargs = {"k": 0}
    with pytest.raises(ValueError, match="^search_type: 'bogus'"):
        retriever.search_type = "bogus"
    assert retriever.search_kwargs == {"k": 5, "fetch_k": 12} and len(retriever.invoke(QUERY)) == 5
    retriever.search_type = "similarity"  # the store's own search: its kwargs are the store's
    assert len(retriever.invoke(QUERY)) == 5


def test_the_compressor_checks_an_assignment(in_memory_store, embeddings):
    docs = in_memory_store.similarity_search(QUERY, k=12)
    compressor = DiverseCompressor(embeddings=embeddings, k=3)
    assert len(compressor.compress_documents(docs, QUERY)) == 3
    compressor.k = 5
    assert len(compressor.compress_documents(docs, QUERY)) == 5
    with pytest.raises(ValueError, match="^k:"):
        compressor.k = 0
    with pytest.raises(ValueError, match="^method:"):
        compressor.method = "nope"
    assert len(asyncio.run(compressor.acompress_documents(docs, QUERY))) == 5


def test_a_call_reaches_the_selection_through_the_one_body(in_memory_store, embeddings):
    """Only the entry point, ``choose`` and the kit's ``rerank`` stand between a call and
    the core: the I/O steps (``vrsd_kit.steps``) have returned before the selection."""
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    store = DiverseVectorStore(in_memory_store)
    by_type = store.as_retriever(search_type="complement", search_kwargs={"k": 3})
    qvec = embeddings.embed_query(QUERY)
    compressor = DiverseCompressor(embeddings=embeddings, k=3)
    docs = in_memory_store.similarity_search(QUERY, k=12)
    for call, entry in [
        (lambda: retriever.invoke(QUERY), "_get_relevant_documents"),
        (lambda: asyncio.run(retriever.ainvoke(QUERY)), "_aget_relevant_documents"),
        (lambda: by_type.invoke(QUERY), "_get_relevant_documents"),
        (lambda: asyncio.run(by_type.ainvoke(QUERY)), "_aget_relevant_documents"),
        (lambda: store.max_marginal_relevance_search_by_vector(qvec, k=3),
         "max_marginal_relevance_search_by_vector"),
        (lambda: asyncio.run(store.amax_marginal_relevance_search_by_vector(qvec, k=3)),
         "amax_marginal_relevance_search_by_vector"),
        (lambda: compressor.compress_documents(docs, QUERY), "compress_documents"),
        (lambda: asyncio.run(compressor.acompress_documents(docs, QUERY)),
         "acompress_documents"),
    ]:
        assert frames_to_select(call) == [entry, "choose", "rerank"]


@pytest.mark.parametrize("name", ["k", "fetch_k"])
def test_a_count_given_per_call_as_none_is_refused(in_memory_store, name):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=8)
    for extra in ({}, {"lexical": False}):  # the counts alone, and with another setting
        with pytest.raises(ValueError, match=f"^{name}: expected an integer >= 1, got None"):
            retriever.invoke(QUERY, **{name: None}, **extra)
    assert len(retriever.invoke(QUERY)) == 3 and retriever.fetch_k == 8
