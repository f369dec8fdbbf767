"""LangChain PGVector and PGVectorStore on a real Postgres: the fast path's answer is the
core's on the same candidates, filters pass through, only the query is embedded.

The expected answer is computed without the adapter: the candidates come from the
store's public ``similarity_search_by_vector`` and their vectors from a separate
SQL connection (by id), then ``vrsd_core.select`` picks.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers.words import default_selection
from vrsd_core import DEFAULT_METHOD, select
from vrsd_langchain import METADATA_KEY, DiverseRetriever, DiverseVectorStore
from vrsd_langchain.candidates import fast_path_for

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20


def parse_vector(text: str) -> np.ndarray:
    return np.asarray(json.loads(text), dtype=np.float64)


def stored_vectors(case, sql, ids: list[str]) -> dict[str, np.ndarray]:
    if case.kind == "pgvector":
        rows = sql("SELECT id, embedding::text FROM langchain_pg_embedding WHERE id = ANY(%s)",
                   [ids])
    else:
        rows = sql("SELECT langchain_id::text, embedding::text FROM arc_v2 "
                   "WHERE langchain_id::text = ANY(%s)", [ids])
    return {i: parse_vector(v) for i, v in rows}


def expected(case, sql, query, method, filtered=False, **options):
    qvec = np.asarray(case.spy.inner.embed_query(query))
    docs = case.store.similarity_search_by_vector(
        qvec.tolist(), k=FETCH_K, filter=case.filter_a if filtered else None
    )
    by_id = stored_vectors(case, sql, [d.id for d in docs])
    vecs = np.stack([by_id[d.id] for d in docs])
    if method == DEFAULT_METHOD:  # the default reads the candidates' words too
        sel = default_selection(query, [d.page_content for d in docs], qvec, vecs, K, **options)
    else:
        sel = select(qvec, vecs, K, method=method, **options)
    return [docs[i].metadata["row"] for i in sel.indices], sel


def rows(docs) -> list[int]:
    return [d.metadata["row"] for d in docs]


def test_fast_path_is_used(lc_case):
    path = fast_path_for(lc_case.store)
    assert path is not None and path.name == lc_case.kind


@pytest.mark.parametrize(
    ("method", "options"),
    [("vrsd", {}), ("mmr", {"lambda_mult": 0.3}), ("dpp", {}), ("similarity", {})],
)
def test_result_equals_core_select_on_the_same_candidates(lc_case, sql, queries, method,
                                                          options):
    retriever = DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K, method=method,
                              method_kwargs=options)
    for query in queries[:3]:
        want, sel = expected(lc_case, sql, query, method, **options)
        lc_case.spy.reset()
        got = retriever.invoke(query)
        assert rows(got) == want
        assert (lc_case.spy.query_calls, lc_case.spy.documents_embedded) == (1, 0)
        meta = [d.metadata[METADATA_KEY] for d in got]
        np.testing.assert_allclose([m["relevance"] for m in meta], sel.relevance, atol=1e-5)
        np.testing.assert_allclose([m["gain"] for m in meta], sel.gains, atol=1e-5)


def test_vrsd_differs_from_similarity_somewhere(lc_case, sql, queries):
    retriever = DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K)
    assert any(
        rows(retriever.invoke(q)) != expected(lc_case, sql, q, "similarity")[0] for q in queries
    )


def test_filter_in_the_store_syntax(lc_case, sql, queries):
    retriever = DiverseVectorStore(lc_case.store).as_retriever(
        search_type="complement",
        search_kwargs={"k": K, "fetch_k": FETCH_K, "filter": lc_case.filter_a},
    )
    for query in queries[:3]:
        lc_case.spy.reset()
        got = retriever.invoke(query)
        assert {d.metadata["split"] for d in got} == {"A"}
        assert rows(got) == expected(lc_case, sql, query, DEFAULT_METHOD, filtered=True)[0]
        assert (lc_case.spy.query_calls, lc_case.spy.documents_embedded) == (1, 0)


def test_vectors_are_the_models(lc_case, queries):
    """The stored vectors the fast path reads are the model's (float32 in Postgres)."""
    from vrsd_langchain.candidates import fetch_candidates

    qvec = np.asarray(lc_case.spy.inner.embed_query(queries[0]))
    found = fetch_candidates(lc_case.store, queries[0], qvec, 5, {}, None, None)
    again = np.asarray(lc_case.spy.inner.embed_documents([d.page_content for d in found.documents]))
    np.testing.assert_allclose(found.vectors, again, atol=1e-6)


async def test_async_invoke_matches_sync(lc_case, queries):
    retriever = DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K)
    for query in queries[:2]:
        assert rows(await retriever.ainvoke(query)) == rows(retriever.invoke(query))


@pytest.mark.parametrize(
    ("flt", "needle"),
    [("split = 'A'", "dict"), ({"split": {"$nope": 1}}, "filter")],
)
def test_bad_filter_is_a_value_error_naming_filter(lc_case, flt, needle):
    # A wrong type is refused when the retriever is built, a bad operator when it runs.
    with pytest.raises(ValueError, match=r"filter") as info:
        DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K,
                      search_kwargs={"filter": flt}).invoke("plants")
    assert needle in str(info.value)


def test_unknown_search_argument_is_refused(lc_case):
    with pytest.raises(ValueError, match="where"):
        DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K,
                      search_kwargs={"where": {"split": "A"}}).invoke("plants")


def test_wrong_dimension_names_embeddings(lc_case):
    from vrsd_langchain.candidates import fetch_candidates

    with pytest.raises(ValueError, match="^embeddings"):
        fetch_candidates(lc_case.store, "q", np.ones(7), 5, {}, None, None)


def test_caller_filter_not_mutated(lc_case):
    flt = {"$and": [{"split": {"$eq": "A"}}, {"row": {"$lt": 100}}]}
    before = repr(flt)
    got = DiverseRetriever(vectorstore=lc_case.store, k=K, fetch_k=FETCH_K,
                        search_kwargs={"filter": flt}).invoke("plants need light")
    assert repr(flt) == before
    assert all(d.metadata["split"] == "A" and d.metadata["row"] < 100 for d in got)
