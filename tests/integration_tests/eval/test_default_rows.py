"""Every protocol's default rows pick what the adapters return, on pools holding copies:
the evidence protocol's (``select_rows``, also under a token budget) against
``DiverseRetriever`` over the same FAISS store, and the Haystack protocol's against
``DiverseRanker`` and ``DiversePostprocessor`` given the same candidates (LSA: no model
to load). A published default row is what a user gets."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_eval.evidence import WORDS_ROWS, load_evidence_corpora

LIMIT, FETCH, KS = 5, 20, (2, 4, 10)


@pytest.fixture(scope="module")
def redundant(data_dir):
    """The redundant corpus (each paragraph beside its copy without the first sentence),
    its LSA embeddings and its pools."""
    pytest.importorskip("sklearn")
    from vrsd_eval.geometries import geometry
    from vrsd_eval.pools import build_pools

    corpus = next(c for c in load_evidence_corpora(data_dir, limit=LIMIT)
                  if c.name == "redundant")
    embeddings = geometry("lsa").fit(corpus.texts)
    pools = build_pools(corpus.texts, corpus.questions, embeddings, FETCH, show=False)
    return corpus, pools


def test_the_pools_hold_copies(redundant):
    from vrsd_kit.lexical import Judge

    _, pools = redundant
    assert all(Judge(texts).copies().sum() > len(texts) for texts in pools.texts)


@pytest.mark.parametrize("row", ["default", "default-vectors"])
def test_evidence_default_rows_equal_the_retriever(redundant, row):
    from vrsd_eval.pools import select_rows
    from vrsd_kit.tokens import approx_token_count, count_tokens
    from vrsd_langchain import DiverseRetriever

    corpus, pools = redundant
    spec = WORDS_ROWS[row]
    retriever = DiverseRetriever(vectorstore=pools.store, k=FETCH, fetch_k=FETCH,
                                 lexical=spec.words)
    for k in KS:
        for qi, rows in enumerate(select_rows(pools, spec, k)):
            got = [d.metadata["row"] for d in retriever.invoke(corpus.questions[qi], k=k)]
            assert got == rows.tolist(), (row, k, qi)
    counts = count_tokens(approx_token_count, corpus.texts)[pools.rows]
    for qi, rows in enumerate(select_rows(pools, spec, FETCH, max_tokens=200,
                                          token_counts=counts)):
        got = [d.metadata["row"] for d in retriever.invoke(corpus.questions[qi],
                                                           max_tokens=200)]
        assert got == rows.tolist(), (row, "budget", qi)


def test_haystack_protocol_default_row_equals_the_ranker_and_the_postprocessor(redundant):
    from haystack import Document
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from vrsd_core import DEFAULT_METHOD
    from vrsd_eval.haystack_protocol import _core
    from vrsd_haystack import DiverseRanker
    from vrsd_llamaindex import DiversePostprocessor

    corpus, pools = redundant
    default = _core(DEFAULT_METHOD, words=True)
    closed = 0
    for qi, question in enumerate(corpus.questions):
        texts = [corpus.texts[r] for r in pools.rows[qi]]
        q, vectors = pools.queries[qi], pools.vectors[qi].astype(np.float64)
        docs = [Document(id=str(i), content=t, embedding=v.tolist())
                for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
        nodes = [NodeWithScore(node=TextNode(text=t, id_=str(i), embedding=v.tolist()))
                 for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
        for k in KS:
            want = default(q, vectors, k, texts, question)
            ranked = DiverseRanker(top_k=k).run(documents=docs, query=question,
                                                query_embedding=q.tolist())["documents"]
            assert [int(d.id) for d in ranked] == want, (qi, k)
            kept = DiversePostprocessor(top_n=k).postprocess_nodes(
                nodes, query_bundle=QueryBundle(question, embedding=q.tolist()))
            assert [int(n.node.node_id) for n in kept] == want, (qi, k)
            closed += sum(bool(d.meta["vrsd"].get("held_back")) for d in ranked)
    assert closed  # the judge had copies to hold back
