"""Hostile input to the adapters: ``vrsd_langchain.DiverseRetriever`` / ``DiverseCompressor`` and
``vrsd_llamaindex.DiversePostprocessor`` over real stores (InMemoryVectorStore, the Chroma
server) and the real bundled model.

Contract: a documented result (a list of at most k distinct, annotated copies) or a
ValueError naming the argument; never a deep exception; nothing the caller passed
(store, documents, nodes, kwargs dicts) is modified. Every case here meets it (the
ones that broke it when these tests were written were fixed; HOSTILE_CASES.md beside
this file lists them with the fixing commit).
"""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from reliability_checks import assert_unchanged, call_checked, snapshot

pytestmark = pytest.mark.slow

HOSTILE_TEXTS = [
    "The sun is a star at the centre of the solar system.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Plants need light, water and carbon dioxide to grow.",
    "Plants need light, water and carbon dioxide to grow.",  # duplicate text, other id
    "",  # empty document
    "   \n\t ",  # whitespace only
    "Ünïcödé: 光合作用は植物が光を使う過程です 🌱 — ف ي ز ي ا ء",
    "energy " * 15_000,  # ~100k characters
]
QUERY_NAMES = ("query", "input", "k", "fetch_k", "embeddings", "query_vector", "embedding")
BLANK_QUERIES = ("empty", "whitespace")  # refused by both adapters, as by the CLI
SPECIAL_QUERIES = {
    "empty": "",
    "whitespace": " \n\t ",
    "huge_100k": "Why do plants need light? " * 4_000,
    "non_ascii": "Почему растениям нужен свет? 植物为什么需要光？ 🌞",
    "nul_and_controls": "plants\x00need\x07light\x1b[0m",
    "rtl_and_combining": "ماء يغلي e\u0301\u0301\u0301 \u202eevil",
}
FEW = settings(max_examples=10, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class CorruptEmbeddings(Embeddings):
    """The real model, with its output corrupted in one way (``mode``)."""

    def __init__(self, inner: Embeddings, mode: str, *, queries: bool = True,
                 documents: bool = False) -> None:
        self.inner, self.mode = inner, mode
        self.queries, self.documents = queries, documents

    def corrupt(self, vector: list[float], position: int = 0):
        v = list(vector)
        if self.mode == "nan":
            v[0] = float("nan")
        elif self.mode == "inf":
            v[5] = float("inf")
        elif self.mode == "zero":
            v = [0.0] * len(v)
        elif self.mode == "short":
            v = v[:10]
        elif self.mode == "empty":
            v = []
        elif self.mode == "none":
            return None
        elif self.mode == "text":
            return "not a vector"
        elif self.mode == "ragged" and position % 2:
            v = v[:-1]
        return v

    def embed_query(self, text: str):
        out = self.inner.embed_query(text)
        return self.corrupt(out) if self.queries else out

    def embed_documents(self, texts: list[str]):
        out = self.inner.embed_documents(texts)
        return [self.corrupt(v, i) for i, v in enumerate(out)] if self.documents else out


def _ids(n: int) -> list[str]:
    return [f"hostile-{i}" for i in range(n)]


@pytest.fixture(scope="module")
def hostile_memory_store(embeddings):
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(embeddings)
    store.add_texts(HOSTILE_TEXTS, metadatas=[{"i": i} for i in range(len(HOSTILE_TEXTS))],
                    ids=_ids(len(HOSTILE_TEXTS)))
    return store


@pytest.fixture(scope="module")
def hostile_chroma_store(chroma_client, embeddings):
    """The same texts on the Chroma server, plus a record without a document."""
    from langchain_chroma import Chroma

    store = Chroma(collection_name="vrsd-reliability-hostile", embedding_function=embeddings,
                   client=chroma_client, collection_metadata={"hnsw:space": "cosine"})
    store.add_texts(HOSTILE_TEXTS, metadatas=[{"i": i} for i in range(len(HOSTILE_TEXTS))],
                    ids=_ids(len(HOSTILE_TEXTS)))
    store._collection.add(ids=["no-document"],
                          embeddings=[embeddings.embed_query("plants light water")])
    return store


@pytest.fixture(params=["memory", "chroma"])
def hostile_store(request):
    return request.getfixturevalue(f"hostile_{request.param}_store")


def store_snapshot(store):
    if hasattr(store, "_collection"):
        got = store._collection.get(include=["embeddings", "documents", "metadatas"])
        return (got["ids"], got["documents"], got["metadatas"],
                [list(v) for v in got["embeddings"]])
    return copy.deepcopy(store.store)


def check_entry(info: dict, rank: int) -> None:
    """One result's ``metadata["vrsd"]``: its fields, and the cosine within [-1, 1] (the
    relevance itself when the words were not used)."""
    optional = {"held_back", "lexical", "stopped", "linked_to", "copy_of"}
    assert info["rank"] == rank and set(info) - optional == {
        "rank", "relevance", "gain", "method", "cosine"}
    assert info.get("stopped") in (None, "restatements", "max_tokens", "max_per_group")
    assert -1.0 - 1e-6 <= info["cosine"] <= 1.0 + 1e-6 and math.isfinite(info["relevance"])
    assert "lexical" not in info or info["lexical"] >= 0.0


def expected_k(docs, k: int) -> None:
    """k results, or fewer only when the rest were copies of them (the store holds one text
    twice) and the entries say so."""
    assert len(docs) <= min(k, len(HOSTILE_TEXTS))
    if len(docs) < min(k, len(HOSTILE_TEXTS)):
        assert all(d.metadata["vrsd"].get("stopped") == "restatements" for d in docs)


def check_documents(docs, k: int, store_ids: set[str]) -> None:
    """The documented result: at most k distinct annotated copies from the store."""
    assert isinstance(docs, list) and len(docs) <= max(k, 0)
    assert all(isinstance(d, Document) for d in docs)
    ids = [d.id for d in docs]
    assert len(set(ids)) == len(ids), f"repeated documents {ids}"
    assert set(ids) <= store_ids
    held = []
    for rank, d in enumerate(docs):
        info = d.metadata["vrsd"]
        check_entry(info, rank)
        held += [e["id"] for e in info.get("held_back", [])]
    assert len(set(held)) == len(held) and not set(held) & set(ids)
    assert set(held) <= store_ids


# --------------------------------------------------------------------- LangChain: queries


@FEW
@given(query=st.text(max_size=400))
def test_lc_any_query_text(hostile_memory_store, query):
    from vrsd_langchain import DiverseRetriever

    before = store_snapshot(hostile_memory_store)
    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=3, fetch_k=6)
    docs, err = call_checked(lambda: retriever.invoke(query), QUERY_NAMES)
    assert_unchanged(before, store_snapshot(hostile_memory_store), "store")
    if not query.strip():  # nothing to be relevant to: refused, naming query
        assert err is not None and "the query is empty or only whitespace" in str(err), err
        return
    assert err is None, err
    check_documents(docs, 3, set(_ids(len(HOSTILE_TEXTS))))


@pytest.mark.parametrize("name", sorted(SPECIAL_QUERIES))
@pytest.mark.parametrize("method", ["vrsd", "dpp", "mmr"])
def test_lc_special_queries(hostile_store, name, method):
    from vrsd_langchain import DiverseRetriever

    before = store_snapshot(hostile_store)
    retriever = DiverseRetriever(vectorstore=hostile_store, k=4, fetch_k=9, method=method)
    if name in BLANK_QUERIES:
        with pytest.raises(ValueError, match="^query: the query is empty or only whitespace"):
            retriever.invoke(SPECIAL_QUERIES[name])
    else:
        docs = retriever.invoke(SPECIAL_QUERIES[name])
        check_documents(docs, 4, set(_ids(len(HOSTILE_TEXTS))))
        assert len(docs) == 4
    assert_unchanged(before, store_snapshot(hostile_store), "store")


def test_lc_lone_surrogate_query(hostile_memory_store):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=2, fetch_k=4)
    _, err = call_checked(lambda: retriever.invoke("plants \ud800 light"), ("query",))
    assert err is not None


@pytest.mark.parametrize("query", [None, 3, b"plants"], ids=["none", "int", "bytes"])
def test_lc_non_string_query(hostile_memory_store, query):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=2, fetch_k=4)
    _, err = call_checked(lambda: retriever.invoke(query), ("query",))
    assert err is not None


# --------------------------------------------------------------------- LangChain: k, fetch_k

hostile_count = st.one_of(
    st.integers(-5, 12),
    st.sampled_from([0, -1, 10**6, 10**9, 2**31, 10**30, 2.0, 2.5, float("nan"), True, None,
                     "3"]),
)


@FEW
@given(k=hostile_count, fetch_k=hostile_count)
def test_lc_k_and_fetch_k_per_call(hostile_memory_store, k, fetch_k):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=2, fetch_k=5)
    docs, err = call_checked(lambda: retriever.invoke("plants", k=k, fetch_k=fetch_k),
                             ("k", "fetch_k"))
    if err is None:
        assert isinstance(k, int) and isinstance(fetch_k, int) and 1 <= k <= fetch_k
        check_documents(docs, k, set(_ids(len(HOSTILE_TEXTS))))
        expected_k(docs, k)
    assert retriever.k == 2 and retriever.fetch_k == 5  # per-call values do not stick


@FEW
@given(k=hostile_count, fetch_k=hostile_count)
def test_lc_k_and_fetch_k_at_construction(hostile_memory_store, k, fetch_k):
    from vrsd_langchain import DiverseRetriever

    built, err = call_checked(
        lambda: DiverseRetriever(vectorstore=hostile_memory_store, k=k, fetch_k=fetch_k),
        ("k", "fetch_k"))
    if err is None:
        # As strict as invoke: no 2.0, "3" or True (pydantic's lax mode would coerce them).
        assert isinstance(k, int) and isinstance(fetch_k, int) and 1 <= k <= fetch_k
        assert not isinstance(k, bool) and not isinstance(fetch_k, bool)
        docs = built.invoke("plants")
        assert 1 <= built.k <= built.fetch_k
        check_documents(docs, built.k, set(_ids(len(HOSTILE_TEXTS))))


@pytest.mark.parametrize(("k", "fetch_k"), [(1, 1), (1, 5), (5, 5), (10**9, 10**9)])
def test_lc_counts_on_chroma(hostile_chroma_store, k, fetch_k):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_chroma_store, k=1, fetch_k=1)
    docs = retriever.invoke("plants", k=k, fetch_k=fetch_k)
    check_documents(docs, k, set(_ids(len(HOSTILE_TEXTS))))


@pytest.mark.parametrize("fetch_k", [2**63, 10**30], ids=["2**63", "10**30"])
def test_lc_huge_fetch_k_on_chroma(hostile_chroma_store, fetch_k):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_chroma_store, k=3, fetch_k=5)
    docs = retriever.invoke("plants", fetch_k=fetch_k)  # capped to Chroma's u32 n_results
    check_documents(docs, 3, set(_ids(len(HOSTILE_TEXTS))))
    assert len(docs) == 3


# --------------------------------------------------------------------- LangChain: embeddings

# The query vector is checked before the search (vrsd_kit.rerank.check_query_vector);
# a well-formed vector of the wrong dimension ("short": 10-d against 384-d) is caught by the
# fast path, before the search (InMemoryVectorStore) or from the store's refusal (Chroma).
_EMBEDDING_MODES = ("nan", "inf", "zero", "short", "empty", "none", "text")


@pytest.mark.parametrize(
    ("store_name", "mode"),
    [pytest.param(s, m, id=f"{s}-{m}") for s in ("memory", "chroma") for m in _EMBEDDING_MODES],
)
def test_lc_corrupt_query_embeddings(request, hf_embeddings, store_name, mode):
    """The query vector is checked before it reaches the store: ValueError naming it."""
    from vrsd_langchain import DiverseRetriever

    store = request.getfixturevalue(f"hostile_{store_name}_store")
    before = store_snapshot(store)
    retriever = DiverseRetriever(vectorstore=store,
                                 embeddings=CorruptEmbeddings(hf_embeddings, mode), k=2, fetch_k=5)
    try:
        docs, err = call_checked(lambda: retriever.invoke("plants"), QUERY_NAMES)
    finally:
        assert_unchanged(before, store_snapshot(store), "store")
    assert err is not None, f"corrupt query vector ({mode}) gave {docs!r}"
    assert str(err).startswith("embeddings:"), err


@pytest.mark.parametrize("mode", ["nan", "inf", "zero", "short", "ragged", "empty", "none",
                                  "text"])
def test_lc_compressor_corrupt_document_embeddings(hf_embeddings, mode):
    """DiverseCompressor embeds the documents it is given: corrupt document vectors end in a
    ValueError naming the argument, and the caller's documents are unchanged."""
    from vrsd_langchain import DiverseCompressor

    docs = [Document(page_content=t, metadata={"i": i}, id=f"c{i}")
            for i, t in enumerate(HOSTILE_TEXTS[:6])]
    before = snapshot(docs)
    compressor = DiverseCompressor(
        embeddings=CorruptEmbeddings(hf_embeddings, mode, queries=False, documents=True), k=3)
    out, err = call_checked(lambda: compressor.compress_documents(docs, "plants"),
                            ("candidates", "embeddings", "documents", "vectors"))
    assert_unchanged(before, docs, "documents")
    assert err is not None, f"corrupt document vectors ({mode}) gave {out!r}"


def test_lc_compressor_empty_and_duplicate_documents(embeddings):
    from vrsd_langchain import DiverseCompressor

    same = Document(page_content="Plants need light.", metadata={"i": 0}, id="same")
    docs = [same, same, Document(page_content="", id="empty"),
            Document(page_content="Plants need light.", id="twin"),
            Document(page_content="The sun is a star.", id="sun")]
    before = snapshot(docs)
    out = DiverseCompressor(embeddings=embeddings, k=5).compress_documents(docs, "plants")
    assert_unchanged(before, docs, "documents")
    # the repeated text comes back once: fewer than k rather than copies, and said so
    assert [d.page_content for d in out].count("Plants need light.") == 1 and len(out) == 3
    assert all(d.metadata["vrsd"]["stopped"] == "restatements" for d in out)
    filled = DiverseCompressor(embeddings=embeddings, k=5,
                               fill_with_copies=True).compress_documents(docs, "plants")
    assert len(filled) == 5 and all("vrsd" in d.metadata for d in filled)
    assert "vrsd" not in same.metadata
    assert DiverseCompressor(embeddings=embeddings, k=3).compress_documents([], "plants") == []


def test_lc_documents_without_content(hostile_chroma_store):
    """Chroma records without a document are skipped (as langchain-chroma does); empty and
    whitespace documents come back as they are."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_chroma_store, k=9, fetch_k=9)
    docs = retriever.invoke("plants light water")
    ids = [d.id for d in docs]
    # the duplicated text comes back once (fewer than k rather than a copy)
    assert "no-document" not in ids and len(ids) == len(HOSTILE_TEXTS) - 1
    assert len({"hostile-2", "hostile-3"} & set(ids)) == 1
    by_id = {d.id: d.page_content for d in docs}
    assert by_id["hostile-4"] == "" and by_id["hostile-5"] == HOSTILE_TEXTS[5]
    with pytest.raises(ValueError, match="page_content"):
        Document(page_content=None)


@pytest.mark.parametrize("name", ["filter", "where"])
def test_lc_malformed_chroma_filter(hostile_chroma_store, name):
    """The server refuses the filter (chromadb InvalidArgumentError 'Invalid where clause'):
    a ValueError naming the argument, with the store's exception as its cause."""
    from chromadb.errors import ChromaError

    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_chroma_store, k=2, fetch_k=4)
    _, err = call_checked(lambda: retriever.invoke("plants", **{name: {"$bogus": 1}}), (name,))
    assert err is not None and str(err).startswith(f"{name}:"), err
    assert isinstance(err.__cause__, ChromaError), repr(err.__cause__)


def test_lc_malformed_chroma_document_filter(hostile_chroma_store):
    """chromadb's client-side check (a ValueError naming no argument) is renamed too."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_chroma_store, k=2, fetch_k=4)
    _, err = call_checked(
        lambda: retriever.invoke("plants", where_document={"$bogus": "x"}), ("where_document",))
    assert err is not None and str(err).startswith("where_document:"), err
    assert err.__cause__ is not None


def test_lc_filter_of_the_wrong_kind(hostile_memory_store):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=2, fetch_k=4)
    with pytest.raises(ValueError, match="^filter"):
        retriever.invoke("plants", filter={"i": 1})
    with pytest.raises(ValueError, match="^nonsense"):
        retriever.invoke("plants", nonsense=1)


def test_lc_kwargs_and_returned_documents_not_shared(hostile_memory_store):
    """Dicts given to the retriever are not modified; returned documents are copies."""
    from vrsd_langchain import DiverseRetriever

    method_kwargs = {"lambda_mult": 0.3}
    search_kwargs = {"filter": lambda doc: doc.metadata["i"] != 0}
    kept = (dict(method_kwargs), dict(search_kwargs))
    retriever = DiverseRetriever(vectorstore=hostile_memory_store, k=3, fetch_k=6, method="mmr",
                              method_kwargs=method_kwargs, search_kwargs=search_kwargs)
    before = store_snapshot(hostile_memory_store)
    docs = retriever.invoke("plants", lambda_mult=0.9, k=2)
    assert (method_kwargs, search_kwargs) == kept
    assert retriever.method_kwargs == {"lambda_mult": 0.3}
    for d in docs:
        d.metadata["i"] = -1
        d.metadata["vrsd"]["rank"] = 99
    assert_unchanged(before, store_snapshot(hostile_memory_store), "store")


# --------------------------------------------------------------------- LlamaIndex

LI_NAMES = ("query_bundle", "query_str", "candidates", "query", "nodes", "top_n", "embedding",
            "embed_model")


@pytest.fixture(scope="module")
def li_nodes(embeddings):
    from llama_index.core.schema import NodeWithScore, TextNode

    vectors = embeddings.embed_documents(HOSTILE_TEXTS)
    return [NodeWithScore(node=TextNode(id_=f"n{i}", text=t, metadata={"i": i},
                                        embedding=list(v)), score=0.5)
            for i, (t, v) in enumerate(zip(HOSTILE_TEXTS, vectors, strict=True))]


def node_snapshot(nodes):
    return [(n.score, n.node.node_id, n.node.get_content(), dict(n.node.metadata),
             None if n.node.embedding is None else list(n.node.embedding),
             list(n.node.excluded_llm_metadata_keys)) for n in nodes]


def check_nodes(out, top_n: int, ids: set[str]) -> None:
    assert len(out) <= top_n
    got = [n.node.node_id for n in out]
    assert set(got) <= ids
    for rank, n in enumerate(out):
        check_entry(n.node.metadata["vrsd"], rank)  # 0-based, as in vrsd_langchain
        assert n.score == pytest.approx(n.node.metadata["vrsd"]["relevance"], rel=1e-9)


@FEW
@given(query=st.text(max_size=400))
def test_li_any_query_text(li_nodes, li_embed_model, query):
    from vrsd_llamaindex import DiversePostprocessor

    before = node_snapshot(li_nodes)
    post = DiversePostprocessor(top_n=3, embed_model=li_embed_model)
    out, err = call_checked(lambda: post.postprocess_nodes(li_nodes, query_str=query),
                            LI_NAMES)
    assert_unchanged(before, node_snapshot(li_nodes), "nodes")
    if err is None:
        check_nodes(out, 3, {n.node.node_id for n in li_nodes})
        assert len(out) == 3
    else:
        assert not query.strip(), err  # a blank query is refused, naming query_bundle


@pytest.mark.parametrize("name", sorted(SPECIAL_QUERIES))
def test_li_special_queries(li_nodes, li_embed_model, name):
    from vrsd_llamaindex import DiversePostprocessor

    before = node_snapshot(li_nodes)
    post = DiversePostprocessor(top_n=4, embed_model=li_embed_model)
    if name in BLANK_QUERIES:
        with pytest.raises(ValueError, match="^query_bundle: the query is empty or only white"):
            post.postprocess_nodes(li_nodes, query_str=SPECIAL_QUERIES[name])
    else:
        out = post.postprocess_nodes(li_nodes, query_str=SPECIAL_QUERIES[name])
        check_nodes(out, 4, {n.node.node_id for n in li_nodes})
        assert len(out) == 4
    assert_unchanged(before, node_snapshot(li_nodes), "nodes")


def _corrupt_nodes(nodes, case: str):
    nodes = copy.deepcopy(nodes)
    node = nodes[2].node
    if case == "nan_embedding":
        node.embedding = [float("nan")] + list(node.embedding[1:])
    elif case == "inf_embedding":
        node.embedding = [float("inf")] + list(node.embedding[1:])
    elif case == "short_embedding":
        node.embedding = list(node.embedding[:10])
    elif case == "zero_embedding":
        node.embedding = [0.0] * len(node.embedding)
    elif case == "all_short_embeddings":
        for n in nodes:
            n.node.embedding = list(n.node.embedding[:10])
    return nodes


@pytest.mark.parametrize("case", ["nan_embedding", "inf_embedding", "short_embedding",
                                  "zero_embedding", "all_short_embeddings"])
def test_li_corrupt_node_embeddings(li_nodes, li_embed_model, case):
    from vrsd_llamaindex import DiversePostprocessor

    nodes = _corrupt_nodes(li_nodes, case)
    before = node_snapshot(nodes)
    post = DiversePostprocessor(top_n=3, embed_model=li_embed_model)
    out, err = call_checked(lambda: post.postprocess_nodes(nodes, query_str="plants"),
                            LI_NAMES)
    assert_unchanged(before, node_snapshot(nodes), "nodes")
    assert err is not None, f"{case}: gave {out!r}"


@pytest.mark.parametrize("case", ["no_embeddings", "empty_text_no_embedding", "duplicate_ids",
                                  "same_node_twice", "scores_none", "huge_text_no_embedding"])
def test_li_odd_but_valid_nodes(li_nodes, li_embed_model, case):
    from llama_index.core.schema import NodeWithScore

    from vrsd_llamaindex import DiversePostprocessor

    nodes = copy.deepcopy(li_nodes)
    if case == "no_embeddings":
        for n in nodes:
            n.node.embedding = None
    elif case == "empty_text_no_embedding":
        nodes[4].node.embedding = None  # text ""
    elif case == "duplicate_ids":
        nodes[3].node.id_ = nodes[2].node.id_
    elif case == "same_node_twice":
        nodes[3] = nodes[2]
    elif case == "scores_none":
        nodes = [NodeWithScore(node=n.node, score=None) for n in nodes]
    elif case == "huge_text_no_embedding":
        nodes[7].node.embedding = None  # ~100k characters, re-embedded (truncated)
    before = node_snapshot(nodes)
    post = DiversePostprocessor(top_n=5, embed_model=li_embed_model)
    out = post.postprocess_nodes(nodes, query_str="plants")
    assert len(out) == 5
    assert len({id(n.node) for n in out}) == 5  # five distinct copies
    assert_unchanged(before, node_snapshot(nodes), "nodes")
    assert all("vrsd" not in n.node.metadata for n in nodes)


@pytest.mark.parametrize("top_n", [0, -1, 2.5, 2.0, True, None, "3", 10**9, 10**30])
def test_li_top_n(li_nodes, li_embed_model, top_n):
    from vrsd_llamaindex import DiversePostprocessor

    post, err = call_checked(lambda: DiversePostprocessor(top_n=top_n, embed_model=li_embed_model),
                             ("top_n",))
    strict_int = isinstance(top_n, int) and not isinstance(top_n, bool) and top_n >= 1
    assert (err is None) == strict_int, (top_n, err)
    if err is None:
        out = post.postprocess_nodes(li_nodes, query_str="plants")
        distinct = len({node.node.get_content() for node in li_nodes})  # copies come back once
        assert len(out) == min(int(top_n), distinct)


@pytest.mark.parametrize("embedding", [[float("nan")] * 384, [0.1] * 10, [], [0.0] * 384],
                         ids=["nan", "short", "empty", "zero"])
def test_li_corrupt_query_embedding(li_nodes, li_embed_model, embedding):
    from llama_index.core.schema import QueryBundle

    from vrsd_llamaindex import DiversePostprocessor

    post = DiversePostprocessor(top_n=3, embed_model=li_embed_model)
    out, err = call_checked(
        lambda: post.postprocess_nodes(li_nodes, query_bundle=QueryBundle("plants",
                                                                        embedding=embedding)),
        LI_NAMES)
    assert err is not None, f"query embedding {embedding[:3]}... gave {out!r}"


def test_li_lone_surrogate_query(li_nodes, li_embed_model):
    from vrsd_llamaindex import DiversePostprocessor

    post = DiversePostprocessor(top_n=2, embed_model=li_embed_model)
    _, err = call_checked(lambda: post.postprocess_nodes(li_nodes, query_str="plants \ud800"),
                          ("query_bundle",))
    assert err is not None
