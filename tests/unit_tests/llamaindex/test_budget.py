"""The token budget in the LlamaIndex adapter: ``max_tokens`` + ``token_counter`` on
``DiversePostprocessor`` and ``DiverseRerankRetriever``, counted on each node's LLM text."""

from __future__ import annotations

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from vrsd_core import DEFAULT_METHOD, select
from vrsd_kit.tokens import approx_token_count
from vrsd_llamaindex import DiversePostprocessor

from .test_per_candidate import QUERY, VECTORS, ids

# chunk texts of very different lengths, none a copy of another (vrsd_kit.lexical.Judge); the
# metadata is part of the LLM text
TEXTS = [" ".join(f"w{i}x{j}" for j in range(5 + 7 * i)) for i in range(len(VECTORS))]


def long_nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=TEXTS[i], id_=f"n{i}", embedding=v.tolist(),
                                    metadata={"title": f"Doc {i}"}))
        for i, v in enumerate(VECTORS)
    ]


def llm_counts(counter) -> list[int]:
    return [counter(n.node.get_content(metadata_mode=MetadataMode.LLM)) for n in long_nodes()]


def run(**settings) -> list[NodeWithScore]:
    return DiversePostprocessor(**settings).postprocess_nodes(
        long_nodes(), query_bundle=QueryBundle("what?", embedding=QUERY.tolist()))


@pytest.mark.parametrize("method", ["complement", "similarity", "dpp"])
def test_postprocessor_fills_the_budget(method):
    out = run(top_n=6, method=method, max_tokens=150)
    counts = llm_counts(approx_token_count)
    sel = select(QUERY, VECTORS, 6, method=method, max_tokens=150, token_counts=counts)
    assert ids(out) == [f"n{i}" for i in sel.indices]
    assert sum(counts[int(n.node.node_id[1:])] for n in out) <= 150
    assert len(out) < 6  # the budget binds


def test_a_custom_counter_counts_the_llm_text():
    seen: list[str] = []

    def words(text: str) -> int:
        seen.append(text)
        return len(text.split())

    out = run(top_n=6, max_tokens=60, token_counter=words)
    assert all(text.startswith("title: Doc") for text in seen)  # metadata included
    # the postprocessor's default method, which select() does not share (its default is vrsd)
    sel = select(QUERY, VECTORS, 6, method=DEFAULT_METHOD, max_tokens=60,
                 token_counts=llm_counts(words))
    assert ids(out) == [f"n{i}" for i in sel.indices]


def test_retriever_passes_the_budget_on():
    from llama_index.core.retrievers import BaseRetriever

    from vrsd_llamaindex import DiverseRerankRetriever

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle):  # noqa: ANN001, ANN202
            return long_nodes()

    retriever = DiverseRerankRetriever(Fixed(), top_n=6, max_tokens=150)
    out = retriever.retrieve(QueryBundle("what?", embedding=QUERY.tolist()))
    sel = select(QUERY, VECTORS, 6, method=DEFAULT_METHOD, max_tokens=150,
                 token_counts=llm_counts(approx_token_count))
    assert ids(out) == [f"n{i}" for i in sel.indices]


@pytest.mark.parametrize(("settings", "message"), [
    ({"max_tokens": -3}, "max_tokens: expected an integer >= 1"),
    ({"max_tokens": 0}, "max_tokens: expected an integer >= 1"),
    ({"max_tokens": 10, "token_counter": 5}, "token_counter: expected a callable"),
])
def test_bad_budget_settings(settings, message):
    with pytest.raises(ValueError, match=message):
        DiversePostprocessor(**settings)


def test_no_budget_is_unchanged():
    assert ids(run(top_n=4)) == ids(run(top_n=4, max_tokens=10**6))
    assert np.isfinite([n.score for n in run(top_n=4)]).all()
