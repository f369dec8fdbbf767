"""Every promise of docs/adapters.md, walked through every adapter from one table:
misspelt keywords refused, counts and token budgets below 1 refused, copies returned
(the caller's documents unchanged), the selection order, and a user's own ``"vrsd"``
metadata kept (the entry beside it, or under ``metadata_key``), warned once.

Each adapter is one ``Adapter`` row: how to build it with settings and run it on
documents carrying given metadata. Deterministic embeddings, in-memory stores only.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

import vrsd_kit.rerank as rerank_module

TEXTS = ["plants need light", "plants need water", "cats sleep a lot", "rome was an empire",
         "bread dough rises", "light travels fast"]
QUERY = "what do plants need"
EMB = DeterministicFakeEmbedding(size=16)
VECTORS = EMB.embed_documents(TEXTS)
QUERY_VECTOR = EMB.embed_query(QUERY)
K = 3


def metadatas(user_vrsd: Any = None) -> list[dict[str, Any]]:
    """Each text's metadata: a source, and the user's own ``"vrsd"`` value when given."""
    base = [{"source": f"s{i}", "nested": {"i": i}} for i in range(len(TEXTS))]
    if user_vrsd is not None:
        for meta in base:
            meta["vrsd"] = copy.deepcopy(user_vrsd)
    return base


# A run: (count, settings, the documents' metadata) -> (the results' metadata in the
# returned order, the caller's documents' metadata read again after the run).
Run = Callable[[int, dict[str, Any], list[dict[str, Any]]], tuple[list[dict], list[dict]]]


@dataclass(frozen=True)
class Adapter:
    name: str
    count: str  # its keyword for how many to keep
    run: Run


def _lc_store(metas: list[dict[str, Any]]) -> InMemoryVectorStore:
    store = InMemoryVectorStore(EMB)
    store.add_documents([Document(t, metadata=m, id=str(i))
                         for i, (t, m) in enumerate(zip(TEXTS, metas, strict=True))])
    return store


def _store_metadata(store: InMemoryVectorStore) -> list[dict]:
    return [d.metadata for d in store.get_by_ids([str(i) for i in range(len(TEXTS))])]


def run_lc_retriever(count, settings, metas):
    from vrsd_langchain import DiverseRetriever

    store = _lc_store(metas)
    out = DiverseRetriever(vectorstore=store, k=count, fetch_k=len(TEXTS), **settings).invoke(QUERY)
    return [d.metadata for d in out], _store_metadata(store)


def dvs_run(search_type: str) -> Run:
    def run(count, settings, metas):
        from vrsd_langchain import DiverseVectorStore

        store = _lc_store(metas)
        retriever = DiverseVectorStore(store).as_retriever(
            search_type=search_type,
            search_kwargs={"k": count, "fetch_k": len(TEXTS), **settings})
        return [d.metadata for d in retriever.invoke(QUERY)], _store_metadata(store)
    return run


def run_lc_compressor(count, settings, metas):
    from vrsd_langchain import DiverseCompressor

    docs = [Document(t, metadata=m, id=str(i))
            for i, (t, m) in enumerate(zip(TEXTS, metas, strict=True))]
    out = DiverseCompressor(embeddings=EMB, k=count, **settings).compress_documents(docs, QUERY)
    return [d.metadata for d in out], [d.metadata for d in docs]


def _li_nodes(metas):
    from llama_index.core.schema import TextNode

    return [TextNode(text=t, metadata=m, embedding=v, id_=str(i))
            for i, (t, m, v) in enumerate(zip(TEXTS, metas, VECTORS, strict=True))]


def run_li_postprocessor(count, settings, metas):
    from llama_index.core.schema import NodeWithScore, QueryBundle

    from vrsd_llamaindex import DiversePostprocessor

    nodes = [NodeWithScore(node=n, score=1.0) for n in _li_nodes(metas)]
    out = DiversePostprocessor(top_n=count, **settings).postprocess_nodes(
        nodes, query_bundle=QueryBundle(QUERY, embedding=QUERY_VECTOR))
    run_li_postprocessor.last = out  # for the excluded-keys check
    return [n.node.metadata for n in out], [n.node.metadata for n in nodes]


def run_li_retriever(count, settings, metas):
    from llama_index.core import SummaryIndex
    from llama_index.core.schema import QueryBundle

    from vrsd_llamaindex import DiverseRerankRetriever

    nodes = _li_nodes(metas)
    index = SummaryIndex(nodes)
    out = DiverseRerankRetriever(index.as_retriever(), top_n=count, **settings).retrieve(
        QueryBundle(QUERY, embedding=QUERY_VECTOR))
    stored = [index.docstore.get_node(str(i)).metadata for i in range(len(TEXTS))]
    return [n.node.metadata for n in out], stored


def run_haystack(count, settings, metas):
    from haystack import Document as HDocument

    from vrsd_haystack import DiverseRanker

    docs = [HDocument(content=t, meta=m, embedding=v, id=str(i))
            for i, (t, m, v) in enumerate(zip(TEXTS, metas, VECTORS, strict=True))]
    ranker = DiverseRanker(top_k=count, **settings)
    ranker = DiverseRanker.from_dict(ranker.to_dict())  # what a saved pipeline runs
    out = ranker.run(documents=docs, query_embedding=QUERY_VECTOR, query=QUERY)["documents"]
    return [d.meta for d in out], [d.meta for d in docs]


ADAPTERS = [
    Adapter("langchain DiverseRetriever", "k", run_lc_retriever),
    *(Adapter(f"DiverseVectorStore {t}", "k", dvs_run(t)) for t in ("complement", "mmr", "dpp")),
    Adapter("langchain DiverseCompressor", "k", run_lc_compressor),
    Adapter("llamaindex DiversePostprocessor", "top_n", run_li_postprocessor),
    Adapter("llamaindex DiverseRerankRetriever", "top_n", run_li_retriever),
    Adapter("haystack DiverseRanker", "top_k", run_haystack),
]
IDS = [a.name for a in ADAPTERS]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """The taken-key warning is once per process: each test starts with none given."""
    monkeypatch.setattr(rerank_module, "_warned_taken", set())


def annotated(adapter: Adapter, settings: dict[str, Any] | None = None,
              metas: list[dict[str, Any]] | None = None) -> tuple[list[dict], list[dict]]:
    return adapter.run(K, settings or {}, metas if metas is not None else metadatas())


# ----------------------------------------------------------------- refusals


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
@pytest.mark.parametrize(("bad", "closest"), [("max_token", "max_tokens"),
                                              ("metadatakey", "metadata_key")])
def test_a_misspelt_keyword_is_refused(adapter, bad, closest):
    with pytest.raises(ValueError) as caught:
        annotated(adapter, {bad: 10})
    assert f"{bad}: " in str(caught.value) and f"did you mean {closest}?" in str(caught.value)


@pytest.mark.parametrize("search_type", ["similarity", "similarity_score_threshold"])
def test_the_stock_search_types_refuse_a_misspelt_keyword(search_type):
    """LangChain's own rule (the store's search), but a typo is not passed on silently."""
    from vrsd_langchain import DiverseVectorStore

    wrapped = DiverseVectorStore(_lc_store(metadatas()))
    valid = {"k": 2, "score_threshold": 0.0}
    for typo, closest in (("fetchk", "fetch_k"), ("lamda_mult", "lambda_mult"),
                          ("filtr", "filter")):
        with pytest.raises(ValueError, match=f"{typo}: .*did you mean {closest}\\?"):
            wrapped.as_retriever(search_type=search_type, search_kwargs={**valid, typo: 4})
    retriever = wrapped.as_retriever(search_type=search_type, search_kwargs=valid)
    with pytest.raises(ValueError, match="^fetchk: .*did you mean fetch_k\\?"):
        retriever.invoke(QUERY, fetchk=3)
    with pytest.raises(ValueError, match="^fetchk: .*did you mean fetch_k\\?"):
        asyncio.run(retriever.ainvoke(QUERY, fetchk=3))
    with pytest.raises(ValueError, match="^fetchk: .*did you mean fetch_k\\?"):
        wrapped.search(QUERY, search_type, k=2, fetchk=3)
    # vrsd's own settings would do nothing there: refused, naming the search type to use
    for own, value in (("max_tokens", 0), ("max_tokens", 100), ("lexical", False),
                       ("method", "mmr"), ("group_by", "source")):
        with pytest.raises(ValueError, match=f"{own}: a setting of vrsd.s own search types"):
            wrapped.as_retriever(search_type=search_type, search_kwargs={**valid, own: value})
        with pytest.raises(ValueError, match=f"^{own}: .*search_type='complement'"):
            retriever.invoke(QUERY, **{own: value})
    if search_type == "similarity":  # (InMemoryVectorStore has no relevance scores)
        out = retriever.invoke(QUERY)  # LangChain's own search, as the store gives it
        assert out == InMemoryVectorStore.similarity_search(wrapped.wrapped_vectorstore,
                                                            QUERY, k=2)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_a_count_below_one_is_refused(adapter):
    with pytest.raises(ValueError, match=rf"\b{adapter.count}: expected an integer >= 1, got 0"):
        adapter.run(0, {}, metadatas())


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
@pytest.mark.parametrize("budget", [0, -1])
def test_a_budget_below_one_token_is_refused(adapter, budget):
    with pytest.raises(ValueError, match=rf"max_tokens: expected an integer >= 1, got {budget}"):
        annotated(adapter, {"max_tokens": budget})


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_an_empty_metadata_key_is_refused(adapter):
    with pytest.raises(ValueError, match="metadata_key: expected a non-empty string"):
        annotated(adapter, {"metadata_key": ""})


def test_the_command_line_refuses_a_budget_below_one_token(capsys):
    from vrsd_eval.budget import parse_budgets

    with pytest.raises(ValueError, match="^budgets: expected integers >= 1"):
        parse_budgets("0,228")
    assert parse_budgets("1,228") == [1, 228]


# ----------------------------------------------------------------- what comes back


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_copies_in_selection_order_and_the_callers_documents_unchanged(adapter):
    metas = metadatas(user_vrsd=None)
    before = copy.deepcopy(metas)
    out, after = annotated(adapter, metas=metas)
    assert len(out) == K
    assert [m["vrsd"]["rank"] for m in out] == list(range(K))
    assert after == before  # the caller's (and the store's) documents are not changed
    out[0]["added"] = "by the user"  # each result's metadata is a dict of its own
    assert metas == before and after == before


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_metadata_values_that_cannot_be_copied_come_back_as_they_are(adapter):
    """A lock (or a client, an open file) in the metadata: the result carries the same
    object, as the store's own search returns it; nothing is deep-copied (a lock cannot
    be: ``cannot pickle '_thread.lock' object``), and the caller's documents are
    unchanged."""
    lock = threading.Lock()
    metas = [{**meta, "lock": lock} for meta in metadatas()]
    before = [{k: v for k, v in meta.items() if k != "lock"} for meta in metas]
    out, after = annotated(adapter, metas=metas)
    assert len(out) == K
    assert all(m["lock"] is lock for m in out)
    assert [m["vrsd"]["rank"] for m in out] == list(range(K))
    assert all(m["lock"] is lock for m in after)
    assert [{k: v for k, v in m.items() if k != "lock"} for m in after] == before


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_a_budget_of_one_token_or_more_is_honoured(adapter):
    # each page_content is 3 or 4 approximate tokens (LlamaIndex counts the LLM text, with
    # the metadata): a budget of 8 cannot hold K of them
    out, _ = annotated(adapter, {"max_tokens": 8})
    assert len(out) < K
    assert len(annotated(adapter, {"max_tokens": 1000})[0]) == K


# ----------------------------------------------------------------- the user's own "vrsd"


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_a_users_own_vrsd_value_is_kept_and_the_entry_goes_beside_it(adapter):
    user_value = {"owner": "me", "rank": "mine"}  # not an entry vrsd wrote (no "method")
    metas = metadatas(user_vrsd=user_value)
    before = copy.deepcopy(metas)
    with pytest.warns(UserWarning, match="already has a key 'vrsd' .* under 'vrsd_'") as seen:
        out, after = annotated(adapter, metas=metas)
    assert len([w for w in seen if "metadata_key" in str(w.message)]) == 1  # warned once
    assert all(m["vrsd"] == user_value for m in out)
    assert [m["vrsd_"]["rank"] for m in out] == list(range(K))
    assert after == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: the second run is silent
        annotated(adapter, metas=metas)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_metadata_key_names_the_entry(adapter):
    out, _ = annotated(adapter, {"metadata_key": "why"}, metadatas(user_vrsd="mine"))
    assert all(m["vrsd"] == "mine" and m["why"]["method"] for m in out)
    assert [m["why"]["rank"] for m in out] == list(range(K))


def test_an_entry_vrsd_wrote_is_replaced_not_moved():
    """A result passed through vrsd twice (a retriever, then a compressor) has one entry."""
    from vrsd_langchain import DiverseCompressor, DiverseRetriever

    first = DiverseRetriever(vectorstore=_lc_store(metadatas()), k=K, fetch_k=len(TEXTS),
                          method="mmr").invoke(QUERY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = DiverseCompressor(embeddings=EMB, k=2).compress_documents(first, QUERY)
    assert [sorted(k for k in d.metadata if k.startswith("vrsd")) for d in again] == [["vrsd"]] * 2
    assert {d.metadata["vrsd"]["method"] for d in again} == {"complement"}


def test_llamaindex_excludes_whichever_key_holds_the_entry():
    run_li_postprocessor(K, {}, metadatas(user_vrsd="mine"))
    for item in run_li_postprocessor.last:
        node = item.node
        assert "vrsd_" in node.excluded_llm_metadata_keys
        assert "vrsd_" in node.excluded_embed_metadata_keys
        assert "vrsd_" not in node.get_content(metadata_mode="llm")


def test_haystack_saves_metadata_key():
    from vrsd_haystack import DiverseRanker

    data = DiverseRanker(top_k=2, metadata_key="why").to_dict()
    assert data["init_parameters"]["metadata_key"] == "why"
    assert DiverseRanker.from_dict(data).metadata_key == "why"
