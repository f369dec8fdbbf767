"""DiverseRetriever and the search-type retriever: LangChain's standard suite, chains, errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_tests.integration_tests import RetrieversIntegrationTests

from tests.helpers.approx import approx_scores, results
from vrsd_core import DEFAULT_METHOD, select
from vrsd_kit.settings import DEFAULT_FETCH_K
from vrsd_langchain import (
    METADATA_KEY,
    DiverseRetriever,
    DiverseVectorStore,
    DiverseVectorStoreRetriever,
)

QUERY = "Which process changes liquid water into water vapor?"


def rows(docs) -> list[int]:
    return [int(d.metadata["row"]) for d in docs]


# --- LangChain's standard retriever suite ------------------------------------------


class TestDiverseRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _store(self, in_memory_store):
        self.store = in_memory_store

    @property
    def retriever_constructor(self) -> type[DiverseRetriever]:
        return DiverseRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"vectorstore": self.store, "k": 4, "fetch_k": 20}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def search_type_retriever(vectorstore, k: int = 4, **kwargs) -> DiverseVectorStoreRetriever:
    """The suite builds retrievers as ``constructor(k=...)``; ``k`` lives in search_kwargs."""
    return DiverseVectorStore(vectorstore).as_retriever(
        search_type="complement", search_kwargs={"k": k, "fetch_k": 20}, **kwargs
    )


class TestSearchTypeRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _store(self, in_memory_store):
        self.store = in_memory_store

    @property
    def retriever_constructor(self):
        return search_type_retriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"vectorstore": self.store, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return QUERY

    def test_constructor_gives_the_subclass(self, retriever):
        assert type(retriever) is DiverseVectorStoreRetriever
        assert retriever.search_type == "complement"


# --- chains, async, batch -------------------------------------------------------------


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def test_lcel_chain_retriever_format_prompt(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3)
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context.\n\n{context}"), ("human", "{question}")]
    )
    chain = {"context": retriever | RunnableLambda(format_docs),
             "question": RunnablePassthrough()} | prompt
    value = chain.invoke(QUERY)
    messages = value.to_messages()
    assert messages[1].content == QUERY
    picked = retriever.invoke(QUERY)
    assert messages[0].content == "Answer from the context.\n\n" + format_docs(picked)
    # The same chain ending in a parser, as a RAG pipeline would feed an LLM.
    text = (retriever | RunnableLambda(format_docs) | StrOutputParser()).invoke(QUERY)
    assert text == format_docs(picked)


async def test_ainvoke_and_abatch_match_invoke(in_memory_store, queries):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3, fetch_k=15)
    sync = approx_scores(results([retriever.invoke(q) for q in queries[:3]]))
    assert results(await retriever.ainvoke(queries[0])) == sync[0]
    assert results(await retriever.abatch(queries[:3])) == sync
    # The default's first pick is the most relevant candidate, whatever k (what it held
    # back in favour of that pick depends on k).
    one = await retriever.ainvoke(queries[1], k=1)
    assert [d.id for d in one] == [sync[1][0][0]]  # results(): (id, text, metadata)
    assert one[0].metadata["vrsd"]["held_back"] == []


def test_batch_matches_invoke_and_accepts_per_call_kwargs(in_memory_store, queries):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=3)
    assert results(retriever.batch(queries[:4])) == approx_scores(
        results([retriever.invoke(q) for q in queries[:4]]))
    assert [len(r) for r in retriever.batch(queries[:2], k=2)] == [2, 2]


# --- per-call overrides ---------------------------------------------------------------


def test_per_call_k_fetch_k_and_method_options(in_memory_store, embeddings):
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=4, fetch_k=20, method="mmr")
    qvec = np.asarray(embeddings.embed_query(QUERY))
    cand = in_memory_store.similarity_search_by_vector(list(qvec), k=30)
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in cand]))

    def want(k, n, **options):
        sel = select(qvec, vecs[:n], k, method="mmr", **options)
        return [rows(cand)[i] for i in sel.indices]

    assert rows(retriever.invoke(QUERY)) == want(4, 20)
    assert rows(retriever.invoke(QUERY, k=2)) == want(2, 20)
    wider = retriever.invoke(QUERY, fetch_k=30, lambda_mult=0.1)
    assert rows(wider) == want(4, 30, lambda_mult=0.1)
    # The fields are untouched by per-call values.
    assert (retriever.k, retriever.fetch_k, retriever.method_kwargs) == (4, 20, {})
    # method per call: runs with that call's options only.
    swap = retriever.invoke(QUERY, method="vrsd", refine="swap")
    assert {d.metadata[METADATA_KEY]["method"] for d in swap} == {"vrsd"}


def test_quality_prior_from_a_metadata_field(in_memory_store, embeddings):
    retriever = DiverseRetriever(
        vectorstore=in_memory_store, k=4, method="similarity",
        method_kwargs={"prior": "row", "prior_weight": 0.5},
    )
    qvec = np.asarray(embeddings.embed_query(QUERY))
    cand = in_memory_store.similarity_search_by_vector(list(qvec), k=DEFAULT_FETCH_K)
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in cand]))
    sel = select(qvec, vecs, 4, method="similarity", prior=rows(cand), prior_weight=0.5)
    got = retriever.invoke(QUERY)
    assert rows(got) == [rows(cand)[i] for i in sel.indices]
    assert rows(got) != rows(cand[:4])  # the prior (a large row number) changed the picks
    with pytest.raises(ValueError, match="prior: .*no metadata field 'missing'"):
        retriever.invoke(QUERY, prior="missing")
    with pytest.raises(ValueError, match="prior"):
        DiverseRetriever(vectorstore=in_memory_store, method="mmr", method_kwargs={"prior": [1.0]})


# --- output ---------------------------------------------------------------------------


def test_output_is_annotated_copies_in_selection_order(in_memory_store, embeddings):
    before = copy.deepcopy(in_memory_store.store)
    got = DiverseRetriever(vectorstore=in_memory_store, k=4).invoke(QUERY)
    qvec = np.asarray(embeddings.embed_query(QUERY))
    for rank, doc in enumerate(got):
        entry = doc.metadata[METADATA_KEY]
        assert set(entry) - {"linked_to"} == {"rank", "relevance", "cosine", "lexical",
                                              "gain", "method", "held_back"}
        assert "linked_to" not in entry or entry["linked_to"]["rank"] <= rank
        assert entry["rank"] == rank and entry["method"] == DEFAULT_METHOD
        assert isinstance(entry["relevance"], float) and isinstance(entry["gain"], float)
        stored = in_memory_store.store[doc.id]
        vec = np.asarray(stored["vector"])
        cosine = float(vec @ qvec / (np.linalg.norm(vec) * np.linalg.norm(qvec)))
        assert entry["cosine"] == pytest.approx(cosine, abs=1e-6)
        assert isinstance(entry["lexical"], float) and entry["lexical"] >= 0.0
        assert stored["metadata"] is not doc.metadata
        assert METADATA_KEY not in stored["metadata"]
    gains = [d.metadata[METADATA_KEY]["gain"] for d in got]
    assert gains[0] == max(gains) and min(gains) > 0  # determinant ratios: the first is largest
    assert in_memory_store.store.keys() == before.keys()
    assert all(in_memory_store.store[k]["metadata"] == before[k]["metadata"] for k in before)


def test_callers_documents_are_untouched(make_spy, corpus_docs):
    docs = copy.deepcopy(corpus_docs[:40])
    snapshot = copy.deepcopy(docs)
    store = InMemoryVectorStore(make_spy())
    ids = store.add_documents(docs)
    retriever = DiverseRetriever(vectorstore=store, k=5)
    for result in retriever.batch([QUERY, "What makes a magnet attract iron?"]):
        assert len(result) == 5
    assert docs == snapshot
    assert sorted(store.store) == sorted(ids) and len(store.store) == 40


# --- errors ---------------------------------------------------------------------------


def test_store_without_embeddings_says_how_to_pass_them(hidden_store_cls, embeddings):
    store = hidden_store_cls(None, inner_embedding=embeddings)
    store.add_texts(["a text"])
    with pytest.raises(ValueError, match=r"embeddings: HiddenStore exposes no embeddings.*"
                                         r"DiverseRetriever\(vectorstore=store, embeddings="):
        DiverseRetriever(vectorstore=store)
    with pytest.raises(ValueError, match="embeddings: .*DiverseVectorStoreRetriever"):
        DiverseVectorStore(store).as_retriever(search_type="complement")
    given = DiverseRetriever(vectorstore=store, embeddings=embeddings, k=1)
    assert given.invoke("a")[0].page_content == "a text"
    assert len(DiverseVectorStore(store, embeddings=embeddings).as_retriever(
        search_type="dpp", search_kwargs={"k": 1}).invoke("a")) == 1


def test_fetch_k_below_k_is_an_error(in_memory_store):
    with pytest.raises(ValueError, match="fetch_k: must be >= k"):
        DiverseRetriever(vectorstore=in_memory_store, k=5, fetch_k=4)
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=5, fetch_k=10)
    with pytest.raises(ValueError, match="fetch_k: must be >= k"):
        retriever.invoke(QUERY, k=11)
    with pytest.raises(ValueError, match="fetch_k: must be >= k"):
        DiverseVectorStore(in_memory_store).as_retriever(
            search_type="complement", search_kwargs={"k": 8, "fetch_k": 3}
        )


def test_a_retriever_built_without_its_validators_is_a_runtime_error(in_memory_store):
    """``model_construct`` skips the validator that checks the settings: the call says so."""
    retriever = DiverseRetriever.model_construct(vectorstore=in_memory_store, k=2, fetch_k=5)
    with pytest.raises(RuntimeError, match=r"DiverseRetriever: its settings were never checked"):
        retriever.invoke(QUERY)


def test_k_zero_is_refused_and_embeds_nothing(make_spy, corpus_docs):
    """One rule in every adapter and the CLI: a count below 1 is a ValueError naming it."""
    spy = make_spy()
    store = InMemoryVectorStore(spy)
    store.add_documents(corpus_docs[:5])
    spy.reset()
    with pytest.raises(ValueError, match=r"k: expected an integer >= 1, got 0"):
        DiverseRetriever(vectorstore=store, k=0)
    with pytest.raises(ValueError, match=r"^k: expected an integer >= 1, got 0"):
        DiverseRetriever(vectorstore=store, k=3).invoke(QUERY, k=0)
    assert spy.query_calls == 0


def test_k_larger_than_the_store_gives_all(make_spy, corpus_docs):
    store = InMemoryVectorStore(make_spy())
    store.add_documents(corpus_docs[:3])
    got = DiverseRetriever(vectorstore=store, k=10, fetch_k=20).invoke(QUERY)
    assert sorted(rows(got)) == [0, 1, 2]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"method": "nope"}, "method: unknown method 'nope'"),
        ({"method": "vrsd", "method_kwargs": {"lambda_mult": 0.5}},
         "lambda_mult: not an option of method 'vrsd'"),
        ({"method": "mmr", "method_kwargs": {"lambda_mult": 1.5}}, "lambda_mult: must be in"),
        ({"method": "vrsd", "method_kwargs": {"refine": "twice"}}, "refine"),
        ({"method": "vrsd", "method_kwargs": {"prior": "score"}},
         "prior: method 'vrsd' takes no quality prior"),
        ({"method": "mmr", "method_kwargs": {"prior": 5}},
         "prior: give the name of a metadata field or a callable"),
        ({"method": "dpp", "method_kwargs": {"theta": 1.0}}, "theta"),
        # select's own arguments are not method options (normalize=False included)
        ({"method": "mmr", "method_kwargs": {"normalize": False}},
         "normalize: not an option of method 'mmr'"),
        ({"method": "mmr", "method_kwargs": {"relevance": [1.0, 2.0]}},
         "relevance: not an option of method 'mmr'"),
        ({"k": -1}, "k: expected an integer >= 1"),
        ({"k": 2.5}, "k: expected an integer >= 1, got 2.5"),
        ({"k": 2.0}, "k: expected an integer >= 1, got 2.0"),
        ({"k": True}, "k: expected an integer >= 1, got True"),
        ({"k": "3"}, "k: expected an integer >= 1, got '3'"),
        ({"fetch_k": 20.0}, "fetch_k: expected an integer >= 1, got 20.0"),
        ({"fetch_k": False}, "fetch_k: expected an integer >= 1, got False"),
        ({"fetch_k": -3}, "fetch_k: expected an integer >= 1"),
        ({"search_kwargs": {"filtr": None}}, "filtr: not a search argument of InMemoryVectorStore"),
        ({"search_kwargs": {"filter": {"split": "A"}}}, "filter: InMemoryVectorStore filters"),
        ({"cache_size": -1}, "maxsize"),
        ({"search_kwargs": {"k": 6}}, "search_kwargs: 'k' is a field of DiverseRetriever"),
    ],
)
def test_bad_settings_fail_at_construction(in_memory_store, settings, message):
    with pytest.raises(ValueError, match=message):
        DiverseRetriever(vectorstore=in_memory_store, **settings)


def test_bad_per_call_values_fail(in_memory_store):
    retriever = DiverseRetriever(vectorstore=in_memory_store, method="mmr")
    with pytest.raises(ValueError, match="lambda_mult: must be in"):
        retriever.invoke(QUERY, lambda_mult=-0.1)
    with pytest.raises(ValueError, match=r"theta: not a search argument .*nor an option of 'mmr'"):
        retriever.invoke(QUERY, theta=0.3)
    with pytest.raises(ValueError, match="method: unknown method"):
        retriever.invoke(QUERY, method="mmr2")


def test_a_call_checks_the_options_it_overrides(in_memory_store):
    """The settings are checked at construction; a call's own options are checked as
    they are given (tests/unit_tests/langchain: a plain call rebuilds nothing)."""
    retriever = DiverseRetriever(vectorstore=in_memory_store, k=2, fetch_k=6, method="mmr",
                                 method_kwargs={"lambda_mult": 0.37})
    retriever.invoke(QUERY, lambda_mult=0.61)
    for _ in range(2):  # a refusal is not remembered as a pass
        with pytest.raises(ValueError, match="lambda_mult: must be in"):
            retriever.invoke(QUERY, lambda_mult=1.5)
    retriever.invoke(QUERY, lambda_mult=1)
    with pytest.raises(ValueError, match="lambda_mult: expected a number"):
        retriever.invoke(QUERY, lambda_mult=True)  # equal to 1, which passed: still refused
    assert retriever.method_kwargs == {"lambda_mult": 0.37}  # the call changed nothing


def test_unknown_search_type_lists_the_allowed_ones(in_memory_store):
    with pytest.raises(ValueError, match="vsrd not allowed.*'similarity'.*'mmr'.*'vrsd'.*'dpp'"):
        DiverseVectorStore(in_memory_store).as_retriever(search_type="vsrd")
    with pytest.raises(ValueError, match="theta: not a search argument"):
        DiverseVectorStore(in_memory_store).as_retriever(
            search_type="vrsd", search_kwargs={"theta": 0.5}
        )
