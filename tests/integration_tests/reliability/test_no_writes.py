"""No writes: 1,000 mixed queries leave the store exactly as it was.

Every method of ``vrsd_core.METHOD_INFO`` runs (with mixed k, fetch_k, options and
filters) through the LangChain retriever and the LlamaIndex postprocessor over
the Chroma server; full snapshots of the collections (ids, count, documents,
metadatas, vectors) are compared before and after. The same holds for an
embedded InMemoryVectorStore.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from vrsd_core import METHOD_INFO, method_defaults

pytestmark = pytest.mark.slow

LC_QUERIES = 800
LI_QUERIES = 200


def collection_snapshot(collection) -> dict:
    got = collection.get(include=["embeddings", "documents", "metadatas"])
    order = np.argsort(got["ids"])
    return {
        "count": collection.count(),
        "ids": [got["ids"][i] for i in order],
        "documents": [got["documents"][i] for i in order],
        "metadatas": [got["metadatas"][i] for i in order],
        "embeddings": np.asarray(got["embeddings"])[order],
        "metadata": collection.metadata,
        "name": collection.name,
    }


def assert_same_snapshot(before: dict, after: dict) -> None:
    for key in ("count", "ids", "documents", "metadatas", "metadata", "name"):
        assert before[key] == after[key], f"collection {key} changed"
    assert before["embeddings"].shape == after["embeddings"].shape
    assert np.array_equal(before["embeddings"], after["embeddings"]), "vectors changed"


def mixed_calls(rng: random.Random, count: int):
    """(method, k, fetch_k, options) for ``count`` calls, every method represented."""
    methods = sorted(METHOD_INFO)
    for i in range(count):
        method = methods[i % len(methods)]
        k = rng.randint(1, 8)
        fetch_k = rng.randint(k, 40)
        options: dict = {}
        if method == "vrsd_exact":
            k, fetch_k = min(k, 4), rng.randint(min(k, 4), 12)
        elif method == "vrsd" and rng.random() < 0.5:
            options["refine"] = "swap"
        elif method == "mmr":
            options["lambda_mult"] = rng.choice([0.0, 0.3, 0.5, 1.0])
        elif method == "dpp":
            options["theta"] = rng.choice([0.0, 0.5, 0.9])
        if "seed" in method_defaults(method):
            options["seed"] = rng.randint(0, 1000)
        yield method, k, fetch_k, options


def test_chroma_collections_unchanged_after_1000_mixed_queries(
        lc_chroma, li_chroma_index, li_embed_model, queries, query_bundles):
    from vrsd_langchain import DiverseRetriever
    from vrsd_llamaindex import DiversePostprocessor

    lc_collection = lc_chroma._collection
    li_collection = li_chroma_index.vector_store.client
    before = (collection_snapshot(lc_collection), collection_snapshot(li_collection))

    rng = random.Random(0)
    retriever = DiverseRetriever(vectorstore=lc_chroma)
    served = 0
    for i, (method, k, fetch_k, options) in enumerate(mixed_calls(rng, LC_QUERIES)):
        extra = {"filter": {"row": {"$gte": 50}}} if i % 7 == 0 else {}
        docs = retriever.invoke(queries[i % len(queries)], k=k, fetch_k=fetch_k,
                                method=method, **options, **extra)
        assert 0 < len(docs) <= k
        served += 1

    li_retriever = li_chroma_index.as_retriever(similarity_top_k=40)
    pools = {id(b): li_retriever.retrieve(b) for b in query_bundles}
    for i, (method, k, fetch_k, options) in enumerate(mixed_calls(rng, LI_QUERIES)):
        bundle = query_bundles[i % len(query_bundles)]
        post = DiversePostprocessor(top_n=k, method=method, method_kwargs=options,
                                 embed_model=li_embed_model,
                                 vector_store=li_chroma_index.vector_store)
        # Nodes without vectors: the postprocessor reads them from the collection.
        nodes = [copy.copy(n) for n in pools[id(bundle)][:fetch_k]]
        out = post.postprocess_nodes(nodes, query_bundle=bundle)
        assert 0 < len(out) <= k
        served += 1
    assert served == LC_QUERIES + LI_QUERIES

    after = (collection_snapshot(lc_collection), collection_snapshot(li_collection))
    assert_same_snapshot(before[0], after[0])
    assert_same_snapshot(before[1], after[1])


def test_in_memory_store_unchanged_after_mixed_queries(in_memory_store, queries):
    from vrsd_langchain import DiverseRetriever, DiverseVectorStore

    store = in_memory_store
    before = copy.deepcopy(store.store)

    rng = random.Random(1)
    retriever = DiverseRetriever(vectorstore=store)
    for i, (method, k, fetch_k, options) in enumerate(mixed_calls(rng, 200)):
        docs = retriever.invoke(queries[i % len(queries)], k=k, fetch_k=fetch_k,
                                method=method, **options)
        # Scribbling on what came back must not reach the store either.
        for doc in docs:
            doc.metadata["source"] = "scribbled"
            doc.metadata["vrsd"]["rank"] = -1
            doc.page_content += " (edited)"
    for search_type in ("vrsd", "dpp", "mmr", "similarity"):
        wrapped = DiverseVectorStore(store).as_retriever(
            search_type=search_type, search_kwargs={"k": 3, "fetch_k": 10})
        wrapped.invoke(queries[0])

    assert list(store.store) == list(before)
    for key, entry in before.items():
        now = store.store[key]
        assert now["text"] == entry["text"] and now["metadata"] == entry["metadata"]
        assert now["id"] == entry["id"]
        assert np.array_equal(now["vector"], entry["vector"])
