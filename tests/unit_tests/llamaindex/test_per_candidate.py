"""The LlamaIndex postprocessor reads the same per-candidate inputs as the LangChain
adapter, with the same spellings: the quality prior (``method_kwargs["prior"]``),
an outside ``relevance`` and ``group_by``/``max_per_group``; each equals ``select``
with the same arrays."""

from __future__ import annotations

import numpy as np
import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from vrsd_core import select
from vrsd_llamaindex import DiversePostprocessor

rng = np.random.default_rng(7)
QUERY = rng.normal(size=8)
VECTORS = QUERY + rng.normal(scale=0.9, size=(12, 8))
QUALITY = rng.uniform(size=12).round(3)
SOURCES = [f"doc-{i // 3}" for i in range(12)]  # three chunks per document


def nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(
            text=f"chunk {i}", id_=f"n{i}", embedding=v.tolist(),
            metadata={"quality": float(QUALITY[i]), "source": SOURCES[i]}))
        for i, v in enumerate(VECTORS)
    ]


def ids(out: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in out]


def run(**settings) -> list[NodeWithScore]:
    return DiversePostprocessor(**settings).postprocess_nodes(
        nodes(), query_bundle=QueryBundle("what?", embedding=QUERY.tolist()))


@pytest.mark.parametrize("prior", ["quality", lambda node: node.metadata["quality"]])
def test_quality_prior_from_metadata_or_callable(prior):
    out = run(top_n=4, method="mmr", method_kwargs={"prior": prior, "prior_weight": 0.4})
    sel = select(QUERY, VECTORS, 4, method="mmr", prior=QUALITY, prior_weight=0.4)
    assert ids(out) == [f"n{i}" for i in sel.indices]
    assert [n.node.metadata["vrsd"]["prior"] for n in out] == pytest.approx(
        QUALITY[sel.indices].tolist())


def test_outside_relevance_callable_gets_query_text_and_nodes():
    seen = []

    def score(query, nodes_):
        seen.append((query, len(nodes_)))
        return [n.metadata["quality"] for n in nodes_]

    out = run(top_n=4, method="dpp", relevance=score)
    assert seen == [("what?", 12)]
    sel = select(QUERY, VECTORS, 4, method="dpp", relevance=QUALITY)
    assert ids(out) == [f"n{i}" for i in sel.indices]
    assert [n.score for n in out] == pytest.approx(QUALITY[sel.indices].tolist())
    assert ids(run(top_n=4, method="dpp", relevance="quality")) == ids(out)


@pytest.mark.parametrize("method", ["similarity", "vrsd", "mmr", "dpp"])
def test_group_cap(method):
    out = run(top_n=4, method=method, group_by="source", max_per_group=1)
    assert len({n.node.metadata["source"] for n in out}) == 4
    sel = select(QUERY, VECTORS, 4, method=method, groups=SOURCES, max_per_group=1)
    assert ids(out) == [f"n{i}" for i in sel.indices]
    by_callable = run(top_n=4, method=method, group_by=lambda n: n.metadata["source"],
                      max_per_group=1)
    assert ids(by_callable) == ids(out)


def test_missing_metadata_field_is_named():
    with pytest.raises(ValueError, match="prior: candidate 'n0' has no metadata field 'stars'"):
        run(top_n=2, method="mmr", method_kwargs={"prior": "stars"})
