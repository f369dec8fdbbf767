"""Settings checked once, when the retriever is built, and kept; a field assigned later
is honoured and checked at the next call; and the walk from a call to the selection has
no steps machinery on it."""

from __future__ import annotations

import asyncio

import pytest

import vrsd_langchain.pipeline as pipeline_module
import vrsd_langchain.retriever as retriever_module
import vrsd_langchain.vectorstore as vectorstore_module
from tests.helpers.frames import frames_to_select
from vrsd_langchain import DiverseVectorStore, EmbeddingCache, VRSDCompressor, VRSDRetriever

QUERY = "Which process changes liquid water into water vapor?"


@pytest.fixture
def plans_built(monkeypatch):
    """How many plans ``make_plan`` has built (every setting checked) since the test began."""
    count = [0]

    def counting(*args, **kwargs):
        count[0] += 1
        return pipeline_module.make_plan(*args, **kwargs)

    monkeypatch.setattr(retriever_module, "make_plan", counting)
    monkeypatch.setattr(vectorstore_module, "make_plan", counting)
    return lambda: count[0]


def test_a_plain_call_reuses_the_plan_built_with_the_retriever(in_memory_store, plans_built):
    retriever = VRSDRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    assert plans_built() == 1
    plan = retriever._plan({})
    for _ in range(3):
        assert len(retriever.invoke(QUERY)) == 3
    assert asyncio.run(retriever.ainvoke(QUERY))
    assert plans_built() == 1 and retriever._plan({}) is plan
    assert len(retriever.invoke(QUERY, k=2)) == 2  # the counts only: checked, not rebuilt
    assert plans_built() == 1
    retriever.invoke(QUERY, lexical=False)
    assert plans_built() == 2  # any other override: every setting checked again
    assert retriever._plan({}) is plan  # ... and the kept plan is still the fields'


def test_an_assigned_field_is_honoured_at_the_next_call(in_memory_store, plans_built):
    retriever = VRSDRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    retriever.k = 6
    assert len(retriever.invoke(QUERY)) == 6
    assert plans_built() == 2
    retriever.search_kwargs = {"filter": lambda doc: int(doc.metadata["row"]) % 2 == 0}
    assert all(int(d.metadata["row"]) % 2 == 0 for d in retriever.invoke(QUERY))
    retriever.search_kwargs["filter"] = lambda doc: int(doc.metadata["row"]) % 2 == 1
    # changed in place: the same dict, a new value in it
    assert all(int(d.metadata["row"]) % 2 == 1 for d in retriever.invoke(QUERY))
    copied = retriever.model_copy(update={"k": 2})  # shares the kept plan's holder
    assert len(copied.invoke(QUERY)) == 2 and len(retriever.invoke(QUERY)) == 6
    retriever.method_kwargs["prior_weight"] = 0.5  # an option the default does not take
    with pytest.raises(ValueError, match="prior_weight"):
        retriever.invoke(QUERY)


def test_the_kept_plan_is_not_a_field(in_memory_store):
    cache = EmbeddingCache()
    one, two = (VRSDRetriever(vectorstore=in_memory_store, k=3, cache=cache) for _ in "12")
    assert one._plans is not two._plans and one == two
    assert "_plans" not in one.model_dump() and "_plans" not in repr(one)


@pytest.mark.parametrize(("field", "value", "name"), [
    ("k", 0, "k"), ("fetch_k", 2, "fetch_k"), ("method", "nope", "method"),
    ("max_tokens", -5, "max_tokens"), ("search_kwargs", {"fetchk": 3}, "fetchk"),
])
def test_an_invalid_assignment_is_refused_at_the_next_call(in_memory_store, field, value, name):
    retriever = VRSDRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    setattr(retriever, field, value)
    for _ in range(2):  # a refusal is not kept as a plan
        with pytest.raises(ValueError, match=f"^{name}:"):
            retriever.invoke(QUERY)
    with pytest.raises(ValueError, match=f"^{name}:"):
        asyncio.run(retriever.ainvoke(QUERY))


def test_the_search_type_retriever_keeps_its_plan_and_sees_assignments(in_memory_store,
                                                                         plans_built):
    retriever = DiverseVectorStore(in_memory_store).as_retriever(
        search_type="complement", search_kwargs={"k": 3, "fetch_k": 12})
    assert plans_built() == 1
    assert len(retriever.invoke(QUERY)) == 3 and len(retriever.invoke(QUERY, k=2)) == 2
    assert plans_built() == 1
    retriever.search_kwargs["k"] = 5
    assert len(retriever.invoke(QUERY)) == 5 and plans_built() == 2
    retriever.search_kwargs = {"k": 0}
    with pytest.raises(ValueError, match="^k:"):
        retriever.invoke(QUERY)


def test_the_compressor_checks_an_assigned_field_at_the_next_call(in_memory_store,
                                                                 embeddings):
    docs = in_memory_store.similarity_search(QUERY, k=12)
    compressor = VRSDCompressor(embeddings=embeddings, k=3)
    assert len(compressor.compress_documents(docs, QUERY)) == 3
    compressor.k = 5
    assert len(compressor.compress_documents(docs, QUERY)) == 5
    compressor.k = 0
    with pytest.raises(ValueError, match="^k:"):
        compressor.compress_documents(docs, QUERY)
    compressor.k, compressor.method = 3, "nope"
    with pytest.raises(ValueError, match="^method:"):
        asyncio.run(compressor.acompress_documents(docs, QUERY))


def test_a_call_reaches_the_selection_without_the_steps_machinery(in_memory_store,
                                                                  embeddings):
    """Only the entry point and ``choose`` stand between a call and the core: the I/O
    steps (``vrsd_kit.steps``) have returned before the selection starts."""
    retriever = VRSDRetriever(vectorstore=in_memory_store, k=3, fetch_k=12)
    store = DiverseVectorStore(in_memory_store)
    by_type = store.as_retriever(search_type="complement", search_kwargs={"k": 3})
    qvec = embeddings.embed_query(QUERY)
    compressor = VRSDCompressor(embeddings=embeddings, k=3)
    docs = in_memory_store.similarity_search(QUERY, k=12)
    for call, want in [
        (lambda: retriever.invoke(QUERY), ["_get_relevant_documents", "choose"]),
        (lambda: asyncio.run(retriever.ainvoke(QUERY)), ["_aget_relevant_documents", "choose"]),
        (lambda: by_type.invoke(QUERY), ["_get_relevant_documents", "choose"]),
        (lambda: asyncio.run(by_type.ainvoke(QUERY)), ["_aget_relevant_documents", "choose"]),
        (lambda: store.max_marginal_relevance_search_by_vector(qvec, k=3),
         ["max_marginal_relevance_search_by_vector", "choose"]),
        (lambda: asyncio.run(store.amax_marginal_relevance_search_by_vector(qvec, k=3)),
         ["amax_marginal_relevance_search_by_vector", "choose"]),
        (lambda: compressor.compress_documents(docs, QUERY), ["compress_documents", "choose"]),
        (lambda: asyncio.run(compressor.acompress_documents(docs, QUERY)),
         ["acompress_documents", "choose"]),
    ]:
        assert frames_to_select(call) == want
