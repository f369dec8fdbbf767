"""One meaning of ``lambda_mult`` on every store (1 = relevance only, as in LangChain).

``DiverseVectorStore(store)``'s MMR is the core's on every store; the project
never hands lambda_mult to a store's native MMR. langchain-qdrant's own
``max_marginal_relevance_search`` passes lambda_mult to Qdrant as ``diversity``
(1 = most diverse), the inverse; these tests show both side by side.
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


def test_langchain_qdrants_own_mmr_inverts_lambda(store_cases):
    """langchain-qdrant's MMR at lambda_mult=0 is plain top-k (Qdrant's diversity=0),
    where LangChain's meaning of 0 is diversity only; at 1 it is the most diverse."""
    qdrant = store_cases["qdrant"]
    own = {
        lam: [row_of(d) for d in qdrant.store.max_marginal_relevance_search(
            QUERY, k=K, fetch_k=FETCH_K, lambda_mult=lam)]
        for lam in LAMBDAS
    }
    top = [row_of(d) for d in qdrant.store.similarity_search(QUERY, k=K)]
    assert own[0.0] == top != own[1.0]
    assert core_mmr_rows(qdrant, 1.0) == top != core_mmr_rows(qdrant, 0.0)
