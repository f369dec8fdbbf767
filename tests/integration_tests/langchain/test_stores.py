"""The four fast paths on real stores: the core's answer, filters, no re-embedding, no mutation.

For each store the test gets the candidates and their vectors on its own
(through the store's public search and its client, not through the adapter),
runs ``vrsd_core.select`` on them, and expects exactly the adapter's picks.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from tests.helpers.approx import approx_scores, results
from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_langchain import METADATA_KEY, DiverseRetriever, DiverseVectorStore
from vrsd_langchain.candidates import fast_path_for, reembedding_reason

from .conftest import BUILDERS, STORE_KINDS

K, FETCH_K = 4, 20


def rows(docs) -> list[int]:
    return [int(d.metadata["row"]) for d in docs]


def expected(case, query, method, filtered=False, **options):
    qvec = np.asarray(case.store.embeddings.inner.embed_query(query))
    cand_docs, cand_vecs = case.candidates(qvec, FETCH_K, filtered=filtered)
    if method == DEFAULT_METHOD:  # the default reads the candidates' words too
        sel = default_selection(query, [d.page_content for d in cand_docs], qvec, cand_vecs, K,
                                **options)
    else:
        sel = select(qvec, cand_vecs, K, method=method, **options)
    return [row_of(cand_docs[i]) for i in sel.indices], sel


def row_of(doc) -> int:
    return int(doc.metadata["row"])


@pytest.mark.parametrize(
    ("method", "options"),
    [("vrsd", {}), ("mmr", {"lambda_mult": 0.3}), ("dpp", {}), ("vrsd", {"refine": "swap"})],
)
def test_result_equals_core_select_on_the_same_candidates(case, queries, method, options):
    retriever = DiverseRetriever(
        vectorstore=case.store, k=K, fetch_k=FETCH_K, method=method, method_kwargs=options
    )
    for query in queries[:2]:
        want_rows, sel = expected(case, query, method, **options)
        got = retriever.invoke(query)
        assert rows(got) == want_rows
        meta = [d.metadata[METADATA_KEY] for d in got]
        assert [m["rank"] for m in meta] == list(range(K))
        assert [m["method"] for m in meta] == [method] * K
        np.testing.assert_allclose([m["relevance"] for m in meta], sel.relevance, atol=1e-5)
        np.testing.assert_allclose([m["gain"] for m in meta], sel.gains, atol=1e-5)


def test_vrsd_differs_from_plain_similarity_somewhere(case, queries):
    """Guard against a test that cannot fail: on real data VRSD reorders or replaces picks."""
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    differs = [
        rows(retriever.invoke(q)) != expected(case, q, "similarity")[0] for q in queries
    ]
    assert any(differs)


def test_filter_excludes_the_other_split(case, queries):
    if case.filter_a is None:  # a store whose fast path takes no filter
        pytest.skip(f"{case.kind} takes no filter")
    retriever = DiverseRetriever(
        vectorstore=case.store, k=K, fetch_k=FETCH_K, search_kwargs={"filter": case.filter_a}
    )
    for query in queries[:2]:
        got = retriever.invoke(query)
        assert len(got) == K
        assert {d.metadata["split"] for d in got} == {"A"}
        want_rows, sel = expected(case, query, DEFAULT_METHOD, filtered=True)
        assert rows(got) == want_rows
        # Scores stay with their documents (FAISS's own filtered MMR misaligns them).
        np.testing.assert_allclose(
            [d.metadata[METADATA_KEY]["relevance"] for d in got], sel.relevance, atol=1e-5
        )
    # The same filter per call, on a retriever without one.
    plain = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    per_call = plain.invoke(queries[0], filter=case.filter_a)
    assert {d.metadata["split"] for d in per_call} == {"A"}
    assert rows(per_call) == rows(retriever.invoke(queries[0]))


def test_fast_path_is_used_and_embeds_only_the_query(case, queries):
    assert fast_path_for(case.store).name == case.kind
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    case.spy.reset()
    retriever.invoke(queries[2])
    assert (case.spy.query_calls, case.spy.document_calls) == (1, 0)
    retriever.batch(queries[:3])
    assert (case.spy.query_calls, case.spy.document_calls) == (4, 0)
    assert retriever.cache.misses == 0


def _without(store, attr: str):
    """A copy of ``store`` as a client release that no longer has ``attr`` would make
    it: the same class (a subclass) and state, ``attr`` gone."""
    base = type(store)

    def __getattribute__(self, name: str):
        if name == attr:
            raise AttributeError(name)
        return base.__getattribute__(self, name)

    moved = object.__new__(type(f"Moved{base.__name__}", (base,),
                                {"__getattribute__": __getattribute__}))
    moved.__dict__.update(store.__dict__)
    return moved


def test_a_release_without_an_internal_the_fast_path_reads_falls_back(case):
    """Each private member a fast path records is checked before it is read: without any
    one of them the store is re-embedded, for a reason naming the record and the client
    version it was tested with, instead of failing inside the store's internals."""
    path = fast_path_for(case.store)
    assert path is not None and path.private
    assert fast_path_for(_without(case.store, "no_such_member")) is path  # the copy is whole
    for member in path.private:
        owner, attr = member.split()[0].split(".")
        assert owner == path.class_name, member
        moved = _without(case.store, attr)
        assert fast_path_for(moved) is None, member
        reason = reembedding_reason(moved)
        assert f"{path.name!r} fast path does not apply" in reason, reason
        assert f"{path.client} {path.tested}" in reason, reason


async def test_async_fast_path_matches_sync_and_embeds_only_the_query(case, queries):
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    sync = retriever.invoke(queries[3])
    case.spy.reset()
    got = await retriever.ainvoke(queries[3])
    assert results(got) == approx_scores(results(sync))
    assert (case.spy.query_calls, case.spy.document_calls) == (1, 0)


def test_search_type_retriever_on_each_store(case, queries):
    wrapped = DiverseVectorStore(case.store)
    assert fast_path_for(wrapped).name == case.kind
    # every search type is the method of that name
    for search_type, method in ((DEFAULT_METHOD, DEFAULT_METHOD), ("dpp", "dpp"),
                                ("vrsd", "vrsd")):
        retriever = wrapped.as_retriever(
            search_type=search_type, search_kwargs={"k": K, "fetch_k": FETCH_K}
        )
        got = retriever.invoke(queries[0])
        assert rows(got) == expected(case, queries[0], method)[0]
        assert {d.metadata[METADATA_KEY]["method"] for d in got} == {method}
    mmr = wrapped.as_retriever(search_type="mmr", search_kwargs={"k": K, "lambda_mult": 0.25})
    assert rows(mmr.invoke(queries[0])) == expected(
        case, queries[0], "mmr", lambda_mult=0.25
    )[0]


def test_store_and_returned_documents_stay_independent(case, queries):
    before = case.snapshot()
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    first = retriever.invoke(queries[4])
    for doc in first:  # a caller scribbling on the results must not reach the store
        doc.metadata["split"] = "changed"
        doc.metadata[METADATA_KEY]["rank"] = -1
        doc.page_content = "changed"
    again = retriever.invoke(queries[4])
    assert rows(again) == rows(first)
    assert {d.metadata["split"] for d in again} <= {"A", "B"}
    assert all(d.page_content != "changed" for d in again)
    after = case.snapshot()
    _assert_same(before, after)


def _assert_same(a, b) -> None:
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (tuple, list)) and any(isinstance(x, np.ndarray) for x in a):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    elif isinstance(a, dict) and any(isinstance(v, dict) and "vector" in v for v in a.values()):
        assert a.keys() == b.keys()
        for key in a:
            assert {k: v for k, v in a[key].items() if k != "vector"} == {
                k: v for k, v in b[key].items() if k != "vector"
            }
            np.testing.assert_array_equal(a[key]["vector"], b[key]["vector"])
    else:
        assert a == b


def test_document_ids_and_content_are_the_stores(case, queries):
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    qvec = np.asarray(case.store.embeddings.inner.embed_query(queries[5]))
    cand_docs, _ = case.candidates(qvec, FETCH_K)
    by_row = {row_of(d): d for d in cand_docs}
    for doc in retriever.invoke(queries[5]):
        src = by_row[row_of(doc)]
        assert doc.id == src.id
        assert doc.page_content == src.page_content
        meta = dict(doc.metadata)
        del meta[METADATA_KEY]
        assert meta == src.metadata


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_empty_store_gives_no_documents(kind, make_spy, tmp_path):
    store = BUILDERS[kind]([], make_spy(), tmp_path).store
    assert fast_path_for(store).name == kind
    assert DiverseRetriever(vectorstore=store).invoke("anything at all") == []
    assert DiverseVectorStore(store).as_retriever(search_type="complement").invoke("x") == []


def test_qdrant_named_dense_vector(make_spy, corpus_docs, embeddings):
    from langchain_qdrant import QdrantVectorStore

    spy = make_spy()
    store = QdrantVectorStore.from_documents(
        [d.model_copy(update={"id": None}) for d in corpus_docs[:60]], spy,
        location=":memory:", collection_name="named", vector_name="dense",
    )
    query = "What do plants need to grow?"
    qvec = np.asarray(embeddings.embed_query(query))
    hits = store.similarity_search_by_vector(list(qvec), k=FETCH_K)
    points = store.client.retrieve("named", ids=[d.metadata["_id"] for d in hits],
                                   with_vectors=True)
    by_id = {p.id: p.vector["dense"] for p in points}
    sel = default_selection(query, [d.page_content for d in hits], qvec,
                            np.asarray([by_id[d.metadata["_id"]] for d in hits]), K)
    spy.reset()
    got = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K).invoke(query)
    assert rows(got) == [row_of(hits[i]) for i in sel.indices]
    assert (spy.query_calls, spy.document_calls) == (1, 0)


def test_chroma_where_and_where_document(store_cases, queries):
    case = store_cases["chroma"]
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K)
    by_where = retriever.invoke(queries[0], where={"split": "B"})
    assert len(by_where) == K and {d.metadata["split"] for d in by_where} == {"B"}
    contains = retriever.invoke(queries[0], where_document={"$contains": "water"})
    assert contains and all("water" in d.page_content for d in contains)
    with pytest.raises(ValueError, match="filter: give either 'filter' or 'where'"):
        DiverseRetriever(vectorstore=case.store, search_kwargs={"filter": {}, "where": {}})


def test_qdrant_score_threshold_limits_the_candidates(store_cases, queries):
    case = store_cases["qdrant"]
    qvec = list(case.store.embeddings.inner.embed_query(queries[1]))
    scored = case.store.similarity_search_with_score_by_vector(qvec, k=FETCH_K)
    cut = float(scored[2][1] + scored[3][1]) / 2  # exactly three candidates pass
    got = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K).invoke(
        queries[1], score_threshold=cut
    )
    assert sorted(rows(got)) == sorted(row_of(d) for d, _ in scored[:3])


class _ShortQueries(Embeddings):
    """The store's own model, with the query vector cut to its first 10 dimensions."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))[:10]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_query_vector_of_another_dimension(case, queries, use_async):
    """A 10-d query vector against 384-d stored vectors: ValueError naming embeddings."""
    retriever = DiverseRetriever(vectorstore=case.store, k=K, fetch_k=FETCH_K,
                              embeddings=_ShortQueries(case.store.embeddings))
    with pytest.raises(ValueError, match=r"^embeddings: .*10-d"):
        if use_async:
            asyncio.run(retriever.ainvoke(queries[0]))
        else:
            retriever.invoke(queries[0])
