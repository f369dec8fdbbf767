"""What the default held back reaches the user: each kept item's ``metadata["vrsd"]
["held_back"]`` names, by id, the candidates top-k by the same relevance (the vectors'
and the words') would have returned that the default left out, each under the kept
item closest to it, in LangChain, LlamaIndex and Haystack alike (the demo corpus,
whose paraphrases share an id stem, and the bundled model)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from vrsd_cli.demo import fact_of, load_corpus

pytestmark = pytest.mark.slow

QUESTION = "Is coffee bad for sleep?"
K, FETCH_K = 4, 12


@pytest.fixture(scope="module")
def demo(lc_embeddings):
    passages = load_corpus()
    vectors = np.asarray(lc_embeddings.embed_documents([p.text for p in passages]))
    return passages, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def expected(demo, query_vector):
    """(top-k ids by the default's relevance, {kept id: ids held back under it}) computed
    from the vectors and the texts."""
    from tests.helpers.words import default_selection
    from vrsd_core import select
    from vrsd_kit.lexical import pool_relevance

    passages, vectors = demo
    q = np.asarray(query_vector) / np.linalg.norm(query_vector)
    pool = np.argsort(-(vectors @ q), kind="stable")[:FETCH_K]
    texts = [passages[i].text for i in pool]
    sel = default_selection(QUESTION, texts, q, vectors[pool], K)
    words = pool_relevance(QUESTION, texts, q, vectors[pool]).signals
    by_relevance = select(q, vectors[pool], K, method="similarity", relevance=words).indices
    under: dict[str, list[str]] = {passages[pool[p]].id: [] for p in sel.indices}
    for j, p in sel.info["held_back"].items():
        under[passages[pool[p]].id].append(passages[pool[j]].id)
    return [passages[pool[i]].id for i in by_relevance], under


def check(kept: dict[str, list[str]], top: list[str], under: dict[str, list[str]]) -> None:
    assert kept == under
    held = [i for ids in kept.values() for i in ids]
    assert held, "the question's top-k repeats a fact: something is held back"
    assert set(held) == set(top) - set(kept)
    # on this question what is held back restates the kept passage it is listed under
    for keeper, ids in kept.items():
        assert all(fact_of(i) == fact_of(keeper) for i in ids)


def test_langchain(demo, lc_embeddings):
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_langchain import VRSDRetriever

    passages, _ = demo
    store = InMemoryVectorStore(lc_embeddings)
    store.add_documents([Document(page_content=p.text, id=p.id) for p in passages])
    docs = VRSDRetriever(vectorstore=store, k=K, fetch_k=FETCH_K).invoke(QUESTION)
    top, under = expected(demo, lc_embeddings.embed_query(QUESTION))
    check({d.id: d.metadata["vrsd"]["held_back"] for d in docs}, top, under)


def test_llamaindex(demo, li_embed_model):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from vrsd_llamaindex import VRSDPostprocessor

    passages, _ = demo
    index = VectorStoreIndex([TextNode(text=p.text, id_=p.id) for p in passages],
                             embed_model=li_embed_model)
    nodes = index.as_retriever(similarity_top_k=FETCH_K).retrieve(QUESTION)
    kept = VRSDPostprocessor(top_n=K, embed_model=li_embed_model,
                             vector_store=index.vector_store).postprocess_nodes(
        nodes, query_str=QUESTION)
    top, under = expected(demo, li_embed_model.get_query_embedding(QUESTION))
    check({n.node.node_id: n.node.metadata["vrsd"]["held_back"] for n in kept}, top, under)


def test_haystack(demo, lc_embeddings):
    from haystack import Document

    from vrsd_haystack import VRSDRanker

    passages, vectors = demo
    q = np.asarray(lc_embeddings.embed_query(QUESTION))
    pool = np.argsort(-(vectors @ (q / np.linalg.norm(q))), kind="stable")[:FETCH_K]
    docs = [Document(id=passages[i].id, content=passages[i].text, embedding=vectors[i].tolist())
            for i in pool]
    out = VRSDRanker(top_k=K).run(documents=docs, query_embedding=q.tolist(),
                                  query=QUESTION)["documents"]
    top, under = expected(demo, q)
    check({d.id: d.meta["vrsd"]["held_back"] for d in out}, top, under)
