""""Restates" is measured true on labelled data (``vrsd_kit.lexical.Judge``, the judge the
default and its entries share), on the vendored HotpotQA corpora of the evidence protocol:

* labelled pairs, no model: two distinct evidence passages one question needs together
  (its gold pairs, siblings' biographies included) never restate each other; the
  redundant corpus' overlapping chunk (its paragraph minus the first sentence) restates
  its paragraph;
* what the default itself holds back, as the rerank body runs it (a pick that copies one
  before it closed, the selection made again: ``vrsd_kit.rerank``), with LSA (a geometry
  fit here, no weights to download), on the plain, redundant and chunked corpora of the
  first questions: of the held-back passages called "restates", at least 98 % are a
  piece of the same paragraph as the kept one (the conservative label: a copy of a
  paragraph under another article's title counts against it, though it restates too);
  of those called "contains", at least 90 % (the rest: such copies, ``Tara Strong`` and
  ``Tara Strong filmography``); and no result is a copy of another.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.copies import closing_copies, first_copy
from vrsd_core import DEFAULT_METHOD, pool_units, select
from vrsd_eval.evidence import load_evidence_corpora
from vrsd_kit.lexical import Judge, pool_relevance, restated_by

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

    called = {"restates": [0, 0], "contains": [0, 0]}
    for corpus in load_evidence_corpora(limit=QUESTIONS):
        owner = np.asarray(corpus.passage_of)
        embeddings = geometry("lsa").fit(corpus.texts)
        vectors = np.asarray(embeddings.embed_documents(corpus.texts))
        queries = np.asarray([embeddings.embed_query(q) for q in corpus.questions])
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = np.argsort(-(queries @ unit.T), axis=1, kind="stable")[:, :FETCH_K]
        pools = vectors[rows]
        for b, q in enumerate(corpus.questions):
            texts = [corpus.texts[r] for r in rows[b]]
            words = pool_relevance(q, texts, queries[b], pools[b])
            keywords = {"relevance": pool_units(words.signals), "profiles": words.profiles}
            judge = Judge(texts)
            for k in (2, 4, 10):
                first = select(queries[b], pools[b], k, method=DEFAULT_METHOD, **keywords)
                run, _ = closing_copies(queries[b], pools[b], k, judge, **keywords)
                # the greedy loop's judge keeps the same picks in one run
                assert select(queries[b], pools[b], k, method=DEFAULT_METHOD, **keywords,
                              closes=judge.copies()).indices.tolist() == run.indices.tolist()
                kept = run.indices.tolist()
                assert len(kept) == k and first_copy(kept, judge) is None
                for h in (c for c in first.info["top_k"] if c not in kept):
                    found = judge.copy_of(h, kept)
                    if found is not None:
                        called[found.relation][0] += 1
                        called[found.relation][1] += (
                            owner[rows[b, h]] == owner[rows[b, kept[found.of]]])
    (restates, right), (contains, inside) = called["restates"], called["contains"]
    assert restates >= 200 and contains >= 100
    assert right / restates >= 0.98 and inside / contains >= 0.9
