"""One pool size by default: every entry point that fetches its own candidates fetches
``vrsd_kit.settings.DEFAULT_FETCH_K`` when it is not told how many (chosen by
benchmarks/fetch_k.py and benchmarks/fetch_k_cost.py, docs/evaluation.md), and the README
says that number.

In-memory stores with fixed vectors: nothing loads a model.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from vrsd_kit.settings import DEFAULT_FETCH_K, SETTINGS

ROOT = Path(__file__).resolve().parents[3]
TEXTS = [f"passage {i} about topic {i % 7}" for i in range(DEFAULT_FETCH_K + 15)]
DIM = 8


def test_the_kits_setting_is_the_one_constant():
    assert next(s for s in SETTINGS if s.name == "fetch_k").default == DEFAULT_FETCH_K
    assert DEFAULT_FETCH_K > 4  # more candidates than the k every entry point returns


def test_langchain_fetches_the_default():
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import DiverseRetriever, DiverseVectorStore

    store = InMemoryVectorStore.from_texts(TEXTS, DeterministicFakeEmbedding(size=DIM))
    retriever = DiverseRetriever(vectorstore=store)
    assert (retriever.k, retriever.fetch_k, retriever.settings().fetch_k) == (
        4, DEFAULT_FETCH_K, DEFAULT_FETCH_K)
    for search_type in ("complement", "vrsd", "dpp"):
        wrapped = DiverseVectorStore(store).as_retriever(search_type=search_type)
        assert wrapped.settings().fetch_k == DEFAULT_FETCH_K, search_type
    assert len(retriever.invoke("topic 3")) == 4
    # "mmr" is LangChain's search type: it fetches what LangChain's own MMR fetches
    mmr = DiverseVectorStore(store).as_retriever(search_type="mmr")
    langchains = inspect.signature(InMemoryVectorStore.max_marginal_relevance_search)
    assert mmr.settings().fetch_k == langchains.parameters["fetch_k"].default


def test_llamaindex_fetches_the_default():
    from llama_index.core.retrievers import BaseRetriever

    from vrsd_llamaindex import DiverseRerankRetriever

    class Empty(BaseRetriever):
        def _retrieve(self, query_bundle):
            return []

    retriever = DiverseRerankRetriever(Empty())
    assert (retriever.top_n, retriever.fetch_k, retriever.settings().fetch_k) == (
        4, DEFAULT_FETCH_K, DEFAULT_FETCH_K)


def test_the_command_and_the_inspection_fetch_the_default():
    from vrsd_cli.demo import _checked
    from vrsd_cli.indexing import search_fetch_k
    from vrsd_kit.inspection.run import default_counts

    assert search_fetch_k(4, None) == DEFAULT_FETCH_K
    assert search_fetch_k(DEFAULT_FETCH_K + 3, None) == DEFAULT_FETCH_K + 3  # at least k
    assert search_fetch_k(4, 9) == 9
    assert _checked(4, None, 0.5, 0.5) == (4, DEFAULT_FETCH_K)
    assert default_counts(None, None) == (4, DEFAULT_FETCH_K)


@pytest.mark.parametrize("command", ["search", "inspect", "demo"])
def test_the_commands_help_says_the_default(command, capsys):
    from vrsd_cli.cli import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert f"(default: {DEFAULT_FETCH_K}, or --k if larger)" in said


def test_the_readme_says_the_default():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"fetches more candidates than you need \((\d+)\)", readme)
    assert said is not None and int(said[1]) == DEFAULT_FETCH_K
