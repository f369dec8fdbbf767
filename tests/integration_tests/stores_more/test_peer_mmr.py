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

from vrsd_core import select

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20
LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _vectors(kind, store, docs) -> np.ndarray:
    if kind == "milvus":
        pks = [d.metadata["pk"] for d in docs]
        got = store.client.query(store.collection_name, filter=f"pk in {pks}",
                                 output_fields=["pk", "vector"])
        by_pk = {r["pk"]: r["vector"] for r in got}
        return np.asarray([by_pk[p] for p in pks], dtype=np.float64)
    table = store.get_table().to_arrow()
    by_row = {m["row"]: v for m, v in zip(table["metadata"].to_pylist(),
                                          table["vector"].to_pylist(), strict=True)}
    return np.asarray([by_row[d.metadata["row"]] for d in docs], dtype=np.float64)


@pytest.mark.parametrize("kind", ["milvus", "lancedb"])
def test_store_mmr_same_picks(request, kind, queries):
    store = request.getfixturevalue(f"lc_{kind}")
    order_lost = 0
    for query in queries:
        qvec = np.asarray(store.embeddings.inner.embed_query(query))
        docs = store.similarity_search_by_vector(qvec.tolist(), k=FETCH_K)
        rows = [d.metadata["row"] for d in docs]
        vecs = _vectors(kind, store, docs)
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
