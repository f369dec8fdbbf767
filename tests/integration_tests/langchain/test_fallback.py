"""Stores without a fast path: candidates re-embedded once, through the content cache."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.approx import approx_scores, results
from tests.helpers.words import default_selection
from vrsd_core import select
from vrsd_langchain import DiverseRetriever, DiverseVectorStore, EmbeddingCache
from vrsd_langchain.candidates import fast_path_for

K, FETCH_K = 4, 20


def rows(docs) -> list[int]:
    return [int(d.metadata["row"]) for d in docs]


@pytest.fixture(scope="module")
def hidden(corpus_docs, make_spy, hidden_store_cls):
    """A HiddenStore over the corpus; its spy is reset by each test that counts."""
    spy = make_spy()
    store = hidden_store_cls(spy)
    store.add_texts(
        [d.page_content for d in corpus_docs],
        copy.deepcopy([d.metadata for d in corpus_docs]),
        ids=[d.id for d in corpus_docs],
    )
    return store, spy


def test_no_fast_path_for_a_plain_store(hidden):
    store, _ = hidden
    assert fast_path_for(store) is None


@pytest.mark.parametrize("method", ["vrsd", "mmr", "dpp"])
def test_result_equals_core_select_on_re_embedded_candidates(hidden, embeddings, queries, method):
    store, _ = hidden
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, method=method)
    for query in queries[:2]:
        qvec = np.asarray(embeddings.embed_query(query))
        cands = store.similarity_search_by_vector(list(qvec), k=FETCH_K)
        vecs = np.asarray(embeddings.embed_documents([d.page_content for d in cands]))
        sel = select(qvec, vecs, K, method=method)
        got = retriever.invoke(query)
        assert rows(got) == [rows(cands)[i] for i in sel.indices]
        np.testing.assert_allclose(
            [d.metadata["vrsd"]["relevance"] for d in got], sel.relevance, atol=1e-6
        )


def test_cache_prevents_a_second_re_embedding(hidden, queries):
    store, spy = hidden
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    spy.reset()
    first = retriever.invoke(queries[0])
    assert (spy.query_calls, spy.document_calls, spy.documents_embedded) == (1, 1, FETCH_K)
    assert retriever.cache.misses == FETCH_K and len(retriever.cache) == FETCH_K
    again = retriever.invoke(queries[0])
    assert results(again) == approx_scores(results(first))
    assert (spy.query_calls, spy.document_calls, spy.documents_embedded) == (2, 1, FETCH_K)
    assert retriever.cache.hits == FETCH_K
    # Another query embeds only the candidates it has not seen.
    seen = {d.page_content for d in store.similarity_search(queries[0], k=FETCH_K)}
    new = {d.page_content for d in store.similarity_search(queries[1], k=FETCH_K)} - seen
    spy.reset()
    retriever.invoke(queries[1])
    assert spy.documents_embedded == len(new)


async def test_async_fallback_uses_the_same_cache(hidden, queries):
    store, spy = hidden
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    spy.reset()
    got = await retriever.ainvoke(queries[2])
    assert (spy.query_calls, spy.document_calls) == (1, 1)
    assert results(got) == approx_scores(results(retriever.invoke(queries[2])))
    assert spy.document_calls == 1


def test_store_without_search_by_vector_uses_similarity_search(
    corpus_docs, make_spy, hidden_store_cls, queries
):
    spy = make_spy()
    by_text = hidden_store_cls(spy, by_vector=False)
    by_text.add_texts([d.page_content for d in corpus_docs[:60]],
                      [dict(d.metadata) for d in corpus_docs[:60]])
    by_vec = hidden_store_cls(spy)
    by_vec.add_texts([d.page_content for d in corpus_docs[:60]],
                     [dict(d.metadata) for d in corpus_docs[:60]])
    spy.reset()
    a = DiverseRetriever(vectorstore=by_text, k=K).invoke(queries[0])
    # The only path that embeds the query twice: once here, once inside the store's search.
    assert spy.query_calls == 2
    b = DiverseRetriever(vectorstore=by_vec, k=K).invoke(queries[0])
    assert rows(a) == rows(b)


def test_concurrent_batch_is_consistent(hidden, queries):
    store, _ = hidden
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    together = retriever.batch(queries, config={"max_concurrency": 4})
    fresh = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    assert results(together) == approx_scores(results([fresh.invoke(q) for q in queries]))
    distinct = {d.page_content for q in queries for d in store.similarity_search(q, k=FETCH_K)}
    assert len(retriever.cache) == len(distinct)


def test_wrapper_retrievers_share_the_wrappers_cache(hidden, queries):
    store, spy = hidden
    wrapped = DiverseVectorStore(store)
    vrsd = wrapped.as_retriever(search_type="complement", search_kwargs={"k": K})
    dpp = wrapped.as_retriever(search_type="dpp", search_kwargs={"k": K})
    assert vrsd.cache is dpp.cache is wrapped.cache
    spy.reset()
    vrsd.invoke(queries[3])
    dpp.invoke(queries[3])
    assert spy.document_calls == 1


# --- EmbeddingCache on its own ---------------------------------------------------------


TEXTS = ["red apple", "green pear", "blue sky", "yellow sun", "white snow"]


def test_cache_is_bounded_and_least_recently_used(make_spy):
    spy = make_spy()
    cache = EmbeddingCache(maxsize=3)
    first = cache.embed_documents(spy, TEXTS)
    assert first.shape == (5, 384) and len(cache) == 3
    np.testing.assert_allclose(first, np.asarray(spy.inner.embed_documents(TEXTS)), atol=1e-6)
    spy.reset()
    cache.embed_documents(spy, TEXTS[2:])  # the three most recent: all hits
    assert spy.documents_embedded == 0
    cache.embed_documents(spy, TEXTS[:1])  # evicted long ago
    assert spy.documents_embedded == 1 and len(cache) == 3


def test_cache_embeds_duplicates_once_and_keeps_models_apart(make_spy):
    a, b = make_spy(), make_spy()
    cache = EmbeddingCache()
    out = cache.embed_documents(a, ["same", "other", "same"])
    assert a.documents_embedded == 2
    np.testing.assert_array_equal(out[0], out[2])
    cache.embed_documents(b, ["same"])
    assert b.documents_embedded == 1  # another model is another key
    assert cache.embed_documents(a, []).shape[0] == 0


def test_cache_size_zero_caches_nothing(make_spy):
    spy = make_spy()
    cache = EmbeddingCache(maxsize=0)
    cache.embed_documents(spy, TEXTS[:2])
    cache.embed_documents(spy, TEXTS[:2])
    assert spy.documents_embedded == 4 and len(cache) == 0


def test_cache_rejects_a_bad_size():
    with pytest.raises(ValueError, match="maxsize"):
        EmbeddingCache(maxsize=-1)


def test_faiss_index_that_cannot_reconstruct_re_embeds(make_spy, corpus_docs, embeddings, queries):
    """An IVF index without a direct map has no stored vectors to hand out."""
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

    docs = copy.deepcopy(corpus_docs[:80])
    train = np.asarray(embeddings.embed_documents([d.page_content for d in docs]), "float32")
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(384), 384, 4)
    index.train(train)
    index.nprobe = 4  # all lists: exact search
    spy = make_spy()
    store = FAISS(spy, index, InMemoryDocstore(), {})
    store.add_documents(docs)
    with pytest.raises(RuntimeError):
        index.reconstruct(0)
    assert fast_path_for(store).name == "faiss"
    qvec = np.asarray(embeddings.embed_query(queries[0]))
    cands = store.similarity_search_by_vector(list(qvec), k=FETCH_K)
    vecs = np.asarray(embeddings.embed_documents([d.page_content for d in cands]))
    sel = default_selection(queries[0], [d.page_content for d in cands], qvec, vecs, K)
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    spy.reset()
    assert rows(retriever.invoke(queries[0])) == [rows(cands)[i] for i in sel.indices]
    assert (spy.query_calls, spy.documents_embedded) == (1, FETCH_K)
    retriever.invoke(queries[0])
    assert spy.documents_embedded == FETCH_K  # cached


def test_cache_lets_a_model_go_when_its_entries_are_evicted(make_spy):
    a, b = make_spy(), make_spy()
    cache = EmbeddingCache(maxsize=2)
    cache.embed_documents(a, TEXTS[:2])
    cache.embed_documents(b, TEXTS[2:4])  # evicts both of a's entries
    assert cache._models.keys() == {id(b)}
    cache.clear()
    assert len(cache) == 0 and cache.hits == cache.misses == 0 and not cache._models


@settings(max_examples=60, deadline=None)
@given(
    maxsize=st.integers(0, 6),
    calls=st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=8), max_size=6),
)
def test_cache_properties(maxsize, calls):
    """Any call sequence: the vectors are the model's, the bound holds, every text is
    either embedded (a miss) or served (a hit), and only misses reach the model."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from vrsd_langchain.cache import EmbeddingCache as Cache

    class Counting(DeterministicFakeEmbedding):
        sent: int = 0

        def embed_documents(self, texts):
            self.sent += len(texts)
            return super().embed_documents(texts)

    model = Counting(size=8)
    cache = Cache(maxsize)
    for texts in calls:
        out = cache.embed_documents(model, texts)
        want = np.asarray(DeterministicFakeEmbedding(size=8).embed_documents(texts))
        np.testing.assert_array_equal(out, want.reshape(len(texts), -1) if texts else out)
        assert len(cache) <= maxsize
    assert cache.hits + cache.misses == sum(len(t) for t in calls)
    assert model.sent == cache.misses
