"""What the default held back reaches the user, readable and true: each kept item's
``metadata["vrsd"]["held_back"]`` lists the candidates plain top-k (by the same
relevance, the vectors' and the words') would have returned and the default left out,
each once, as ``{"id", "rank", "relation", "source", "excerpt"}`` (and ``share`` for a
copy), in LangChain, LlamaIndex and Haystack alike.

The corpus is the demo's (paraphrases: different words for one fact, which the
relation does not call restatements) plus a near-copy of one passage (its first word
dropped, as an overlapping chunk would): the copy or its original is held back as
"restates" or "contains" under the other; the rest are "displaced" under the pick that took their
slot. The expectation is computed here from the texts, independently of
``vrsd_kit.rerank``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from vrsd_cli.demo import load_corpus

pytestmark = pytest.mark.slow

QUESTION = "What is caffeine's half-life?"
K, FETCH_K = 4, 12
COPIED = "coffee-02a"


def corpus() -> list[tuple[str, str]]:
    """(id, text) of the demo corpus and a near-copy of COPIED."""
    passages = [(p.id, p.text) for p in load_corpus()]
    text = dict(passages)[COPIED]
    return passages + [(f"{COPIED}-copy", text.split(" ", 1)[1])]


def pairs(text: str) -> set[tuple[str, ...]]:
    """Consecutive words within a sentence or line (a one-word sentence: that word)."""
    out: set[tuple[str, ...]] = set()
    for sentence in re.split(r"[.!?;\n]+", text):
        words = re.findall(r"\w+", sentence.casefold())
        out.update(zip(words, words[1:], strict=False))
        if len(words) == 1:
            out.add((words[0],))
    return out


def expected(kept: list[str], text: dict[str, str], query_vector, vectors: dict[str, np.ndarray]
             ) -> dict[str, list[tuple[str, int, str]]]:
    """{kept id: [(held id, top-k rank, relation)]} from the texts: top-k by the
    default's relevance over the same pool; each word pair weighs 1 / the number of the
    pool's passages holding it; a held-back passage restates the kept one holding >= 90 %
    of its weighted pairs, contains the one whose pairs it holds >= 90 % of (the larger
    share wins), else it is displaced by the next newcomer."""
    from vrsd_core import pool_units, select
    from vrsd_kit.lexical import pool_relevance

    q = np.asarray(query_vector) / np.linalg.norm(query_vector)
    ids = list(text)
    matrix = np.stack([vectors[i] for i in ids])
    pool = [ids[i] for i in np.argsort(-(matrix @ q), kind="stable")[:FETCH_K]]
    pool_vectors = np.stack([vectors[i] for i in pool])
    words = pool_units(pool_relevance(QUESTION, [text[i] for i in pool], q, pool_vectors).signals)
    top = [pool[i] for i in select(q, pool_vectors, K, method="similarity",
                                   relevance=words).indices]
    held_by: dict[tuple[str, ...], int] = {}
    for i in pool:
        for pair in pairs(text[i]):
            held_by[pair] = held_by.get(pair, 0) + 1

    def share(a: str, b: str) -> float:
        mine = pairs(text[a])
        return (sum(1 / held_by[p] for p in mine & pairs(text[b]))
                / sum(1 / held_by[p] for p in mine)) if mine else 0.0

    newcomers = iter([i for i in kept if i not in top])
    under: dict[str, list[tuple[str, int, str]]] = {i: [] for i in kept}
    for rank, held in enumerate(top, start=1):
        if held in kept:
            continue
        found = max(((s, relation, i) for i in kept for relation, s in (
            ("restates", share(held, i)), ("contains", share(i, held)))),
            key=lambda found: found[0])
        if found[0] >= 0.9:
            under[found[2]].append((held, rank, found[1]))
        else:
            under[next(newcomers)].append((held, rank, "displaced"))
    return under


def check(kept: dict[str, list[dict]], text: dict[str, str], query_vector, vectors) -> None:
    got = {i: [(e["id"], e["rank"], e["relation"]) for e in entries]
           for i, entries in kept.items()}
    assert got == expected(list(kept), text, query_vector, vectors)
    relations = [e["relation"] for entries in kept.values() for e in entries]
    assert {"restates", "contains"} & set(relations), "the near-copy and its original"
    for keeper, entries in kept.items():
        for e in entries:
            assert e["source"] == f"{e['id']}.txt"
            assert text[e["id"]].startswith(e["excerpt"].removesuffix("…"))
            if e["relation"] in ("restates", "contains"):
                assert {e["id"], keeper} == {COPIED, f"{COPIED}-copy"}
                assert 0.9 <= e["share"] <= 1.0
            else:
                assert "share" not in e


@pytest.fixture(scope="module")
def vectors(lc_embeddings) -> dict[str, np.ndarray]:
    ids, texts = zip(*corpus(), strict=True)
    found = np.asarray(lc_embeddings.embed_documents(list(texts)))
    return dict(zip(ids, found / np.linalg.norm(found, axis=1, keepdims=True), strict=True))


def test_langchain(vectors, lc_embeddings):
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import DiverseRetriever

    store = InMemoryVectorStore(lc_embeddings)
    store.add_documents([Document(page_content=t, id=i, metadata={"source": f"{i}.txt"})
                         for i, t in corpus()])
    docs = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K).invoke(QUESTION)
    check({d.id: d.metadata["vrsd"]["held_back"] for d in docs}, dict(corpus()),
          lc_embeddings.embed_query(QUESTION), vectors)


def test_llamaindex(vectors, li_embed_model):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from vrsd_llamaindex import DiversePostprocessor

    index = VectorStoreIndex([TextNode(text=t, id_=i, metadata={"file_path": f"{i}.txt"},
                                       excluded_embed_metadata_keys=["file_path"],
                                       excluded_llm_metadata_keys=["file_path"])
                              for i, t in corpus()], embed_model=li_embed_model)
    nodes = index.as_retriever(similarity_top_k=FETCH_K).retrieve(QUESTION)
    kept = DiversePostprocessor(top_n=K, embed_model=li_embed_model,
                             vector_store=index.vector_store).postprocess_nodes(
        nodes, query_str=QUESTION)
    check({n.node.node_id: n.node.metadata["vrsd"]["held_back"] for n in kept},
          dict(corpus()), li_embed_model.get_query_embedding(QUESTION), vectors)


def test_haystack(vectors, lc_embeddings):
    from haystack import Document

    from vrsd_haystack import DiverseRanker

    q = np.asarray(lc_embeddings.embed_query(QUESTION))
    ids = list(vectors)
    matrix = np.stack([vectors[i] for i in ids])
    pool = [ids[i] for i in np.argsort(-(matrix @ (q / np.linalg.norm(q))), kind="stable")
            [:FETCH_K]]
    text = dict(corpus())
    docs = [Document(id=i, content=text[i], embedding=vectors[i].tolist(),
                     meta={"file_path": f"{i}.txt"}) for i in pool]
    out = DiverseRanker(top_k=K).run(documents=docs, query_embedding=q.tolist(),
                                  query=QUESTION)["documents"]
    check({d.id: d.meta["vrsd"]["held_back"] for d in out}, text, q, vectors)
