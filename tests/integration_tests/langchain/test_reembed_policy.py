"""The re-embedding fallback is never silent by default: ``reembed="warn"`` warns once
per store class naming the reason, ``"allow"`` is quiet, ``"refuse"`` embeds nothing
and raises a ValueError naming the store class, the reason and the option. A spy
counts every text the model embeds."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

from tests.helpers.approx import approx_scores, results
from vrsd_kit.stores import ReembeddingWarning
from vrsd_langchain import DiverseRetriever, DiverseVectorStore

K, FETCH_K = 4, 20


pytestmark = pytest.mark.usefixtures("fresh_reembed_warnings")


@pytest.fixture
def paid(corpus_docs, make_spy, hidden_store_cls):
    """A store class with no fast path (its own class, so the warn-once state is its own)."""
    cls = type("PaidApiStore", (hidden_store_cls,), {})
    spy = make_spy()
    store = cls(spy)
    docs = copy.deepcopy(corpus_docs[:60])
    store.add_texts([d.page_content for d in docs], [d.metadata for d in docs])
    spy.reset()
    return store, spy


def test_warn_is_the_default_and_warns_once_per_store_class(paid, queries):
    store, spy = paid
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    with pytest.warns(ReembeddingWarning) as caught:
        retriever.invoke(queries[0])
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "PaidApiStore" in text and "no fast path is registered" in text
    assert "reembed='refuse'" in text
    assert spy.documents_embedded == FETCH_K
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReembeddingWarning)
        retriever.invoke(queries[1])  # same class: no second warning
        DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K).invoke(queries[2])


def test_allow_is_silent(paid, queries):
    store, spy = paid
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReembeddingWarning)
        got = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, reembed="allow").invoke(
            queries[0])
    assert len(got) == K and spy.documents_embedded == FETCH_K


def test_refuse_fails_when_built_and_embeds_nothing(paid, queries):
    store, spy = paid
    with pytest.raises(ValueError, match=r"reembed: PaidApiStore: no fast path") as err:
        DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, reembed="refuse")
    assert "reembed='refuse'" in str(err.value)
    wrapped = DiverseVectorStore(store, reembed="refuse")
    with pytest.raises(ValueError, match="reembed: PaidApiStore"):
        wrapped.as_retriever(search_type="mmr", search_kwargs={"k": K})
    with pytest.raises(ValueError, match="reembed: PaidApiStore"):
        wrapped.max_marginal_relevance_search(queries[0], k=K)
    assert (spy.query_calls, spy.documents_embedded) == (0, 0)


def test_refuse_at_query_time_when_a_fast_path_finds_no_vectors(make_spy, corpus_docs,
                                                                 embeddings, queries):
    """An IVF FAISS index without a direct map: the fast path applies, but the store
    cannot hand out vectors, which only the query shows."""
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

    docs = copy.deepcopy(corpus_docs[:80])
    train = np.asarray(embeddings.embed_documents([d.page_content for d in docs]), "float32")
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(384), 384, 4)
    index.train(train)
    spy = make_spy()
    store = FAISS(spy, index, InMemoryDocstore(), {})
    store.add_documents(docs)
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, reembed="refuse")
    spy.reset()
    with pytest.raises(ValueError, match="reembed: FAISS: the store returned the candidates "
                                         "without their vectors"):
        retriever.invoke(queries[0])
    assert (spy.query_calls, spy.documents_embedded) == (1, 0)


def test_refuse_on_a_fast_path_store_changes_nothing(in_memory_store, queries):
    plain = DiverseRetriever(vectorstore=in_memory_store, k=K, fetch_k=FETCH_K)
    strict = DiverseRetriever(vectorstore=in_memory_store, k=K, fetch_k=FETCH_K, reembed="refuse")
    assert results(strict.invoke(queries[0])) == approx_scores(results(plain.invoke(queries[0])))


@pytest.mark.parametrize("value", ["never", None, True])
def test_bad_policy_names_the_option(in_memory_store, value):
    with pytest.raises(ValueError, match="reembed"):
        DiverseRetriever(vectorstore=in_memory_store, reembed=value)
    with pytest.raises(ValueError, match="reembed"):
        DiverseVectorStore(in_memory_store, reembed=value)
