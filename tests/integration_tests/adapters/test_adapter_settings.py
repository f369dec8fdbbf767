"""Every adapter's settings, checked the same way: a misspelt keyword is a ValueError
naming it and the closest valid keyword (never silently ignored), and a count below 1
(k, top_n, top_k, --k) is a ValueError naming the argument, in every adapter and the CLI.

Small deterministic embeddings and in-memory stores only: nothing loads a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

TEXTS = ["plants need light", "plants need water", "cats sleep a lot", "rome was an empire",
         "bread dough rises", "light travels fast"]


class PlainStore(VectorStore):
    """A store without a fast path (the generic fallback); it records its search arguments."""

    def __init__(self, embedding: Embeddings) -> None:
        self._inner = InMemoryVectorStore(embedding)
        self._embedding = embedding
        self.searched_with: list[dict[str, Any]] = []

    @property
    def embeddings(self) -> Embeddings:
        return self._embedding

    def add_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None,
                  **kwargs: Any) -> list[str]:
        return self._inner.add_texts(texts, metadatas, **kwargs)

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        self.searched_with.append(kwargs)
        return self._inner.similarity_search(query, k=k)

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                    **kwargs: Any) -> list[Document]:
        self.searched_with.append(kwargs)
        return self._inner.similarity_search_by_vector(embedding, k=k)

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings, metadatas: Any = None,
                   **kwargs: Any) -> PlainStore:
        store = cls(embedding)
        store.add_texts(texts, metadatas)
        return store


@pytest.fixture
def embeddings() -> Embeddings:
    return DeterministicFakeEmbedding(size=16)


@pytest.fixture
def store(embeddings) -> InMemoryVectorStore:
    return InMemoryVectorStore.from_texts(TEXTS, embeddings)


@pytest.fixture
def plain_store(embeddings) -> PlainStore:
    return PlainStore.from_texts(TEXTS, embeddings)


@pytest.fixture
def li_retriever():
    from llama_index.core import SummaryIndex
    from llama_index.core.schema import TextNode

    return SummaryIndex([TextNode(text=t, embedding=[1.0, float(i)])
                         for i, t in enumerate(TEXTS)]).as_retriever()


def refused(build: Callable[[], Any], bad: str, closest: str) -> str:
    """The ValueError of ``build()``; it names ``bad`` and suggests ``closest``."""
    with pytest.raises(ValueError) as caught:
        build()
    message = str(caught.value)
    assert f"{bad}: " in message and f"did you mean {closest}?" in message, message
    return message


# ----------------------------------------------------------------- misspelt keywords


def test_langchain_retriever_refuses_misspelt_fields(store):
    from vrsd_langchain import DiverseRetriever

    message = refused(lambda: DiverseRetriever(vectorstore=store, k=2, fetchk=4), "fetchk",
                      "fetch_k")
    assert "fetchk: unknown keyword for DiverseRetriever; did you mean fetch_k?" in message
    refused(lambda: DiverseRetriever(vectorstore=store, k=2, methd="mmr"), "methd", "method")
    refused(lambda: DiverseRetriever(vectorstore=store, method="mmr",
                                  method_kwargs={"lamda_mult": 0.3}), "lamda_mult", "lambda_mult")


def test_langchain_compressor_refuses_misspelt_fields(embeddings):
    from vrsd_langchain import DiverseCompressor

    refused(lambda: DiverseCompressor(embeddings=embeddings, methd="mmr"), "methd", "method")
    refused(lambda: DiverseCompressor(embeddings=embeddings, max_token=10), "max_token",
            "max_tokens")


@pytest.mark.parametrize("which", ["store", "plain_store"])
def test_as_retriever_refuses_misspelt_search_kwargs(request, which):
    """On a store with a fast path (its search arguments are known) and on one without
    (its search arguments go to its own search, but a near-miss of vrsd's is a typo)."""
    from vrsd_langchain import DiverseVectorStore

    wrapped = DiverseVectorStore(request.getfixturevalue(which))
    refused(lambda: wrapped.as_retriever(search_type="mmr",
                                         search_kwargs={"k": 2, "fetchk": 4}), "fetchk", "fetch_k")
    refused(lambda: wrapped.as_retriever(search_type="mmr", search_kwargs={"lamda_mult": 0.3}),
            "lamda_mult", "lambda_mult")
    refused(lambda: wrapped.as_retriever(searchtype="mmr"), "searchtype", "search_type")


@pytest.mark.parametrize("which", ["store", "plain_store"])
def test_invoke_keywords_are_search_arguments_checked_like_search_kwargs(request, which):
    """As in LangChain, ``invoke(q, **kwargs)`` overrides the call's settings: k, fetch_k,
    method options, per-candidate inputs; anything else is a store search argument."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=request.getfixturevalue(which), k=2, fetch_k=4,
                              reembed="allow")
    assert len(retriever.invoke("plants", k=3)) == 3  # the usual override keeps working
    refused(lambda: retriever.invoke("plants", fetchk=3), "fetchk", "fetch_k")
    refused(lambda: retriever.invoke("plants", methd="mmr"), "methd", "method")


def test_a_store_without_fast_path_gets_its_own_search_arguments(plain_store):
    """Only near-misses of vrsd's keywords are refused: the store's own arguments pass."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=plain_store, k=2, fetch_k=4, reembed="allow",
                              search_kwargs={"where": {"topic": "plants"}})
    retriever.invoke("plants", timeout=5)
    assert plain_store.searched_with[-1] == {"where": {"topic": "plants"}, "timeout": 5}


def test_llamaindex_adapters_refuse_misspelt_keywords(li_retriever):
    from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

    message = refused(lambda: DiversePostprocessor(topn=2), "topn", "top_n")
    assert "unknown keyword for DiversePostprocessor" in message
    refused(lambda: DiversePostprocessor(top_n=2, methd="mmr"), "methd", "method")
    message = refused(lambda: DiverseRerankRetriever(li_retriever, topn=2), "topn", "top_n")
    assert "unknown keyword for DiverseRerankRetriever" in message
    refused(lambda: DiverseRerankRetriever(li_retriever, top_n=2, fetchk=4), "fetchk", "fetch_k")


def test_haystack_ranker_refuses_misspelt_keywords():
    from vrsd_haystack import DiverseRanker

    message = refused(lambda: DiverseRanker(topk=2), "topk", "top_k")
    assert "unknown keyword for DiverseRanker" in message
    refused(lambda: DiverseRanker(method_kwarg={}), "method_kwarg", "method_kwargs")
    # a pipeline file with the typo: the same message when it is loaded
    data = DiverseRanker(top_k=2).to_dict()
    data["init_parameters"]["methd"] = data["init_parameters"].pop("method")
    refused(lambda: DiverseRanker.from_dict(data), "methd", "method")


# ----------------------------------------------------------------- one rule for k < 1


def count_refused(build: Callable[[], Any], name: str) -> None:
    with pytest.raises(ValueError, match=rf"\b{name}: expected an integer >= 1, got 0"):
        build()


def test_every_langchain_entry_point_refuses_k_below_one(store, embeddings):
    from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore

    count_refused(lambda: DiverseRetriever(vectorstore=store, k=0), "k")
    count_refused(lambda: DiverseRetriever(vectorstore=store, k=2).invoke("plants", k=0), "k")
    count_refused(lambda: DiverseRetriever(vectorstore=store, k=2, fetch_k=0), "fetch_k")
    count_refused(lambda: DiverseCompressor(embeddings=embeddings, k=0), "k")
    count_refused(lambda: DiverseVectorStore(store).as_retriever(
        search_type="mmr", search_kwargs={"k": 0}), "k")


def test_every_llamaindex_and_haystack_entry_point_refuses_below_one(li_retriever):
    from vrsd_haystack import DiverseRanker
    from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

    count_refused(lambda: DiversePostprocessor(top_n=0), "top_n")
    count_refused(lambda: DiverseRerankRetriever(li_retriever, top_n=0), "top_n")
    count_refused(lambda: DiverseRanker(top_k=0), "top_k")
    count_refused(lambda: DiverseRanker(top_k=2).run(documents=[], query_embedding=[1.0],
                                                  top_k=0), "top_k")


@pytest.mark.parametrize("argv", [["demo", "--k", "0"], ["search", "q", "--k", "0"],
                                  ["eval", "evidence", "--k", "0"],
                                  ["search", "q", "--fetch-k", "0"]])
def test_the_command_line_refuses_k_below_one(argv, capsys):
    from vrsd_cli.cli import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    flag = argv[-2]
    assert f"argument {flag}: expected a number >= 1, got 0" in capsys.readouterr().err
