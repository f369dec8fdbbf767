"""Concurrency: 32 workers x 50 queries against ONE retriever give exactly the results
of a sequential run, with threads (``invoke`` in a ThreadPoolExecutor) and with
asyncio (``ainvoke`` under ``asyncio.gather``), over an embedded store
(InMemoryVectorStore) and over the Chroma server. The LlamaIndex postprocessor
(reading candidate vectors back from Chroma) gets the same treatment.

Query vectors come from the embeddings cache (each distinct query encoded once,
during the sequential run), so the concurrent runs exercise the store, the
candidate fetch and the reranking, not the encoder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import copy
import itertools

import pytest

from tests.helpers.approx import approx_scores

pytestmark = pytest.mark.slow

WORKERS = 32
PER_WORKER = 50
# (method, k, fetch_k): per-call overrides on the one shared retriever.
SETTINGS = [("vrsd", 4, 20), ("mmr", 5, 25), ("dpp", 3, 15), ("vrsd", 2, 30)]


def task_grid(n_queries: int) -> list[list[tuple[int, int]]]:
    """Per worker, PER_WORKER (query index, setting index) pairs, interleaved so that
    workers hit the same and different keys at the same time."""
    return [
        [((w * 7 + j) % n_queries, (w + j) % len(SETTINGS)) for j in range(PER_WORKER)]
        for w in range(WORKERS)
    ]


def _lc_key(docs) -> list[tuple]:
    return [(d.id, d.page_content, d.metadata["vrsd"]["rank"],
             d.metadata["vrsd"]["relevance"], d.metadata["vrsd"]["gain"]) for d in docs]


def _lc_call(retriever, queries, qi, si):
    method, k, fetch_k = SETTINGS[si]
    return _lc_key(retriever.invoke(queries[qi], k=k, fetch_k=fetch_k, method=method))


async def _lc_acall(retriever, queries, qi, si):
    method, k, fetch_k = SETTINGS[si]
    return _lc_key(await retriever.ainvoke(queries[qi], k=k, fetch_k=fetch_k, method=method))


def _check_langchain(retriever, queries) -> None:
    grid = task_grid(len(queries))
    keys = sorted(set(itertools.chain.from_iterable(grid)))
    sequential = {key: _lc_call(retriever, queries, *key) for key in keys}
    assert all(sequential.values())

    def worker(tasks):
        return [_lc_call(retriever, queries, *key) for key in tasks]

    with cf.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        threaded = list(pool.map(worker, grid))
    for tasks, results in zip(grid, threaded, strict=True):
        assert results == approx_scores([sequential[key] for key in tasks])

    async def aworker(tasks):
        return [await _lc_acall(retriever, queries, *key) for key in tasks]

    async def main():
        return await asyncio.gather(*(aworker(tasks) for tasks in grid))

    gathered = asyncio.run(main())
    for tasks, results in zip(grid, gathered, strict=True):
        assert results == approx_scores([sequential[key] for key in tasks])


def test_langchain_in_memory_concurrent_equals_sequential(corpus, corpus_vectors, embeddings,
                                                          queries):
    """InMemoryVectorStore rebuilds a numpy array from its dict on every search, so a
    smaller corpus here (60 records; vectors from the cache) keeps the run short."""
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import DiverseRetriever

    ids, texts, metas = (part[:60] for part in corpus)
    store = InMemoryVectorStore(embeddings)
    store.add_texts(texts, metadatas=metas, ids=ids)
    _check_langchain(DiverseRetriever(vectorstore=store), queries)


def test_langchain_chroma_server_concurrent_equals_sequential(lc_chroma, queries):
    from vrsd_langchain import DiverseRetriever

    _check_langchain(DiverseRetriever(vectorstore=lc_chroma), queries)


def test_llamaindex_postprocessor_concurrent_equals_sequential(li_chroma_index, li_embed_model,
                                                               query_bundles):
    from vrsd_llamaindex import DiversePostprocessor

    retriever = li_chroma_index.as_retriever(similarity_top_k=20)
    pools = [retriever.retrieve(b) for b in query_bundles]
    post = DiversePostprocessor(top_n=4, embed_model=li_embed_model,
                             vector_store=li_chroma_index.vector_store)
    originals = copy.deepcopy(pools)

    def call(qi):
        out = post.postprocess_nodes(pools[qi], query_bundle=query_bundles[qi])
        return [(n.node.node_id, n.score, n.node.metadata["vrsd"]["rank"]) for n in out]

    async def acall(qi):
        out = await post.apostprocess_nodes(pools[qi], query_bundle=query_bundles[qi])
        return [(n.node.node_id, n.score, n.node.metadata["vrsd"]["rank"]) for n in out]

    sequential = [call(qi) for qi in range(len(pools))]
    grid = [[(w * 7 + j) % len(pools) for j in range(PER_WORKER)] for w in range(WORKERS)]

    with cf.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        threaded = list(pool.map(lambda tasks: [call(qi) for qi in tasks], grid))
    for tasks, results in zip(grid, threaded, strict=True):
        assert results == approx_scores([sequential[qi] for qi in tasks])

    async def main():
        async def aworker(tasks):
            return [await acall(qi) for qi in tasks]

        return await asyncio.gather(*(aworker(tasks) for tasks in grid))

    for tasks, results in zip(grid, asyncio.run(main()), strict=True):
        assert results == approx_scores([sequential[qi] for qi in tasks])
    # The shared candidate lists were read by 32 workers at once and never written.
    for before, after in zip(originals, pools, strict=True):
        assert [(n.node.node_id, n.score, n.node.metadata) for n in before] == [
            (n.node.node_id, n.score, n.node.metadata) for n in after]
