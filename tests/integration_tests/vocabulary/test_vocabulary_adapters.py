"""One vocabulary across select, the retrievers, the compressor, ``search_type``, the
postprocessor, the Haystack ranker and the command line: ``"vrsd"`` is the paper's
algorithm everywhere, no method named means the recommendation (``complement``),
``"vrsd"`` with ``refine="swap"`` is swap-refined VRSD everywhere, the never-released
names ``"vrsd_swap"`` and ``"vrsd+swap"`` are refused everywhere as unknown methods, and
both text-query adapters refuse a blank query as the command line does (the Haystack
ranker takes only a query vector).

Hand-built geometry with an obvious answer (the README's): the query is +x; t1
duplicates t0; t2 is as relevant from the other side; t3 is off-topic. Plain top-2
is [t0, t1]; the paper's VRSD takes [t0, t2]. A second one separates the swap search
from greedy VRSD: greedy takes s0 first, but s1 + s2 lies almost along the query.
"""

from __future__ import annotations

import re
import warnings

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import Document as LIDocument
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from vrsd_core import DEFAULT_METHOD, select
from vrsd_eval.methods import parse_method
from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore
from vrsd_llamaindex import DiversePostprocessor
from vrsd_llamaindex import DiverseRerankRetriever as LIRetriever

VECTORS = {
    "t0": [0.90, 0.40, 0.10],
    "t1": [0.88, 0.42, 0.12],
    "t2": [0.85, -0.45, 0.05],
    "t3": [0.30, 0.10, 0.90],
    "s0": [0.95, 0.0, 0.31],
    "s1": [0.90, 0.43, 0.0],
    "s2": [0.88, -0.45, 0.0],
    "s3": [0.30, 0.10, 0.90],
}
QUERY_VECTOR = [1.0, 0.0, 0.0]
TEXTS = ["t0", "t1", "t2", "t3"]
SWAP_TEXTS = ["s0", "s1", "s2", "s3"]
UNRELEASED = ["vrsd_swap", "vrsd+swap"]


def picks(method: str, k: int = 2, texts: list[str] = TEXTS, **options) -> list[str]:
    sel = select(QUERY_VECTOR, [VECTORS[t] for t in texts], k, method=method, **options)
    return [texts[i] for i in sel.indices]


class TableEmbeddings(Embeddings):
    """Each text's vector from VECTORS; every query is +x."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [VECTORS[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return QUERY_VECTOR


class TableEmbedModel(BaseEmbedding):
    """The same table as a LlamaIndex embed model."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return QUERY_VECTOR

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return QUERY_VECTOR

    def _get_text_embedding(self, text: str) -> list[float]:
        return VECTORS[text]


def table_store(texts: list[str]) -> InMemoryVectorStore:
    s = InMemoryVectorStore(TableEmbeddings())
    s.add_texts(texts, ids=texts)
    return s


@pytest.fixture
def store() -> InMemoryVectorStore:
    return table_store(TEXTS)


def contents(docs) -> list[str]:
    return [d.page_content for d in docs]


def li_texts(nodes) -> list[str]:
    return [n.node.get_content() for n in nodes]


def li_nodes(texts: list[str] = TEXTS) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=t, id_=t, embedding=VECTORS[t]), score=0.5)
            for t in texts]


def test_the_geometry_separates_the_names():
    assert picks("similarity") == ["t0", "t1"]
    assert picks("vrsd") == ["t0", "t2"]
    assert picks("vrsd", refine="swap") == ["t0", "t2"]
    assert picks("vrsd", texts=SWAP_TEXTS) == ["s0", "s1"]
    assert picks("vrsd", texts=SWAP_TEXTS, refine="swap") == ["s1", "s2"]


def test_vrsd_means_the_papers_algorithm_in_every_layer(store):
    want = picks("vrsd")
    assert contents(DiverseRetriever(vectorstore=store, k=2, fetch_k=4, method="vrsd")
                    .invoke("q")) == want
    assert contents(DiverseCompressor(embeddings=TableEmbeddings(), k=2, method="vrsd")
                    .compress_documents([Document(page_content=t) for t in TEXTS], "q")) == want
    retriever = DiverseVectorStore(store).as_retriever(
        search_type="vrsd", search_kwargs={"k": 2, "fetch_k": 4})
    docs = retriever.invoke("q")
    assert contents(docs) == want and {d.metadata["vrsd"]["method"] for d in docs} == {"vrsd"}
    post = DiversePostprocessor(top_n=2, method="vrsd", embed_model=TableEmbedModel())
    assert li_texts(post.postprocess_nodes(li_nodes(), query_str="q")) == want
    assert parse_method("vrsd", name_of_argument="method")[0].method == "vrsd"


def test_search_type_vrsd_is_the_papers_method_without_a_warning(store):
    wrapped = DiverseVectorStore(store)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one meaning, nothing to warn about
        retriever = wrapped.as_retriever(search_type="vrsd", search_kwargs={"k": 2, "fetch_k": 4})
        assert contents(retriever.invoke("q")) == picks("vrsd")
        # refine="swap" is an option of vrsd, the method search_type="vrsd" runs
        swap = wrapped.as_retriever(search_type="vrsd",
                                    search_kwargs={"k": 2, "fetch_k": 4, "refine": "swap"})
        assert contents(swap.invoke("q")) == picks("vrsd", refine="swap")
        rec = wrapped.as_retriever(search_type="complement", search_kwargs={"k": 2, "fetch_k": 4})
        assert contents(rec.invoke("q")) == picks("complement")
    # the search type names the method: a second name in search_kwargs is refused
    with pytest.raises(ValueError, match="search_kwargs: 'method' is not a search argument"):
        wrapped.as_retriever(search_type="vrsd", search_kwargs={"method": "mmr"})


def test_no_method_named_is_the_recommendation_everywhere(store):
    want = picks(DEFAULT_METHOD)
    assert contents(DiverseRetriever(vectorstore=store, k=2, fetch_k=4).invoke("q")) == want
    assert DiverseCompressor(embeddings=TableEmbeddings()).method == DEFAULT_METHOD
    post = DiversePostprocessor(top_n=2, embed_model=TableEmbedModel())
    assert post.method == DEFAULT_METHOD
    assert li_texts(post.postprocess_nodes(li_nodes(), query_str="q")) == want


def test_vrsd_with_refine_swap_is_the_swap_search_in_every_layer():
    want = picks("vrsd", texts=SWAP_TEXTS, refine="swap")
    store, swap = table_store(SWAP_TEXTS), {"refine": "swap"}
    retriever = DiverseRetriever(vectorstore=store, k=2, fetch_k=4, method="vrsd",
                                 method_kwargs=swap)
    assert contents(retriever.invoke("q")) == want
    per_call = DiverseRetriever(vectorstore=store, k=2, fetch_k=4).invoke(
        "q", method="vrsd", refine="swap")
    assert contents(per_call) == want
    by_type = DiverseVectorStore(store).as_retriever(
        search_type="vrsd", search_kwargs={"k": 2, "fetch_k": 4, **swap})
    assert contents(by_type.invoke("q")) == want
    compressor = DiverseCompressor(embeddings=TableEmbeddings(), k=2, method="vrsd",
                                   method_kwargs=swap)
    docs = [Document(page_content=t) for t in SWAP_TEXTS]
    assert contents(compressor.compress_documents(docs, "q")) == want
    post = DiversePostprocessor(top_n=2, method="vrsd", method_kwargs=swap,
                                embed_model=TableEmbedModel())
    assert li_texts(post.postprocess_nodes(li_nodes(SWAP_TEXTS), query_str="q")) == want
    cli = parse_method("vrsd:refine=swap", name_of_argument="method")[0]
    assert (cli.label, cli.method, cli.options) == ("vrsd_swap", "vrsd", swap)


@pytest.mark.parametrize("name", UNRELEASED)
def test_the_unreleased_swap_names_are_refused_everywhere(store, name):
    from vrsd_haystack import DiverseRanker

    unknown = rf"method: unknown method {re.escape(repr(name))}"
    calls = [
        lambda: DiverseRetriever(vectorstore=store, k=2, fetch_k=4, method=name),
        lambda: DiverseRetriever(vectorstore=store, k=2, fetch_k=4).invoke("q", method=name),
        lambda: DiverseCompressor(embeddings=TableEmbeddings(), k=2, method=name),
        lambda: DiversePostprocessor(top_n=2, method=name, embed_model=TableEmbedModel()),
        lambda: LIRetriever(retriever=_index().as_retriever(), top_n=2, fetch_k=4, method=name),
        lambda: DiverseRanker(method=name),
        lambda: parse_method(name, name_of_argument="method"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=unknown):
            call()
    # LangChain's own check of the search type, as for any search type it does not allow
    with pytest.raises(ValueError, match=rf"search_type of {re.escape(name)} not allowed"):
        DiverseVectorStore(store).as_retriever(search_type=name,
                                               search_kwargs={"k": 2, "fetch_k": 4})


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
async def test_a_blank_query_is_refused_by_both_adapters(store, blank):
    """As by the CLI: otherwise the store returns documents anyway, an off-topic one first."""
    match = "query(_bundle)?: the query is empty or only whitespace"
    calls = [
        lambda: DiverseRetriever(vectorstore=store, k=2, fetch_k=4).invoke(blank),
        lambda: DiverseVectorStore(store).as_retriever(search_type="mmr").invoke(blank),
        lambda: DiverseCompressor(embeddings=TableEmbeddings(), k=2).compress_documents(
            [Document(page_content=t) for t in TEXTS], blank),
        lambda: DiversePostprocessor(top_n=2, embed_model=TableEmbedModel()).postprocess_nodes(
            li_nodes(), query_bundle=QueryBundle(blank, embedding=QUERY_VECTOR)),
        lambda: DiversePostprocessor(top_n=2, embed_model=TableEmbedModel()).postprocess_nodes(
            li_nodes(), query_str=blank),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=match):
            call()
    with pytest.raises(ValueError, match=match):
        await DiverseRetriever(vectorstore=store, k=2, fetch_k=4).ainvoke(blank)
    with pytest.raises(ValueError, match=match):
        await DiversePostprocessor(top_n=2, embed_model=TableEmbedModel()).apostprocess_nodes(
            li_nodes(), query_str=blank)


def _index(texts: list[str] = TEXTS) -> VectorStoreIndex:
    return VectorStoreIndex.from_documents([LIDocument(text=t, id_=t) for t in texts],
                                           embed_model=TableEmbedModel())


def test_the_postprocessor_warns_once_when_it_has_nothing_to_choose_from():
    """LlamaIndex's default similarity_top_k=2 behind top_n=3: plain top-k, now said."""
    post = DiversePostprocessor(top_n=3, embed_model=TableEmbedModel())
    retriever = _index().as_retriever()  # similarity_top_k left at LlamaIndex's 2
    with pytest.warns(UserWarning, match=r"top_n=3\) received 2 candidate.*plain top-k.*"
                                         r"similarity_top_k") as caught:
        first = post.postprocess_nodes(retriever.retrieve("q"), query_str="q")
    assert caught[0].filename == __file__ and len(first) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per postprocessor, not per query
        post.postprocess_nodes(retriever.retrieve("q"), query_str="q")
        # enough candidates: silent
        roomy = DiversePostprocessor(top_n=2, embed_model=TableEmbedModel())
        roomy.postprocess_nodes(_index().as_retriever(similarity_top_k=4).retrieve("q"),
                                query_str="q")
    with pytest.warns(UserWarning, match="top_n=4"):  # exactly top_n: still nothing to choose
        DiversePostprocessor(top_n=4, embed_model=TableEmbedModel()).postprocess_nodes(
            li_nodes(), query_str="q")


async def test_the_postprocessor_warns_on_the_async_path_too():
    post = DiversePostprocessor(top_n=3, embed_model=TableEmbedModel())
    with pytest.warns(UserWarning, match="similarity_top_k"):
        await post.apostprocess_nodes(li_nodes()[:2], query_str="q")


def test_the_llamaindex_retriever_takes_the_same_names():
    index = _index()
    swap_index = _index(SWAP_TEXTS)
    swap = LIRetriever(retriever=swap_index.as_retriever(similarity_top_k=4), top_n=2,
                       fetch_k=4, method="vrsd", method_kwargs={"refine": "swap"})
    assert (swap.method, swap.postprocessor.method_kwargs) == ("vrsd", {"refine": "swap"})
    assert li_texts(swap.retrieve("q")) == picks("vrsd", texts=SWAP_TEXTS, refine="swap")
    plain = LIRetriever(retriever=index.as_retriever(), top_n=2, fetch_k=4)
    assert plain.method == DEFAULT_METHOD
    assert li_texts(plain.retrieve("q")) == picks(DEFAULT_METHOD)


def test_the_haystack_ranker_takes_the_same_names():
    from haystack import Document as HSDocument

    from vrsd_haystack import DiverseRanker

    def ranked(ranker, texts: list[str] = TEXTS) -> list[str]:
        docs = [HSDocument(content=t, id=t, embedding=VECTORS[t]) for t in texts]
        return [d.content for d in ranker.run(documents=docs, query_embedding=QUERY_VECTOR,
                                              top_k=2)["documents"]]

    swap = DiverseRanker(method="vrsd", method_kwargs={"refine": "swap"})
    assert ranked(swap, SWAP_TEXTS) == picks("vrsd", texts=SWAP_TEXTS, refine="swap")
    assert ranked(DiverseRanker(method="vrsd")) == picks("vrsd")
    assert DiverseRanker().method == DEFAULT_METHOD
    assert ranked(DiverseRanker()) == picks(DEFAULT_METHOD)
