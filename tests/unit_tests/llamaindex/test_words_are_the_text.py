"""LlamaIndex's words are the node's text, not the metadata it prints before it: the same
texts and vectors with and without metadata give the same picks and the same entries
(the held-back passages' sources aside, which the metadata names), no false "restates",
and excerpts of the passage, not of its file path. The token budget still counts what
the LLM reads (the metadata lines included).

Nodes carry their vectors (``node.embedding``): nothing is embedded again.
"""

from __future__ import annotations

import zlib

import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from vrsd_kit.lexical import Judge
from vrsd_llamaindex import DiversePostprocessor

TEXTS = [
    "Redistribution is allowed if you give recipients a copy of this License.",
    "Modified files must carry prominent notices stating that you changed them.",
    "You must retain all copyright, patent and trademark notices of the source.",
    "Install the package with pip and import it in Python.",
    "The grant of patent license ends if you sue a contributor over the work.",
    "Run the tests with make test from the repository's root.",
    "The documentation lives in the docs folder as Markdown files.",
    "Contributions are welcome under the same license.",
]
QUERY = "what are the conditions for redistribution under the license"
DIM = 32


def vector(text: str) -> list[float]:
    out = np.full(DIM, 0.01)
    for word in text.lower().split():
        out[zlib.crc32(word.encode()) % DIM] += 1.0
    return out.tolist()


def metadata(i: int) -> dict:
    """What a folder reader puts on a node: long, alike for every node of one folder."""
    return {"file_path": f"/home/user/projects/example-package/docs/section_{i % 2}.md",
            "file_name": f"section_{i % 2}.md", "file_type": "text/markdown",
            "creation_date": "2026-11-20", "last_modified_date": "2026-11-21",
            "header_path": "/Example package/Licence and use/Conditions/"}


def nodes(with_metadata: bool) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=t, id_=f"n{i}", embedding=vector(t),
                                        metadata=metadata(i) if with_metadata else {}),
                          score=1.0) for i, t in enumerate(TEXTS)]


def run(with_metadata: bool, **fields) -> list[NodeWithScore]:
    post = DiversePostprocessor(top_n=4, **fields)
    return post.postprocess_nodes(nodes(with_metadata),
                                  QueryBundle(QUERY, embedding=vector(QUERY)))


def without_sources(entry: dict) -> dict:
    return {**entry, "held_back": [{k: v for k, v in e.items() if k != "source"}
                                   for e in entry.get("held_back", [])]}


def test_metadata_changes_neither_the_picks_nor_the_entries():
    plain, heavy = run(False), run(True)
    assert [n.node.node_id for n in heavy] == [n.node.node_id for n in plain]
    for a, b in zip(plain, heavy, strict=True):
        assert without_sources(b.node.metadata["vrsd"]) == without_sources(a.node.metadata["vrsd"])
        assert b.score == a.score
    own = [n.node.get_content(MetadataMode.NONE) for n in nodes(True)]
    assert own == TEXTS and Judge(own).copy_of(1, [0]) is None
    for n in heavy:
        for entry in n.node.metadata["vrsd"]["held_back"]:
            assert entry["relation"] == "displaced"
            assert entry["excerpt"] in TEXTS[int(entry["id"][1:])]  # the passage, no path
            assert "file_path" not in entry["excerpt"]


def test_the_token_budget_counts_what_the_llm_reads():
    def count(text: str) -> int:
        return len(text.split())

    budget = sum(count(t) for t in TEXTS[:3])  # three passages' own words
    plain = run(False, max_tokens=budget, token_counter=count)
    heavy = run(True, max_tokens=budget, token_counter=count)
    assert len(heavy) < len(plain)  # the metadata lines take room in the prompt
    used = sum(count(n.node.get_content(MetadataMode.LLM)) for n in heavy)
    assert used <= budget
