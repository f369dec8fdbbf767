"""The LlamaIndex classes' settings: checked when built and at every assignment (a bad
value refused there, naming it, the object unchanged and still working), a dict changed
in place checked at the next call; the query vector checked before it is used; and the
walk from a call to the selection has no steps machinery on it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from tests.helpers.frames import frames_to_select
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

from .conftest import WordsEmbedding

QUERY = "Which process changes liquid water into water vapor?"


def candidates(index, embed_model, count: int = 12) -> list[NodeWithScore]:
    return index.as_retriever(similarity_top_k=count, embed_model=embed_model).retrieve(QUERY)


def postprocessor(index, **settings) -> DiversePostprocessor:
    return DiversePostprocessor(**{"top_n": 3, "embed_model": index._embed_model,
                                "vector_store": index.vector_store, **settings})


def ids(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


# --- DiversePostprocessor ---------------------------------------------------------------------

def test_a_plain_call_uses_the_settings_built_with_the_postprocessor(index, embed_model):
    pp = postprocessor(index)
    nodes, settings = candidates(index, embed_model), pp.settings()
    for _ in range(2):
        assert len(pp.postprocess_nodes(nodes, query_str=QUERY)) == 3
    assert len(asyncio.run(pp.apostprocess_nodes(nodes, query_str=QUERY))) == 3
    assert pp.settings() is settings
    assert (settings.k, settings.fetch_k, settings.name("k")) == (3, None, "top_n")


def test_a_good_assignment_takes_effect(index, embed_model):
    pp = postprocessor(index, top_n=2)
    nodes = candidates(index, embed_model)
    pp.top_n = 4
    pp.max_tokens = 10_000  # the field holds what was given; the settings, its counter too
    assert pp.settings().k == 4 and pp.settings().token_counter is not None
    assert len(pp.postprocess_nodes(nodes, query_str=QUERY)) == 4
    pp.lexical = False
    assert "lexical" not in pp.postprocess_nodes(nodes, query_str=QUERY)[0].node.metadata["vrsd"]


@pytest.mark.parametrize("name", ["vrsd_swap", "vrsd+swap"])
def test_the_unreleased_swap_names_are_refused_when_built_and_assigned(index, embed_model, name):
    with pytest.raises(ValueError, match=r"method: unknown method .*did you mean"):
        postprocessor(index, method=name)
    pp = postprocessor(index, top_n=2)
    with pytest.raises(ValueError, match=r"^method: unknown method"):
        pp.method = name
    pp.method = "vrsd"
    pp.method_kwargs = {"refine": "swap"}
    assert (pp.settings().method, dict(pp.settings().options)) == ("vrsd", {"refine": "swap"})
    out = pp.postprocess_nodes(candidates(index, embed_model), query_str=QUERY)
    assert {n.node.metadata["vrsd"]["method"] for n in out} == {"vrsd"}


@pytest.mark.parametrize(("field", "value", "name"), [
    ("top_n", 0, "top_n"), ("top_n", "3", "top_n"), ("top_n", True, "top_n"),
    ("method", "nope", "method"), ("method_kwargs", {"lamda": 0.5}, "lamda"),
    ("max_tokens", -5, "max_tokens"), ("lexical", "no", "lexical"),
    ("relevance", 3, "relevance"), ("max_per_group", 2, "group_by"),
    ("reembed", "never", "reembed"), ("metadata_key", "", "metadata_key"),
    ("token_counter", 5, "token_counter"),
])
def test_an_invalid_assignment_to_the_postprocessor_is_refused_there(
        index, embed_model, field, value, name):
    pp = postprocessor(index)
    nodes = candidates(index, embed_model)
    before, settings, dumped = getattr(pp, field), pp.settings(), pp.model_dump()
    picked = ids(pp.postprocess_nodes(nodes, query_str=QUERY))
    with pytest.raises(ValueError, match=f"^{name}:"):
        setattr(pp, field, value)
    assert getattr(pp, field) == before and pp.settings() is settings
    assert pp.model_dump() == dumped
    assert ids(pp.postprocess_nodes(nodes, query_str=QUERY)) == picked
    assert ids(asyncio.run(pp.apostprocess_nodes(nodes, query_str=QUERY))) == picked


def test_a_misspelt_field_and_a_bad_copy_are_refused(index):
    pp = postprocessor(index)
    with pytest.raises(ValueError, match=r"^topn: not a field of DiversePostprocessor; did you "
                                         r"mean top_n\?"):
        pp.topn = 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="^top_n: "):
        pp.model_copy(update={"top_n": 0})
    copied = pp.model_copy(update={"top_n": 2})  # checked like an assignment
    assert (copied.settings().k, pp.settings().k) == (2, 3)


def test_options_changed_in_place_are_checked_at_the_next_call(index, embed_model):
    pp = postprocessor(index, method="mmr")
    nodes = candidates(index, embed_model)
    pp.method_kwargs["lambda_mult"] = 0.2  # in place: seen at the next call
    assert dict(pp.settings().options) == {"lambda_mult": 0.2}
    pp.method_kwargs["lamda_mult"] = 0.5
    with pytest.raises(ValueError, match="lambda_mult"):
        pp.postprocess_nodes(nodes, query_str=QUERY)


# --- DiverseRerankRetriever ------------------------------------------------------------

def test_the_retriever_checks_its_counts_at_the_assignment(index):
    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=3, fetch_k=6)
    picked = ids(retriever.retrieve(QUERY))
    for field, value, name in [("fetch_k", 0, "fetch_k"), ("fetch_k", "20", "fetch_k"),
                               ("fetch_k", None, "fetch_k"), ("fetch_k", 2, "fetch_k"),
                               ("top_n", 0, "top_n"), ("top_n", 7, "fetch_k"),
                               ("method", "nope", "method"), ("lexical", "no", "lexical"),
                               ("method_kwargs", {"lamda": 0.5}, "lamda")]:
        before, settings = getattr(retriever, field), retriever.settings()
        with pytest.raises(ValueError, match=f"^{name}:"):
            setattr(retriever, field, value)
        assert getattr(retriever, field) == before and retriever.settings() is settings, field
        assert ids(retriever.retrieve(QUERY)) == picked, field
        assert ids(asyncio.run(retriever.aretrieve(QUERY))) == picked, field
    with pytest.raises(ValueError, match=r"did you mean top_n\?"):
        DiverseRerankRetriever(index.as_retriever(), topn=3)


def test_a_good_assignment_to_the_retriever_takes_effect(index):
    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=3, fetch_k=6)
    retriever.fetch_k = 12
    retriever.top_n = 8
    assert (retriever.settings().fetch_k, retriever.settings().k) == (12, 8)
    assert retriever.postprocessor.top_n == 8  # the shared settings live on the postprocessor
    assert len(retriever.retrieve(QUERY)) == 8
    retriever.method = "mmr"
    retriever.method_kwargs = {"lambda_mult": 0.3}
    out = retriever.retrieve(QUERY)
    assert {n.node.metadata["vrsd"]["method"] for n in out} == {"mmr"}
    retriever.method_kwargs["lamda_mult"] = 0.5  # in place: refused at the next call
    with pytest.raises(ValueError, match="lambda_mult"):
        retriever.retrieve(QUERY)


# --- the query vector ----------------------------------------------------------------------

class ZeroEmbedding(WordsEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return [0.0] * 24

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return [0.0] * 24


@pytest.mark.parametrize(("embedding", "said"), [
    ([float("nan")] * 24, "NaN or infinite"), ([0.0] * 24, "a zero vector"),
    ([], "expected a non-empty 1-D vector"), ([[1.0, 2.0]], "expected a non-empty 1-D vector"),
])
def test_the_query_vector_of_a_bundle_is_checked(index, embed_model, embedding, said):
    pp = postprocessor(index)
    nodes = candidates(index, embed_model)
    bundle = QueryBundle(QUERY, embedding=embedding)
    with pytest.raises(ValueError, match=f"^query_bundle: its embedding is .*{said}"):
        pp.postprocess_nodes(nodes, query_bundle=bundle)
    with pytest.raises(ValueError, match=f"^query_bundle: its embedding is .*{said}"):
        asyncio.run(pp.apostprocess_nodes(nodes, query_bundle=bundle))


def test_a_bad_vector_from_the_model_is_refused_before_the_store_is_asked(index, embed_model):
    asked = []

    class Counting(BaseRetriever):
        def _retrieve(self, query_bundle):
            asked.append(query_bundle)
            return candidates(index, embed_model)

    zero = ZeroEmbedding(model_name="zero")
    pp = postprocessor(index, embed_model=zero)
    with pytest.raises(ValueError, match="^embed_model: returned a zero vector"):
        pp.postprocess_nodes(candidates(index, embed_model), query_str=QUERY)
    retriever = DiverseRerankRetriever(Counting(), top_n=3, fetch_k=6, embed_model=zero)
    for call in (lambda: retriever.retrieve(QUERY),
                 lambda: asyncio.run(retriever.aretrieve(QUERY))):
        with pytest.raises(ValueError, match="^embed_model: returned a zero vector"):
            call()
    assert asked == []


# --- one body ------------------------------------------------------------------------------

def test_sync_equals_async(index, embed_model):
    pp = postprocessor(index, top_n=4)
    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=4, fetch_k=12)
    nodes = candidates(index, embed_model)

    def key(out):
        return [(n.node.node_id, pytest.approx(n.score), n.node.metadata["vrsd"]["rank"])
                for n in out]

    assert key(asyncio.run(pp.apostprocess_nodes(nodes, query_str=QUERY))) == key(
        pp.postprocess_nodes(nodes, query_str=QUERY))
    assert key(asyncio.run(retriever.aretrieve(QUERY))) == key(retriever.retrieve(QUERY))
    assert ids(retriever.retrieve(QUERY)) == ids(pp.postprocess_nodes(nodes, query_str=QUERY))


def test_a_call_reaches_the_selection_through_the_one_body(index, embed_model):
    """Only the entry points and the kit's ``rerank`` stand between a call and the core:
    the I/O steps (``vrsd_kit.steps``) have returned before the selection."""
    pp = postprocessor(index)
    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=3, fetch_k=12)
    nodes = candidates(index, embed_model)
    bundle = QueryBundle(QUERY)
    for call, want in [
        (lambda: pp.postprocess_nodes(nodes, query_bundle=bundle),
         ["_postprocess_nodes", "rerank"]),
        (lambda: asyncio.run(pp.apostprocess_nodes(nodes, query_bundle=bundle)),
         ["_apostprocess_nodes", "rerank"]),
        (lambda: retriever.retrieve(bundle), ["_retrieve", "_postprocess_nodes", "rerank"]),
        (lambda: asyncio.run(retriever.aretrieve(bundle)),
         ["_aretrieve", "_apostprocess_nodes", "rerank"]),
    ]:
        assert frames_to_select(call) == want
    assert np.isfinite([n.score for n in retriever.retrieve(bundle)]).all()
