"""One meaning of ``lambda_mult`` on every store (1 = relevance only, as in LangChain).

``DiverseVectorStore(store)``'s MMR is the core's on every store; the project
never hands lambda_mult to a store's native MMR (langchain-qdrant's own
``max_marginal_relevance_search`` passes it to Qdrant as ``diversity``, where
1 is the most diverse).
"""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import select
from vrsd_langchain import DiverseVectorStore

from .conftest import row_of

QUERY = "Why do the seasons change during the year?"
K, FETCH_K = 4, 20
LAMBDAS = (0.0, 0.5, 1.0)


def core_mmr_rows(case, lam: float) -> list[int]:
    retriever = DiverseVectorStore(case.store).as_retriever(
        search_type="mmr", search_kwargs={"k": K, "fetch_k": FETCH_K, "lambda_mult": lam}
    )
    return [row_of(d) for d in retriever.invoke(QUERY)]


@pytest.mark.parametrize("lam", LAMBDAS)
def test_same_lambda_same_picks_on_in_memory_and_qdrant(store_cases, embeddings, lam):
    memory, qdrant = store_cases["in_memory"], store_cases["qdrant"]
    picks = core_mmr_rows(memory, lam)
    assert core_mmr_rows(qdrant, lam) == picks
    # ... and they are the core's MMR on the store's top fetch_k
    qvec = np.asarray(embeddings.embed_query(QUERY))
    docs, vecs = memory.candidates(qvec, FETCH_K)
    sel = select(qvec, vecs, K, method="mmr", lambda_mult=lam)
    assert picks == [row_of(docs[i]) for i in sel.indices]
    if lam == 1.0:  # relevance only: plain top-k
        assert picks == [row_of(d) for d in memory.store.similarity_search(QUERY, k=K)]
    wrapped = DiverseVectorStore(qdrant.store)
    assert [row_of(d) for d in wrapped.max_marginal_relevance_search(
        QUERY, k=K, fetch_k=FETCH_K, lambda_mult=lam)] == picks
    assert [row_of(d) for d in wrapped.max_marginal_relevance_search_by_vector(
        qvec.tolist(), k=K, fetch_k=FETCH_K, lambda_mult=lam)] == picks


STORE_MMR = ("max_marginal_relevance_search", "max_marginal_relevance_search_by_vector",
             "amax_marginal_relevance_search", "amax_marginal_relevance_search_by_vector")


async def test_the_stores_own_mmr_is_never_asked(store_cases, embeddings, monkeypatch):
    """Every MMR entry point of the wrapper, sync and async, with the store's own MMR
    made to fail: lambda_mult keeps LangChain's meaning because the store never sees it."""
    qdrant = store_cases["qdrant"]

    def store_mmr(*args, **kwargs):
        raise AssertionError("DiverseVectorStore handed MMR to the store")

    for name in STORE_MMR:
        monkeypatch.setattr(type(qdrant.store), name, store_mmr)
    wrapped = DiverseVectorStore(qdrant.store)
    qvec = embeddings.embed_query(QUERY)
    top = [row_of(d) for d in qdrant.store.similarity_search(QUERY, k=K)]
    for lam in LAMBDAS:
        kw = {"k": K, "fetch_k": FETCH_K, "lambda_mult": lam}
        got = [
            wrapped.max_marginal_relevance_search(QUERY, **kw),
            wrapped.max_marginal_relevance_search_by_vector(qvec, **kw),
            await wrapped.amax_marginal_relevance_search(QUERY, **kw),
            await wrapped.amax_marginal_relevance_search_by_vector(qvec, **kw),
        ]
        picks = core_mmr_rows(qdrant, lam)
        assert all([row_of(d) for d in docs] == picks for docs in got), lam
        if lam == 1.0:  # relevance only
            assert picks == top
        if lam == 0.0:  # diversity only
            assert picks != top
