"""The postprocessor's contract on hand-built geometry: edge cases, validation,
untouched inputs, what the output nodes carry, and the instrumentation events."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from llama_index.core.callbacks import CallbackManager, CBEventType
from llama_index.core.callbacks.base_handler import BaseCallbackHandler
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from vrsd_core import DEFAULT_METHOD, METHOD_INFO, select
from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

QUERY = np.array([1.0, 0.6, 0.0])
# Two near-duplicates along x, one vector along y, one off-topic along z.
VECTORS = np.array([[1.0, 0.05, 0.0], [1.0, 0.0, 0.05], [0.0, 1.0, 0.0], [0.1, 0.0, 1.0]])


def make_nodes(vectors: np.ndarray = VECTORS) -> list[NodeWithScore]:
    return [
        NodeWithScore(
            node=TextNode(text=f"text {i}", id_=f"n{i}", embedding=v.tolist(),
                          metadata={"source": "hand-built", "i": i, "tags": ["t"]},
                          excluded_llm_metadata_keys=["i"]),
            score=1.0 - i / 10,
        )
        for i, v in enumerate(vectors)
    ]


def bundle() -> QueryBundle:
    return QueryBundle("q", embedding=QUERY.tolist())


def snapshot(nodes: list[NodeWithScore]) -> list[dict[str, Any]]:
    return [copy.deepcopy(n.model_dump()) for n in nodes]


def test_duplicates_lose_to_the_complementary_vector():
    out = DiversePostprocessor(top_n=2).postprocess_nodes(make_nodes(), query_bundle=bundle())
    assert {n.node.node_id for n in out} == {"n0", "n2"}  # x + y, not x + x'
    plain = DiversePostprocessor(top_n=2, method="similarity").postprocess_nodes(
        make_nodes(), query_bundle=bundle())
    assert [n.node.node_id for n in plain] == ["n0", "n1"]


def test_score_is_cosine_to_the_query_and_metadata_records_the_pick():
    # the vectors only: with the words the score is the fused relevance (test_words.py)
    out = DiversePostprocessor(top_n=3, lexical=False).postprocess_nodes(make_nodes(),
                                                                      query_bundle=bundle())
    sel = select(QUERY, VECTORS, 3, method=DEFAULT_METHOD)
    assert [n.node.node_id for n in out] == [f"n{i}" for i in sel.indices]
    for rank, (n, i, gain) in enumerate(zip(out, sel.indices, sel.gains, strict=True)):
        v = VECTORS[i]
        cosine = v @ QUERY / (np.linalg.norm(v) * np.linalg.norm(QUERY))
        assert n.score == pytest.approx(cosine)
        # the payload both adapters share (vrsd_kit.rerank)
        held = n.node.metadata["vrsd"]["held_back"]
        assert {e["id"] for e in held} <= {f"n{j}" for j in sel.info["held_back"]}
        assert n.node.metadata["vrsd"] == {"rank": rank, "relevance": pytest.approx(cosine),
                                           "cosine": pytest.approx(cosine),
                                           "gain": pytest.approx(gain), "method": DEFAULT_METHOD,
                                           "held_back": held}
        assert n.node.metadata["source"] == "hand-built"
    every = [e["id"] for n in out for e in n.node.metadata["vrsd"]["held_back"]]
    assert sorted(every) == sorted(f"n{j}" for j in sel.info["held_back"])


def test_vrsd_entry_is_hidden_from_llm_and_embedder_text():
    out = DiversePostprocessor(top_n=2).postprocess_nodes(make_nodes(), query_bundle=bundle())
    node = out[0].node
    assert "vrsd" in node.metadata
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        text = node.get_content(metadata_mode=mode)
        assert "rank" not in text and "vrsd" not in text
    assert "source: hand-built" in node.get_content(metadata_mode=MetadataMode.LLM)
    assert node.excluded_llm_metadata_keys == ["i", "vrsd"]  # the caller's exclusions kept
    assert "rank" in node.get_content(metadata_mode=MetadataMode.ALL)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_callers_nodes_are_unchanged(mode):
    nodes = make_nodes()
    before = snapshot(nodes)
    ids_before = [id(n.node) for n in nodes]
    postprocessor = DiversePostprocessor(top_n=2)
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle())
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle())
    assert snapshot(nodes) == before
    assert [id(n.node) for n in nodes] == ids_before
    assert not {id(n) for n in out} & {id(n) for n in nodes}
    assert not {id(n.node) for n in out} & set(ids_before)
    # writing to an output node's metadata does not reach the input; the values are the
    # caller's own objects (not deep copies), as the store's own search returns them
    out[0].node.metadata["extra"] = 1
    assert snapshot(nodes) == before
    given = {n.node.node_id: n.node.metadata for n in nodes}
    assert all(n.node.metadata["tags"] is given[n.node.node_id]["tags"] for n in out)


def test_top_n_at_least_len_returns_all_in_selection_order():
    for top_n in (4, 10):
        out = DiversePostprocessor(top_n=top_n).postprocess_nodes(make_nodes(),
                                                               query_bundle=bundle())
        want = select(QUERY, VECTORS, 4, method=DEFAULT_METHOD).indices
        assert [n.node.node_id for n in out] == [f"n{i}" for i in want]
    assert [n.node.node_id for n in out] != [f"n{i}" for i in range(4)]  # not the input order


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_empty_input_returns_empty(mode):
    postprocessor = DiversePostprocessor(top_n=2)
    if mode == "sync":
        assert postprocessor.postprocess_nodes([], query_bundle=bundle()) == []
    else:
        assert await postprocessor.apostprocess_nodes([], query_bundle=bundle()) == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_no_query_is_a_value_error(mode):
    postprocessor = DiversePostprocessor(top_n=2)
    call = (postprocessor.postprocess_nodes if mode == "sync"
            else postprocessor.apostprocess_nodes)
    for query_bundle in (None, QueryBundle("")):
        with pytest.raises(ValueError, match="query"):
            result = call(make_nodes(), query_bundle=query_bundle)
            if mode == "async":
                await result


@pytest.mark.parametrize(
    "kwargs,named",
    [
        ({"method": "nope"}, "method"),
        ({"method": "mmr", "method_kwargs": {"lambda_mult": 1.5}}, "lambda_mult"),
        ({"method": "dpp", "method_kwargs": {"theta": 1.0}}, "theta"),
        ({"method": "vrsd", "method_kwargs": {"lambda_mult": 0.5}}, "lambda_mult"),
        ({"method": "vrsd", "method_kwargs": {"refine": "anneal"}}, "refine"),
        ({"method_kwargs": {"relevance": [1.0]}}, "relevance"),
        ({"method_kwargs": {"normalize": False}}, "normalize"),
        # a per-candidate prior cannot be fixed before the candidates exist (a list
        # of 2 would pass a 2-vector dry run and then fail every query): it is a
        # metadata field name or a callable, as in the LangChain adapter
        ({"method": "mmr", "method_kwargs": {"prior": [0.1, 0.9]}},
         "prior: give the name of a metadata field or a callable"),
        ({"method": "vrsd", "method_kwargs": {"prior": "quality"}}, "prior"),
        ({"method": "vrsd", "relevance": "score"}, "relevance: method 'vrsd'"),
        ({"method": "mmr", "relevance": 3}, "relevance: give the name"),
        ({"group_by": "source"}, "max_per_group: group_by"),
        ({"max_per_group": 2}, "group_by: group_by"),
        ({"group_by": "source", "max_per_group": 0}, "max_per_group: expected an integer >= 1"),
        ({"method": "similarity", "method_kwargs": {"prior": [0.5] * 20}}, "prior"),
        ({"top_n": 0}, "top_n"),
        ({"top_n": True}, "top_n: expected an integer >= 1, got True"),
        ({"top_n": "3"}, "top_n: expected an integer >= 1, got '3'"),
        ({"top_n": 2.0}, "top_n: expected an integer >= 1, got 2.0"),
    ],
)
def test_bad_method_or_options_fail_at_construction(kwargs, named):
    with pytest.raises(ValueError, match=named):
        DiversePostprocessor(**kwargs)


def summary_retriever():
    """A real retriever that is not a vector index one: it returns every node."""
    from llama_index.core import SummaryIndex

    return SummaryIndex([n.node for n in make_nodes()]).as_retriever()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_retriever_wraps_any_retriever(mode):
    retriever = DiverseRerankRetriever(summary_retriever(), top_n=2, fetch_k=4)
    if mode == "sync":
        out = retriever.retrieve(bundle())
    else:
        out = await retriever.aretrieve(bundle())
    want = select(QUERY, VECTORS, 2, method=DEFAULT_METHOD).indices
    assert [n.node.node_id for n in out] == [f"n{i}" for i in want]
    assert [n.node.metadata["vrsd"]["rank"] for n in out] == [0, 1]


def test_bad_retriever_arguments():
    with pytest.raises(ValueError, match="retriever"):
        DiverseRerankRetriever(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fetch_k"):
        DiverseRerankRetriever(summary_retriever(), top_n=5, fetch_k=3)
    for top_n in (True, "3", 2.0, 0):
        with pytest.raises(ValueError, match="^top_n: expected an integer >= 1"):
            DiverseRerankRetriever(summary_retriever(), top_n=top_n, fetch_k=4)
    for fetch_k in (True, "20", 20.0):
        with pytest.raises(ValueError, match="^fetch_k: expected an integer >= 1"):
            DiverseRerankRetriever(summary_retriever(), top_n=2, fetch_k=fetch_k)
    wrapper = DiverseRerankRetriever(summary_retriever(), top_n=np.int64(2), fetch_k=np.int64(4))
    assert wrapper.top_n == 2
    with pytest.raises(ValueError, match="method"):
        DiverseRerankRetriever(summary_retriever(), method="nope")
    with pytest.raises(ValueError, match="query"):
        DiverseRerankRetriever(summary_retriever(), top_n=2, fetch_k=4).retrieve("")


def test_class_name_and_serialisation():
    postprocessor = DiversePostprocessor(top_n=3, method="mmr", method_kwargs={"lambda_mult": 0.3})
    assert postprocessor.class_name() == "DiversePostprocessor"
    data = postprocessor.to_dict()
    assert data["class_name"] == "DiversePostprocessor"
    assert data["method_kwargs"] == {"lambda_mult": 0.3}
    assert DiversePostprocessor.from_dict(data).method_kwargs == {"lambda_mult": 0.3}


def test_json_schema_names_the_methods():
    """The typed fields (callables included) give a JSON schema: the methods as an enum."""
    schema = DiversePostprocessor.model_json_schema()["properties"]
    assert schema["method"]["enum"] == list(METHOD_INFO)
    assert {"relevance", "group_by", "token_counter", "max_tokens"} <= set(schema)


class _Collect(BaseEventHandler):
    events: list = []

    def handle(self, event, **kwargs):
        self.events.append(event)


class _LegacyCollect(BaseCallbackHandler):
    def __init__(self) -> None:
        super().__init__([], [])
        self.starts: list = []
        self.ends: list = []

    def on_event_start(self, event_type, payload=None, event_id="", parent_id="", **kw):
        self.starts.append((event_type, payload))
        return event_id

    def on_event_end(self, event_type, payload=None, event_id="", **kw):
        self.ends.append((event_type, payload))

    def start_trace(self, trace_id=None):
        pass

    def end_trace(self, trace_id=None, trace_map=None):
        pass


@pytest.fixture
def instrumented():
    root = get_dispatcher()
    events = _Collect(events=[])
    spans = SimpleSpanHandler()
    root.add_event_handler(events)
    root.add_span_handler(spans)
    yield events, spans
    root.event_handlers.remove(events)
    root.span_handlers.remove(spans)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_rerank_events_and_span_fire(instrumented, mode):
    events, spans = instrumented
    legacy = _LegacyCollect()
    postprocessor = DiversePostprocessor(top_n=2, callback_manager=CallbackManager([legacy]))
    nodes = make_nodes()
    if mode == "sync":
        out = postprocessor.postprocess_nodes(nodes, query_bundle=bundle())
    else:
        out = await postprocessor.apostprocess_nodes(nodes, query_bundle=bundle())
    starts = [e for e in events.events if isinstance(e, ReRankStartEvent)]
    ends = [e for e in events.events if isinstance(e, ReRankEndEvent)]
    assert len(starts) == len(ends) == 1
    assert starts[0].top_n == 2 and starts[0].model_name == f"vrsd:{DEFAULT_METHOD}"
    assert [n.node.node_id for n in starts[0].nodes] == [n.node.node_id for n in nodes]
    assert [n.node.node_id for n in ends[0].nodes] == [n.node.node_id for n in out]
    span_names = [s.id_ for s in spans.completed_spans]
    assert any("DiversePostprocessor._" in name and "postprocess_nodes" in name
               for name in span_names)
    assert [t for t, _ in legacy.starts] == [CBEventType.RERANKING]
    assert [t for t, _ in legacy.ends] == [CBEventType.RERANKING]
