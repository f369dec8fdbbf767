"""``DiverseRanker`` in real Haystack pipelines over real stores: retriever
(``return_embedding=True``) -> ranker, on Haystack's InMemoryDocumentStore, Qdrant in
local mode and an embedded Chroma, with the bundled model's vectors of ARC-DA texts.

The expected picks are computed on their own: the retriever alone gives the
candidates with their vectors, ``vrsd_core.select`` picks from them. The ranker
must agree for every registered method, leave the store and its inputs unchanged,
run alike sync and async, and embed only the documents that came without a vector.
The ranker's own behaviour on in-memory documents: ``tests/unit_tests/haystack``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from haystack import Document

from tests.helpers.approx import approx_scores, results
from tests.helpers.haystack_pipeline import FETCH_K, candidates, pipeline, run, snapshot
from tests.helpers.store_cases import cases_in
from vrsd_core import DEFAULT_METHOD, METHOD_INFO, method_defaults, select
from vrsd_haystack import METADATA_KEY, DiverseRanker
from vrsd_kit.lexical import Judge, cosines
from vrsd_kit.rerank import entries, source_of

K = 5


@pytest.fixture(params=cases_in("haystack", "haystack"))
def store(request):
    return request.getfixturevalue(f"{request.param}_store")


@pytest.mark.parametrize("method", list(METHOD_INFO))
def test_equals_core_select_on_the_same_candidates_for_every_method(store, query_vectors,
                                                                    method):
    # the sampling methods draw at random: the same seed on both sides
    options = {"seed": 7} if "seed" in method_defaults(method) else {}
    pipe = pipeline(store, DiverseRanker(top_k=K, method=method, method_kwargs=options))
    for query in query_vectors[:2]:
        cands = candidates(store, query)
        assert len(cands) == FETCH_K and all(d.embedding is not None for d in cands)
        sel = select(query, [d.embedding for d in cands], K, method=method, **options)
        got = run(pipe, query)
        assert [d.id for d in got] == [cands[i].id for i in sel.indices]
        # the same picks; scores to the last digits the BLAS of this machine gives
        texts = [d.content for d in cands]
        want = entries(sel, [d.id for d in cands], texts=texts,
                       sources=[source_of(d.meta) for d in cands], judge=Judge(texts),
                       cosine=cosines(np.asarray(query), np.asarray([d.embedding for d in cands])))
        assert [d.meta[METADATA_KEY] for d in got] == approx_scores(want)
        assert [d.score for d in got] == approx_scores(
            [m["relevance"] for m in entries(sel)])


def test_default_differs_from_plain_similarity_somewhere(store, query_vectors):
    """Guard against a test that cannot fail: the default reorders or replaces picks."""
    pipe = pipeline(store, DiverseRanker(top_k=K))
    assert DiverseRanker(top_k=K).method == DEFAULT_METHOD
    assert any([d.id for d in run(pipe, q)] != [d.id for d in candidates(store, q)[:K]]
               for q in query_vectors)


def test_store_and_inputs_are_not_changed(store, query_vectors):
    before = snapshot(store)
    cands = candidates(store, query_vectors[0])
    kept = copy.deepcopy(cands)
    ranker = DiverseRanker(top_k=K, group_by="source", max_per_group=1)
    out = ranker.run(documents=cands, query_embedding=query_vectors[0])["documents"]
    assert cands == kept  # the documents, their meta, scores and embeddings
    out[0].meta["row"] = -1
    out[0].embedding[0] = 99.0
    assert cands == kept  # the outputs are copies, not views
    run(pipeline(store, DiverseRanker(top_k=K)), query_vectors[1])
    assert snapshot(store) == before


def test_documents_without_embeddings_use_the_embedder(in_memory_store, hs_documents,
                                                       query_vectors, model_path):
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )

    query = query_vectors[2]
    cands = candidates(in_memory_store, query)
    bare = [Document(id=d.id, content=d.content, meta=dict(d.meta), score=d.score)
            for d in cands]
    with pytest.raises(ValueError, match="documents: 20 of 20 have no embedding"):
        DiverseRanker(top_k=K).run(documents=bare, query_embedding=query)
    embedder = SentenceTransformersDocumentEmbedder(model=model_path, progress_bar=False)
    embedded: list[str] = []
    original_run = embedder.run

    def spy_run(documents):
        embedded.extend(d.content for d in documents)
        return original_run(documents=documents)

    embedder.run = spy_run
    ranker = DiverseRanker(top_k=K, document_embedder=embedder, reembed="allow")
    ranker.warm_up()
    half = [bare[i] if i % 2 else cands[i] for i in range(len(cands))]
    got = ranker.run(documents=half, query_embedding=query)["documents"]
    assert embedded == [bare[i].content for i in range(1, len(cands), 2)]  # only the bare
    sel = select(query, [d.embedding for d in cands], K, method=DEFAULT_METHOD)
    assert [d.id for d in got] == [cands[i].id for i in sel.indices]
    assert all(d.embedding is None for d in bare)  # inputs untouched
    strict = DiverseRanker(top_k=K, document_embedder=embedder, reembed="refuse")
    embedded.clear()
    with pytest.raises(ValueError, match="reembed: DiverseRanker: documents came without"):
        strict.run(documents=half, query_embedding=query)
    assert embedded == []


async def test_run_async_equals_run(store, query_vectors):
    pipe = pipeline(store, DiverseRanker(top_k=K))
    ranker = DiverseRanker(top_k=K, method="dpp")
    for query in query_vectors[:2]:
        cands = candidates(store, query)
        sync = ranker.run(documents=cands, query_embedding=query)
        got = await ranker.run_async(documents=cands, query_embedding=query)
        assert results(got) == approx_scores(results(sync))
    # embedded Qdrant and Chroma have no async client: the async pipeline on InMemory only
    if type(store).__name__ == "InMemoryDocumentStore":
        out = await pipe.run_async({"retriever": {"query_embedding": query_vectors[0]},
                                    "ranker": {"query_embedding": query_vectors[0]}})
        assert results(out["ranker"]["documents"]) == approx_scores(
            results(run(pipe, query_vectors[0])))
