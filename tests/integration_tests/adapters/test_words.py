"""The words in every adapter: the default reads the candidates' texts as well as their
vectors (``lexical=True``), shows both parts, and ``lexical=False`` gives the vectors only;
the setting is strict, an outside relevance or another method turns the words off, and
Haystack's ranker reads the query text from its ``query`` input (the demo corpus, the
bundled model)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from tests.helpers.words import default_selection
from vrsd_cli.demo import load_corpus
from vrsd_core import DEFAULT_METHOD, select

pytestmark = pytest.mark.slow

QUESTION = "How many moons does Jupiter have?"
K, FETCH_K = 4, 12


@pytest.fixture(scope="module")
def demo(lc_embeddings):
    passages = load_corpus()
    vectors = np.asarray(lc_embeddings.embed_documents([p.text for p in passages]))
    return passages, vectors


def pool(demo, query_vector):
    """The FETCH_K nearest passages (store order) and their vectors."""
    passages, vectors = demo
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    order = np.argsort(-(unit @ (query_vector / np.linalg.norm(query_vector))),
                       kind="stable")[:FETCH_K]
    return [passages[i] for i in order], vectors[order]


def with_words(demo, query_vector):
    found, vectors = pool(demo, query_vector)
    sel = default_selection(QUESTION, [p.text for p in found], query_vector, vectors, K)
    return [found[i].id for i in sel.indices], sel


def vectors_only(demo, query_vector):
    found, vectors = pool(demo, query_vector)
    sel = select(query_vector, vectors, K, method=DEFAULT_METHOD)
    return [found[i].id for i in sel.indices], sel


def check_parts(entries, sel):
    """Each entry shows the cosine and the BM25 score; relevance is the fused value."""
    for entry, relevance in zip(entries, sel.relevance, strict=True):
        assert {"cosine", "lexical"} <= set(entry)
        assert -1.0 <= entry["cosine"] <= 1.0 and entry["lexical"] >= 0.0
        assert entry["relevance"] == pytest.approx(float(relevance), rel=1e-6, abs=1e-9)


@pytest.fixture(scope="module")
def lc_store(demo, lc_embeddings):
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(lc_embeddings)
    store.add_documents([Document(page_content=p.text, id=p.id) for p in demo[0]])
    return store


def test_langchain_retriever_compressor_and_search_type(demo, lc_store, lc_embeddings):
    from vrsd_langchain import DiverseCompressor, DiverseRetriever, DiverseVectorStore

    qvec = np.asarray(lc_embeddings.embed_query(QUESTION))
    want, sel = with_words(demo, qvec)
    plain, _ = vectors_only(demo, qvec)
    assert want != plain  # the question's words change the picks on this question
    retriever = DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K)
    got = retriever.invoke(QUESTION)
    assert [d.id for d in got] == want
    check_parts([d.metadata["vrsd"] for d in got], sel)
    # off per call, off at construction, through as_retriever: the vectors only
    for docs in (retriever.invoke(QUESTION, lexical=False),
                 DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K,
                               lexical=False).invoke(QUESTION),
                 DiverseVectorStore(lc_store).as_retriever(
                     search_type=DEFAULT_METHOD,
                     search_kwargs={"k": K, "fetch_k": FETCH_K, "lexical": False}
                 ).invoke(QUESTION)):
        assert [d.id for d in docs] == plain
        assert "lexical" not in docs[0].metadata["vrsd"]  # the cosine alone: the relevance
    # the compressor over the same candidates reads the same words
    found, _ = pool(demo, qvec)
    from langchain_core.documents import Document

    compressor = DiverseCompressor(embeddings=lc_embeddings, k=K)
    kept = compressor.compress_documents([Document(page_content=p.text, id=p.id) for p in found],
                                         QUESTION)
    assert [d.id for d in kept] == want


async def test_langchain_async_reads_the_same_words(lc_store):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K)
    got = await retriever.ainvoke(QUESTION)
    assert [d.id for d in got] == [d.id for d in retriever.invoke(QUESTION)]


def test_other_methods_and_outside_relevance_do_not_read_the_words(lc_store):
    from vrsd_langchain import DiverseRetriever

    mmr = DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K, method="mmr")
    entry = mmr.invoke(QUESTION)[0].metadata["vrsd"]
    assert "lexical" not in entry and entry["cosine"] == pytest.approx(entry["relevance"])
    scored = DiverseRetriever(vectorstore=lc_store, k=K, fetch_k=FETCH_K,
                           relevance=lambda q, docs: [float(len(d.page_content)) for d in docs])
    entry = scored.invoke(QUESTION)[0].metadata["vrsd"]
    assert "lexical" not in entry and -1.0 <= entry["cosine"] <= 1.0  # relevance: the length


@pytest.mark.parametrize("bad", ["no", 0, 1, None])
def test_the_switch_is_a_bool_in_every_adapter(lc_store, lc_embeddings, bad):
    from vrsd_haystack import DiverseRanker
    from vrsd_langchain import DiverseCompressor, DiverseRetriever
    from vrsd_llamaindex import DiversePostprocessor

    for build in (lambda: DiverseRetriever(vectorstore=lc_store, lexical=bad),
                  lambda: DiverseCompressor(embeddings=lc_embeddings, lexical=bad),
                  lambda: DiversePostprocessor(lexical=bad),
                  lambda: DiverseRanker(lexical=bad)):
        with pytest.raises(ValueError, match="lexical"):
            build()
    with pytest.raises(ValueError, match="lexical"):
        DiverseRetriever(vectorstore=lc_store).invoke(QUESTION, lexical=bad)


def test_llamaindex_postprocessor_and_retriever(demo, li_embed_model):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

    index = VectorStoreIndex([TextNode(text=p.text, id_=p.id) for p in demo[0]],
                             embed_model=li_embed_model)
    qvec = np.asarray(li_embed_model.get_query_embedding(QUESTION))
    want, sel = with_words(demo, qvec)
    plain, _ = vectors_only(demo, qvec)
    nodes = index.as_retriever(similarity_top_k=FETCH_K).retrieve(QUESTION)
    for lexical, expected in ((True, want), (False, plain)):
        post = DiversePostprocessor(top_n=K, embed_model=li_embed_model, lexical=lexical,
                                 vector_store=index.vector_store)
        kept = post.postprocess_nodes(nodes, query_str=QUESTION)
        assert [n.node.node_id for n in kept] == expected
        if lexical:
            check_parts([n.node.metadata["vrsd"] for n in kept], sel)
            assert [n.score for n in kept] == pytest.approx(
                [n.node.metadata["vrsd"]["relevance"] for n in kept], rel=1e-9)
        retriever = DiverseRerankRetriever(index.as_retriever(), top_n=K, fetch_k=FETCH_K,
                                  lexical=lexical)
        assert [n.node.node_id for n in retriever.retrieve(QUESTION)] == expected


def test_haystack_ranker_reads_the_query_input(demo, lc_embeddings):
    from haystack import Document, Pipeline

    from vrsd_haystack import DiverseRanker

    qvec = np.asarray(lc_embeddings.embed_query(QUESTION))
    found, vectors = pool(demo, qvec)
    docs = [Document(id=p.id, content=p.text, embedding=v.tolist())
            for p, v in zip(found, vectors, strict=True)]
    want, sel = with_words(demo, qvec)
    plain, _ = vectors_only(demo, qvec)
    ranker = DiverseRanker(top_k=K)
    out = ranker.run(documents=docs, query_embedding=qvec.tolist(), query=QUESTION)["documents"]
    assert [d.id for d in out] == want
    check_parts([d.meta["vrsd"] for d in out], sel)
    # without the query text: the vectors only, said once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            out = ranker.run(documents=docs, query_embedding=qvec.tolist())["documents"]
            assert [d.id for d in out] == plain
    said = [w for w in caught if "no query text" in str(w.message)]
    assert len(said) == 1 and said[0].filename == __file__
    # lexical=False is quiet, and the setting survives a pipeline's YAML
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = DiverseRanker(top_k=K, lexical=False)
        assert [d.id for d in quiet.run(documents=docs,
                                        query_embedding=qvec.tolist())["documents"]] == plain
    pipe = Pipeline()
    pipe.add_component("ranker", quiet)
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=["vrsd_haystack"])
    assert loaded.get_component("ranker").lexical is False
