"""LangChain Milvus (Milvus Lite) and LanceDB: the fast path's picks are the core's on the
same candidates (found by the store's public search, vectors read through the store's
client separately), filters in the store's own syntax, only the query embedded."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.store_cases import cases_in
from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_langchain import DiverseRetriever
from vrsd_langchain.candidates import fast_path_for

from .conftest import stored_vectors

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20
LC_KINDS = cases_in("langchain", "stores_more")
FILTERS = {"milvus": ("expr", 'split == "A"'), "lancedb": ("filter", "metadata.split = 'A'")}


@pytest.fixture(params=LC_KINDS)
def lc_case(request):
    store = request.getfixturevalue(f"lc_{request.param}")
    store.embeddings.reset()
    return request.param, store


def expected(kind, store, query, method, filtered=False, **options):
    qvec = np.asarray(store.embeddings.inner.embed_query(query))
    name, value = FILTERS[kind]
    docs = store.similarity_search_by_vector(qvec.tolist(), k=FETCH_K,
                                             **({name: value} if filtered else {}))
    vectors = stored_vectors(kind, store, docs)
    sel = (default_selection(query, [d.page_content for d in docs], qvec, vectors, K, **options)
           if method == DEFAULT_METHOD else select(qvec, vectors, K, method=method, **options))
    return [docs[i].metadata["row"] for i in sel.indices]


def test_fast_path_is_used(lc_case):
    kind, store = lc_case
    assert fast_path_for(store).name == kind


@pytest.mark.parametrize(("method", "options"),
                         [("vrsd", {}), ("mmr", {"lambda_mult": 0.3}), ("dpp", {})])
def test_equals_core_and_embeds_only_the_query(lc_case, queries, method, options):
    kind, store = lc_case
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K, method=method,
                              method_kwargs=options)
    for query in queries[:3]:
        want = expected(kind, store, query, method, **options)
        store.embeddings.reset()
        got = retriever.invoke(query)
        assert [d.metadata["row"] for d in got] == want
        assert store.embeddings.counts == (1, 0)  # re-embedded texts per query: 0


def test_filter_in_the_store_syntax(lc_case, queries):
    kind, store = lc_case
    name, value = FILTERS[kind]
    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K,
                              search_kwargs={name: value})
    for query in queries[:2]:
        store.embeddings.reset()
        got = retriever.invoke(query)
        assert {d.metadata["split"] for d in got} == {"A"}
        assert [d.metadata["row"] for d in got] == expected(kind, store, query, DEFAULT_METHOD,
                                                            filtered=True)
        assert store.embeddings.counts == (1, 0)


@pytest.mark.parametrize("kind", LC_KINDS)
def test_bad_filter_type_names_the_argument(request, kind):
    store = request.getfixturevalue(f"lc_{kind}")
    name, _ = FILTERS[kind]
    with pytest.raises(ValueError, match=f"^{name}|{name}:"):
        DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K,
                      search_kwargs={name: 42}).invoke("plants")
