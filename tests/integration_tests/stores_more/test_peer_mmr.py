"""Milvus's and LanceDB's own MMR (LangChain) beside ``vrsd_core.select(method="mmr")`` on the
same candidates and lambda.

Both call LangChain's ``maximal_marginal_relevance`` on the candidates' stored
vectors (same lambda convention, same penalty, ties to the lower index): the same
picks. Milvus returns them in pick order (after a second request for the vectors);
LanceDB returns them in the store's rank order, so its pick order is lost.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.store_cases import cases_in
from vrsd_core import select

from .conftest import stored_vectors

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20
LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)


@pytest.mark.parametrize("kind", cases_in("langchain", "stores_more"))
def test_store_mmr_same_picks(request, kind, queries):
    store = request.getfixturevalue(f"lc_{kind}")
    order_lost = 0
    for query in queries:
        qvec = np.asarray(store.embeddings.inner.embed_query(query))
        docs = store.similarity_search_by_vector(qvec.tolist(), k=FETCH_K)
        rows = [d.metadata["row"] for d in docs]
        vecs = stored_vectors(kind, store, docs)
        for lam in LAMBDAS:
            core = [rows[i] for i in select(qvec, vecs, K, method="mmr",
                                            lambda_mult=lam).indices]
            own = [d.metadata["row"] for d in store.max_marginal_relevance_search_by_vector(
                qvec.tolist(), k=K, fetch_k=FETCH_K, lambda_mult=lam)]
            if kind == "milvus":
                assert own == core, (query, lam)  # same picks, same order
            else:
                assert own == sorted(core, key=rows.index), (query, lam)  # rank order
                order_lost += own != core
    if kind == "lancedb":
        assert order_lost > 0
