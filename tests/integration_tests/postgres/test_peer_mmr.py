"""The Postgres stores' own MMR beside ``vrsd_core.select(method="mmr")`` on the same candidates.

* LangChain ``PGVector.max_marginal_relevance_search_by_vector``: LangChain's
  ``maximal_marginal_relevance`` (same lambda convention: 1 = relevance only, the same
  max-similarity-to-all-selected penalty, ties to the lower index), so the *same picks*;
  but it returns them in the store's rank order, not in pick order.
* LangChain ``PGVectorStore`` (v2): the same, except that ``lambda_mult=0.0`` is falsy
  and silently replaced by the store's default (0.5): the store cannot be asked for
  lambda 0.
* LlamaIndex ``PGVectorStore`` in MMR mode (``mmr_threshold`` = lambda): its
  ``get_top_k_mmr_embeddings`` penalises similarity to the *most recent* pick only,
  not to every pick so far; the first two picks always agree, later ones may differ,
  and every difference is reproduced by that rule.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from vrsd_core import select

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20
LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _lc_candidates(case, sql, qvec):
    docs = case.store.similarity_search_by_vector(qvec.tolist(), k=FETCH_K)
    if case.kind == "pgvector":
        rows = sql("SELECT id, embedding::text FROM langchain_pg_embedding WHERE id = ANY(%s)",
                   [[d.id for d in docs]])
    else:
        rows = sql("SELECT langchain_id::text, embedding::text FROM arc_v2 "
                   "WHERE langchain_id::text = ANY(%s)", [[d.id for d in docs]])
    by_id = {i: json.loads(v) for i, v in rows}
    return docs, np.asarray([by_id[d.id] for d in docs])


def test_langchain_store_mmr_same_picks_in_rank_order(lc_case, sql, queries):
    differs_in_order = zero_is_distinct = 0
    for query in queries:
        qvec = np.asarray(lc_case.spy.inner.embed_query(query))
        docs, vecs = _lc_candidates(lc_case, sql, qvec)
        for lam in LAMBDAS:
            core = select(qvec, vecs, K, method="mmr", lambda_mult=lam).indices.tolist()
            own = lc_case.store.max_marginal_relevance_search_by_vector(
                qvec.tolist(), k=K, fetch_k=FETCH_K, lambda_mult=lam
            )
            got = [[d.id for d in docs].index(d.id) for d in own]
            if lc_case.kind == "pgvector_store" and lam == 0.0:
                # lambda_mult=0.0 is falsy: v2 uses its default 0.5 instead.
                half = select(qvec, vecs, K, method="mmr", lambda_mult=0.5).indices.tolist()
                zero_is_distinct += sorted(half) != sorted(core)
                core = half
            assert got == sorted(core), (query, lam)  # same picks, store (rank) order
            differs_in_order += got != core
    assert differs_in_order > 0  # the pick order is really lost somewhere
    if lc_case.kind == "pgvector_store":
        assert zero_is_distinct > 0  # lambda 0 would have picked other documents


def _mmr_last_pick(q, vecs, k, lam):
    """LlamaIndex's rule: the penalty is the similarity to the most recent pick only."""
    sim = vecs @ q
    picks = [int(np.argmax(sim * lam))]
    while len(picks) < k:
        score = lam * sim - (1 - lam) * (vecs @ vecs[picks[-1]])
        score[picks] = -np.inf
        picks.append(int(np.argmax(score)))
    return picks


def test_llamaindex_store_mmr_differs_only_by_its_recent_pick_rule(li_pgvector, sql, queries):
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

    store = li_pgvector.store
    differ = 0
    for query in queries:
        qvec = np.asarray(li_pgvector.spy._inner.get_query_embedding(query))
        # The candidates: the store's own default query, fetch_k of them; vectors by SQL.
        plain = store.query(VectorStoreQuery(query_embedding=qvec.tolist(),
                                             similarity_top_k=FETCH_K))
        got = dict(sql("SELECT node_id, embedding::text FROM data_arc_li "
                       "WHERE node_id = ANY(%s)", [plain.ids]))
        vecs = np.asarray([json.loads(got[i]) for i in plain.ids])
        unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        for lam in LAMBDAS[1:]:  # threshold 0 scores every first pick 0: a tie
            own = store.query(
                VectorStoreQuery(query_embedding=qvec.tolist(), similarity_top_k=K,
                                 mode=VectorStoreQueryMode.MMR, mmr_threshold=lam),
                mmr_prefetch_k=FETCH_K,
            )
            picks = [plain.ids.index(i) for i in own.ids]
            core = select(qvec, vecs, K, method="mmr", lambda_mult=lam).indices.tolist()
            assert picks[:2] == core[:2], (query, lam)
            assert picks == _mmr_last_pick(qvec / np.linalg.norm(qvec), unit, K, lam), (
                query, lam)
            differ += picks != core
    print(f"LlamaIndex PGVectorStore MMR differs from the core's on {differ} of "
          f"{len(queries) * (len(LAMBDAS) - 1)} (query, lambda) pairs")
