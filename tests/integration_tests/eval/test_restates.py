""""Restates" is measured true on labelled data (``vrsd_kit.entries``), on the vendored
HotpotQA corpora of the evidence protocol:

* labelled pairs, no model: two distinct evidence passages one question needs together
  (its gold pairs, siblings' biographies included) never restate each other; the
  redundant corpus' overlapping chunk (its paragraph minus the first sentence) restates
  its paragraph;
* what the default itself holds back (LSA: a geometry fit here, no weights to
  download), on the plain, redundant and chunked corpora of the first questions: of the
  held-back passages called "restates", at least 95 % restate a piece of the same
  paragraph (the conservative label: a copy of a paragraph under another article's
  title counts against it, though it restates too).
"""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_core import DEFAULT_METHOD, pool_units, select_batch
from vrsd_eval.evidence import load_evidence_corpora
from vrsd_kit.entries import restated_by
from vrsd_kit.lexical import pool_relevance

QUESTIONS = 120
FETCH_K = 50


@pytest.fixture(scope="module")
def corpora():
    return {c.name: c for c in load_evidence_corpora()}


def test_distinct_evidence_never_restates_and_an_overlapping_chunk_does(corpora):
    plain, redundant = corpora["plain"], corpora["redundant"]
    gold = [(a, b) for pair in plain.gold for a in pair for b in pair if a != b]
    assert len(gold) >= 900
    assert not [p for p in gold if restated_by(plain.texts[p[0]], [plain.texts[p[1]]])[0] == 0]
    n = len(plain.texts)
    chunks = [restated_by(redundant.texts[n + i], [redundant.texts[i]])[0] == 0
              for i in range(n)]
    assert np.mean(chunks) >= 0.99


@pytest.mark.slow
def test_what_the_default_holds_back_as_restating_is_a_piece_of_the_kept_passage():
    from vrsd_eval.geometries import geometry

    called = right = 0
    for corpus in load_evidence_corpora(limit=QUESTIONS):
        owner = np.asarray(corpus.passage_of)
        embeddings = geometry("lsa").fit(corpus.texts)
        vectors = np.asarray(embeddings.embed_documents(corpus.texts))
        queries = np.asarray([embeddings.embed_query(q) for q in corpus.questions])
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = np.argsort(-(queries @ unit.T), axis=1, kind="stable")[:, :FETCH_K]
        pools = vectors[rows]
        words = pool_units(np.stack([
            pool_relevance(q, [corpus.texts[r] for r in rw], qv, vs).signals
            for q, rw, qv, vs in zip(corpus.questions, rows, queries, pools, strict=True)]))
        for k in (2, 4, 10):
            chosen = select_batch(queries, pools, k, method=DEFAULT_METHOD, relevance=words)
            for b, sel in enumerate(chosen):
                kept = rows[b, sel.indices]
                for h in sel.info["held_back"]:
                    by, _ = restated_by(corpus.texts[rows[b, h]],
                                        [corpus.texts[r] for r in kept])
                    if by is not None:
                        called += 1
                        right += owner[rows[b, h]] == owner[kept[by]]
    assert called >= 200
    assert right / called >= 0.95
