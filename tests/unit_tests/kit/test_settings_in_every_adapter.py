"""Every framework class refuses a bad setting alike: at the assignment, with a ValueError
naming it (and the closest valid name for a typo); the object is left unchanged and keeps
working. One test, applied to every class (``vrsd_kit.settings.SettingsFields``).

In-memory candidates with fixed vectors: nothing loads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

TEXTS = ["plants need light", "plants need water", "cats sleep a lot", "rome was an empire",
         "bread dough rises", "light travels fast", "water boils at sea level",
         "the senate of rome"]
QUERY = "what do plants need"
DIM = 8


def vector(i: int) -> list[float]:
    return np.random.default_rng(i).standard_normal(DIM).tolist()


@dataclass
class Case:
    """A framework class: ``make()`` builds one, ``run(obj)`` returns the ids it picks."""

    make: Callable[[], Any]
    run: Callable[[Any], list[Any]]
    bad: list[tuple[str, Any, str]]  # (field, value, the name the message starts with)
    typo: tuple[str, Any, str]  # (field, value, the suggestion)


def langchain_retriever() -> Case:
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import DiverseRetriever

    store = InMemoryVectorStore.from_texts(TEXTS, DeterministicFakeEmbedding(size=DIM))
    return Case(lambda: DiverseRetriever(vectorstore=store, k=3, fetch_k=6, method="mmr"),
                lambda r: [d.page_content for d in r.invoke(QUERY)],
                [("k", 0, "k"), ("fetch_k", "20", "fetch_k"), ("fetch_k", 2, "fetch_k"),
                 ("method", "nope", "method"), ("fill_with_copies", "yes", "fill_with_copies"),
                 ("language", "klingon", "language")],
                ("method_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


def langchain_search_type() -> Case:
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import DiverseVectorStore

    store = DiverseVectorStore(
        InMemoryVectorStore.from_texts(TEXTS, DeterministicFakeEmbedding(size=DIM)))
    return Case(lambda: store.as_retriever(search_type="mmr",
                                           search_kwargs={"k": 3, "fetch_k": 6}),
                lambda r: [d.page_content for d in r.invoke(QUERY)],
                [("search_kwargs", {"k": 0}, "k"), ("search_kwargs", {"fetch_k": "20"}, "fetch_k"),
                 ("search_type", "nope", "search_type"),
                 ("search_kwargs", {"fill_with_copies": 1}, "fill_with_copies"),
                 ("search_kwargs", {"language": "xx"}, "language")],
                ("search_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


def langchain_compressor() -> Case:
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from vrsd_langchain import DiverseCompressor

    docs = [Document(page_content=t) for t in TEXTS]
    return Case(lambda: DiverseCompressor(embeddings=DeterministicFakeEmbedding(size=DIM), k=3,
                                       method="mmr"),
                lambda c: [d.page_content for d in c.compress_documents(docs, QUERY)],
                [("k", 0, "k"), ("k", "3", "k"), ("method", "nope", "method"),
                 ("fill_with_copies", 1, "fill_with_copies"), ("language", 1, "language")],
                ("method_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


def _nodes() -> list[Any]:
    from llama_index.core.schema import NodeWithScore, TextNode

    return [NodeWithScore(node=TextNode(text=t, id_=f"n{i}", embedding=vector(i)), score=1.0)
            for i, t in enumerate(TEXTS)]


def llamaindex_postprocessor() -> Case:
    from llama_index.core.schema import QueryBundle

    from vrsd_llamaindex import DiversePostprocessor

    bundle = QueryBundle(QUERY, embedding=vector(99))
    return Case(lambda: DiversePostprocessor(top_n=3, method="mmr"),
                lambda p: [n.node.node_id for n in p.postprocess_nodes(_nodes(), bundle)],
                [("top_n", 0, "top_n"), ("top_n", "3", "top_n"), ("method", "nope", "method"),
                 ("fill_with_copies", 1, "fill_with_copies"), ("language", "xx", "language")],
                ("method_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


def llamaindex_retriever() -> Case:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import QueryBundle

    from vrsd_llamaindex import DiverseRerankRetriever

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle):
            return _nodes()

    bundle = QueryBundle(QUERY, embedding=vector(99))
    return Case(lambda: DiverseRerankRetriever(Fixed(), top_n=3, fetch_k=6, method="mmr"),
                lambda r: [n.node.node_id for n in r.retrieve(bundle)],
                [("fetch_k", 0, "fetch_k"), ("fetch_k", "20", "fetch_k"),
                 ("top_n", 0, "top_n"), ("method", "nope", "method"),
                 ("fill_with_copies", None, "fill_with_copies"), ("language", "", "language")],
                ("method_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


def haystack_ranker() -> Case:
    from haystack import Document

    from vrsd_haystack import DiverseRanker

    docs = [Document(content=t, id=f"d{i}", embedding=vector(i)) for i, t in enumerate(TEXTS)]
    return Case(lambda: DiverseRanker(top_k=3, method="mmr"),
                lambda r: [d.id for d in r.run(documents=docs, query_embedding=vector(99),
                                               query=QUERY)["documents"]],
                [("top_k", -1, "top_k"), ("top_k", "3", "top_k"), ("method", "nope", "method"),
                 ("fill_with_copies", "yes", "fill_with_copies"), ("language", "xx", "language")],
                ("method_kwargs", {"lamda_mult": 0.5}, "lambda_mult"))


BUILDERS = [(langchain_retriever, "langchain DiverseRetriever"),
            (langchain_search_type, "langchain DiverseVectorStoreRetriever"),
            (langchain_compressor, "langchain DiverseCompressor"),
            (llamaindex_postprocessor, "llamaindex DiversePostprocessor"),
            (llamaindex_retriever, "llamaindex DiverseRerankRetriever"),
            (haystack_ranker, "haystack DiverseRanker")]


def cases() -> list[Any]:
    return [pytest.param(build, id=name) for build, name in BUILDERS]


@pytest.mark.parametrize("case", cases())
def test_a_bad_value_is_refused_at_the_assignment_and_nothing_changes(case):
    case = case()
    obj = case.make()
    picked = case.run(obj)
    for field, value, name in [*case.bad, case.typo]:
        before = getattr(obj, field)
        with pytest.raises(ValueError, match=f"^{name}:" if (field, value, name) != case.typo
                           else f"did you mean {case.typo[2]}"):
            setattr(obj, field, value)
        assert getattr(obj, field) == before, field
        assert case.run(obj) == picked, field  # still works, as before


@pytest.mark.parametrize("case", cases())
def test_settings_are_checked_by_the_kit(case):
    """The class keeps its settings with the kit's mechanism (no rollback, no re-run
    ``__init__``, no plan cache)."""
    from vrsd_kit.settings import SettingsFields

    obj = case().make()
    assert isinstance(obj, SettingsFields)
    assert obj.settings() is obj.settings()


@pytest.mark.parametrize("case", cases())
def test_fill_with_copies_reaches_the_settings(case):
    """Every adapter maps the kit's ``fill_with_copies`` (default False) onto its settings."""
    obj = case().make()
    assert obj.settings().fill_with_copies is False
    if hasattr(obj, "fill_with_copies"):
        obj.fill_with_copies = True
    else:  # the search type: a search argument
        obj.search_kwargs = {**obj.search_kwargs, "fill_with_copies": True}
    assert obj.settings().fill_with_copies is True


@pytest.mark.parametrize("case", cases())
def test_the_language_reaches_the_words_in_every_adapter(case, monkeypatch):
    from vrsd_core import DEFAULT_METHOD
    from vrsd_kit import lexical

    asked: list[str | None] = []
    read = lexical.read_texts

    def reading(texts, language=None):
        asked.append(language)
        return read(texts, language)

    monkeypatch.setattr(lexical, "read_texts", reading)
    case = case()
    obj = case.make()
    if hasattr(obj, "search_type"):  # the search type names the method
        obj.search_type = DEFAULT_METHOD
        obj.search_kwargs = {**obj.search_kwargs, "language": "en"}
    else:
        obj.method = DEFAULT_METHOD
        obj.method_kwargs = {}
        obj.language = "en"
    case.run(obj)
    assert asked and set(asked) == {"english"}
