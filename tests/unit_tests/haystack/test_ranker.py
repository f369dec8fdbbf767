"""``DiverseRanker`` on in-memory documents (Haystack's InMemoryDocumentStore, fixed random
vectors): per-candidate inputs, saving and loading, the settings checked at construction,
at every assignment and per run, bad run inputs, the embedder for documents without a
vector, and the walk from a run to the selection. Real stores:
``tests/integration_tests/haystack``."""

from __future__ import annotations

import asyncio
import copy
import dataclasses

import numpy as np
import pytest
from haystack import Document, Pipeline
from haystack.core.errors import DeserializationError

from tests.helpers.approx import approx_scores, results
from tests.helpers.frames import frames_to_select
from tests.helpers.haystack_pipeline import FETCH_K, candidates, pipeline, run
from vrsd_core import DEFAULT_METHOD, select
from vrsd_haystack import METADATA_KEY, DiverseRanker

from .conftest import DIM

K = 5


def test_group_cap_budget_and_per_run_top_k(in_memory_store, query_vectors):
    from vrsd_kit.tokens import approx_token_count

    query = query_vectors[0]
    cands = candidates(in_memory_store, query)
    vectors = [d.embedding for d in cands]
    capped = DiverseRanker(top_k=K, method="mmr", group_by="source", max_per_group=1)
    got = capped.run(documents=cands, query_embedding=query)["documents"]
    sel = select(query, vectors, K, method="mmr", groups=[d.meta["source"] for d in cands],
                 max_per_group=1)
    assert [d.id for d in got] == [cands[i].id for i in sel.indices]
    assert len({d.meta["source"] for d in got}) == len(got)
    budget = DiverseRanker(top_k=FETCH_K, max_tokens=120)
    got = budget.run(documents=cands, query_embedding=query)["documents"]
    assert 0 < sum(approx_token_count(d.content) for d in got) <= 120
    counts = [approx_token_count(d.content) for d in cands]
    sel = select(query, vectors, FETCH_K, method=DEFAULT_METHOD, max_tokens=120,
                 token_counts=counts)
    assert [d.id for d in got] == [cands[i].id for i in sel.indices]
    assert len(DiverseRanker(top_k=K).run(documents=cands, query_embedding=query,
                                       top_k=2)["documents"]) == 2


def test_outside_relevance_reads_the_documents_score(in_memory_store, query_vectors):
    query = query_vectors[1]
    cands = candidates(in_memory_store, query)
    got = DiverseRanker(top_k=K, method="mmr", relevance="score").run(
        documents=cands, query_embedding=query)["documents"]
    sel = select(query, [d.embedding for d in cands], K, method="mmr",
                 relevance=[d.score for d in cands])
    assert [d.id for d in got] == [cands[i].id for i in sel.indices]


def test_yaml_round_trip_gives_the_same_picks(hs_documents, query_vectors):
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    # A named index: the loaded pipeline's store (same name) shares the stored documents.
    store = InMemoryDocumentStore(embedding_similarity_function="cosine", index="vrsd-yaml")
    store.write_documents(copy.deepcopy(hs_documents))
    ranker = DiverseRanker(top_k=K, method="mmr", method_kwargs={"lambda_mult": 0.4},
                        group_by="source", max_per_group=2, relevance="score",
                        max_tokens=400, token_counter=len, reembed="allow")
    pipe = pipeline(store, ranker)
    text = pipe.dumps()
    assert "DiverseRanker" in text and "lambda_mult" in text
    # Haystack 3.4 loads classes only from allowed modules; the user names ours.
    with pytest.raises(DeserializationError, match="vrsd_haystack"):
        Pipeline.loads(text)
    loaded = Pipeline.loads(text, allowed_modules=["vrsd_haystack"])
    again = loaded.get_component("ranker")
    assert again.to_dict() == ranker.to_dict()
    assert again.token_counter is len
    for query in query_vectors[:2]:
        assert results(run(loaded, query)) == approx_scores(results(run(pipe, query)))


def test_a_quality_prior_from_meta_or_a_callable_survives_a_round_trip(in_memory_store,
                                                                       query_vectors,
                                                                       monkeypatch):
    with pytest.raises(DeserializationError):  # Haystack loads only callables it may
        DiverseRanker.from_dict(DiverseRanker(method="mmr",
                                        method_kwargs={"prior": meta_quality}).to_dict())
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", meta_quality.__module__)
    query = query_vectors[3]
    cands = [dataclasses.replace(d, meta={**d.meta, "quality": (int(d.meta["row"]) % 5) / 4})
             for d in candidates(in_memory_store, query)]
    want = select(query, [d.embedding for d in cands], K, method="mmr",
                  prior=[d.meta["quality"] for d in cands], prior_weight=0.5)
    for prior in ("quality", meta_quality):
        ranker = DiverseRanker(top_k=K, method="mmr",
                            method_kwargs={"prior": prior, "prior_weight": 0.5})
        again = DiverseRanker.from_dict(ranker.to_dict())
        for r in (ranker, again):
            got = r.run(documents=cands, query_embedding=query)["documents"]
            assert [d.id for d in got] == [cands[i].id for i in want.indices]
            assert [d.meta[METADATA_KEY]["prior"] for d in got] == [
                cands[i].meta["quality"] for i in want.indices]


def meta_quality(doc: Document) -> float:
    return doc.meta["quality"]


def test_a_run_reaches_the_selection_without_the_steps_machinery(in_memory_store,
                                                                 query_vectors):
    """``run`` and ``run_async`` call ``_rerank`` themselves: the I/O steps
    (``vrsd_kit.steps``) have returned before the selection starts."""
    ranker = DiverseRanker(top_k=K, lexical=False)  # no query text here
    cands = candidates(in_memory_store, query_vectors[0])
    assert frames_to_select(lambda: ranker.run(documents=cands,
                                               query_embedding=query_vectors[0])) \
        == ["run", "_rerank", "rerank"]
    assert frames_to_select(lambda: asyncio.run(ranker.run_async(
        documents=cands, query_embedding=query_vectors[0]))) == ["run_async", "_rerank", "rerank"]


@pytest.mark.parametrize("name", ["vrsd_swap", "vrsd+swap"])
def test_the_unreleased_swap_names_are_refused_at_construction_and_assignment(name):
    with pytest.raises(ValueError, match=r"^method: unknown method .*did you mean"):
        DiverseRanker(method=name)
    ranker = DiverseRanker(method="vrsd", method_kwargs={"refine": "swap"})
    with pytest.raises(ValueError, match=r"^method: unknown method"):
        ranker.method = name
    saved = ranker.to_dict()["init_parameters"]
    assert (saved["method"], saved["method_kwargs"]) == ("vrsd", {"refine": "swap"})


def test_empty_candidates_give_no_documents(query_vectors):
    assert DiverseRanker().run(documents=[], query_embedding=query_vectors[0]) == {"documents": []}


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"top_k": 0}, "top_k"), ({"top_k": "3"}, "top_k"), ({"top_k": 2.0}, "top_k"),
    ({"method": "nope"}, "method"), ({"method": "mmr", "method_kwargs": {"lambda_mult": 2}},
                                     "lambda_mult"),
    ({"method_kwargs": {"unknown": 1}}, "unknown"),
    ({"method": "vrsd", "relevance": "score"}, "relevance"),
    ({"group_by": "source"}, "max_per_group"), ({"max_per_group": 2}, "group_by"),
    ({"max_tokens": -1}, "max_tokens"), ({"token_counter": 3}, "token_counter"),
    ({"document_embedder": 3}, "document_embedder"), ({"reembed": "never"}, "reembed"),
])
def test_bad_settings_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        DiverseRanker(**kwargs)


@pytest.mark.parametrize(("field", "value", "name"), [
    ("top_k", 0, "top_k"), ("method", "nope", "method"), ("method_kwargs", {"lamda": 1}, "lamda"),
    ("max_tokens", 0, "max_tokens"), ("lexical", "no", "lexical"),
    ("max_per_group", 2, "group_by"), ("reembed", "never", "reembed"),
])
def test_a_setting_assigned_after_construction_is_checked(in_memory_store, query_vectors,
                                                          field, value, name):
    ranker = DiverseRanker(top_k=K, lexical=False)
    before = ranker.to_dict()
    with pytest.raises(ValueError, match=name):
        setattr(ranker, field, value)
    assert ranker.to_dict() == before  # a refused assignment changes nothing
    cands = candidates(in_memory_store, query_vectors[0])
    assert len(ranker.run(documents=cands, query_embedding=query_vectors[0])["documents"]) == K


def test_a_good_assignment_is_checked_into_what_it_means(in_memory_store, query_vectors):
    ranker = DiverseRanker(top_k=K, lexical=False)
    ranker.top_k = K - 1
    ranker.max_tokens = 10_000
    assert ranker.settings().token_counter is not None  # the budget's counter
    ranker.method = "vrsd"
    ranker.method_kwargs = {"refine": "swap"}
    settings = ranker.settings()
    assert (settings.method, settings.options) == ("vrsd", {"refine": "swap"})
    saved = ranker.to_dict()["init_parameters"]
    assert (saved["method"], saved["method_kwargs"]) == ("vrsd", {"refine": "swap"})
    cands = candidates(in_memory_store, query_vectors[0])
    out = ranker.run(documents=cands, query_embedding=query_vectors[0])["documents"]
    assert len(out) == K - 1
    assert DiverseRanker.from_dict(ranker.to_dict()).to_dict() == ranker.to_dict()


def test_bad_run_inputs_name_the_argument(in_memory_store, query_vectors):
    query = query_vectors[0]
    cands = candidates(in_memory_store, query)
    ranker = DiverseRanker(top_k=K)
    for bad in ([0.0] * DIM, [float("nan")] * DIM, [[1.0] * DIM], query[:10], "text"):
        with pytest.raises(ValueError, match="query_embedding"):
            ranker.run(documents=cands, query_embedding=bad)
    for bad_docs in ("doc", [{"content": "x"}]):
        with pytest.raises(ValueError, match="documents"):
            ranker.run(documents=bad_docs, query_embedding=query)
    ragged = [copy.deepcopy(cands[0]), Document(content="y", embedding=[1.0, 2.0])]
    with pytest.raises(ValueError, match="documents"):
        ranker.run(documents=ragged, query_embedding=query)
    with pytest.raises(ValueError, match="top_k"):
        ranker.run(documents=cands, query_embedding=query, top_k=0)
    no_source = [Document(id=d.id, content=d.content, embedding=d.embedding) for d in cands]
    with pytest.raises(ValueError, match="group_by"):
        DiverseRanker(group_by="source", max_per_group=1).run(documents=no_source,
                                                           query_embedding=query)
    np.testing.assert_equal(len(cands), FETCH_K)


class _TableEmbedder:
    """A document embedder component reading vectors from a table (by content); with
    ``run_async`` or without it (the ranker then runs ``run`` in a worker thread)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table, self.calls = table, []

    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        self.calls.append("run")
        return {"documents": [dataclasses.replace(d, embedding=self.table[d.content])
                              for d in documents]}


class _AsyncTableEmbedder(_TableEmbedder):
    async def run_async(self, documents: list[Document]) -> dict[str, list[Document]]:
        self.calls.append("run_async")
        return {"documents": [dataclasses.replace(d, embedding=self.table[d.content])
                              for d in documents]}


@pytest.mark.parametrize("form", ["callable", "component", "async_component"])
async def test_run_async_equals_run_when_documents_are_embedded(in_memory_store, query_vectors,
                                                               form):
    query = query_vectors[1]
    cands = candidates(in_memory_store, query)
    table = {d.content: d.embedding for d in cands}
    bare = [dataclasses.replace(d, embedding=None) if i % 2 else d
            for i, d in enumerate(cands)]
    embedder = {"callable": lambda texts: [table[t] for t in texts],
                "component": _TableEmbedder(table),
                "async_component": _AsyncTableEmbedder(table)}[form]
    ranker = DiverseRanker(top_k=K, document_embedder=embedder, reembed="allow")
    sync = ranker.run(documents=bare, query_embedding=query)
    reference = DiverseRanker(top_k=K).run(documents=cands, query_embedding=query)
    assert [d.id for d in sync["documents"]] == [d.id for d in reference["documents"]]
    got = await ranker.run_async(documents=bare, query_embedding=query)
    assert results(got) == approx_scores(results(sync))
    if form != "callable":
        assert embedder.calls == ["run", "run" if form == "component" else "run_async"]
