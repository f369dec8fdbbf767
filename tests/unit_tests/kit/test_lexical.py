"""vrsd_kit.lexical: BM25 over the pool against bm25s and a direct reference; the fusion."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vrsd_kit.lexical import (
    Background,
    Judge,
    bm25,
    cosines,
    pool_relevance,
    read_text,
    tokenize,
    word_ids,
    word_profiles,
)

TEXTS = [
    "Caffeine has a half-life of about five hours.",
    "The half-life of caffeine is roughly five hours.",
    "Caffeine blocks adenosine receptors, which keeps you awake.",
    "Alcohol fragments sleep and suppresses REM sleep.",
    "Jupiter is the largest planet in the solar system.",
]


def expected_df(word: str, docs: list[list[str]], background: bool) -> float:
    """A word's document frequency in ``docs``; with the ``background`` (the default's
    common words, ``Background.of_language(None)``), at least what it expects in texts of
    the pool's mean length: n (1 - exp(-L f)), f the word's frequency in the list."""
    n = len(docs)
    df = float(sum(word in d for d in docs))
    if not background or not n:
        return df
    common, its_id = Background.of_language(None), word_ids([word])[0]
    at = int(np.searchsorted(common.ids, its_id))
    if at == len(common.ids) or common.ids[at] != its_id:
        return df  # not a common word
    mean_length = sum(map(len, docs)) / n
    return max(df, n * -math.expm1(-mean_length * float(common.rates[at])))


def reference_bm25(query: str, texts: list[str], k1: float = 1.5, b: float = 0.75,
                   background: bool = True) -> list[float]:
    """Lucene's BM25, term by term, as the textbook writes it; ``background``: each
    word's df floored by the common words (``expected_df``), as ``bm25``'s default."""
    docs = [tokenize(t) for t in texts]
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = []
    for doc in docs:
        total = 0.0
        for term in tokenize(query):
            df = expected_df(term, docs, background)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = doc.count(term)
            total += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(total)
    return out


def reference_profiles(query: str, texts: list[str]) -> np.ndarray:
    """word_profiles written out: tf * idf per word (df as ``reference_bm25``'s), the
    query's words kept (in their order), every other word folded into one last coordinate
    (its length), rows to unit length."""
    docs = [tokenize(t) for t in texts]
    n = len(docs)
    asked = list(dict.fromkeys(tokenize(query)))

    def idf(word):
        df = expected_df(word, docs, True)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    rows = []
    for doc in docs:
        kept = [doc.count(w) * idf(w) for w in asked]
        rest = math.sqrt(sum((doc.count(w) * idf(w)) ** 2 for w in set(doc) if w not in asked))
        row = np.array(kept + [rest])
        length = np.linalg.norm(row)
        rows.append(row / length if length > 0 else row)
    return np.array(rows).reshape(n, len(asked) + 1)


def test_words_are_unicode_word_runs_case_folded():
    assert tokenize("Zürich's CAFÉ, 3.5 km — Straße ΑΘΉΝΑ") == [
        "zürich", "s", "café", "3", "5", "km", "strasse", "αθήνα"]
    assert tokenize("北京 is 首都") == ["北京", "is", "首都"]  # runs, not a segmenter
    assert tokenize("") == []


def test_scripts_without_spaces_are_read_as_character_bigrams():
    assert tokenize("東京タワーは高い") == ["東京", "京タ", "タワ", "ワー", "ーは", "は高", "高い"]
    assert tokenize("中") == ["中"]  # a lone character is its own token
    assert tokenize("Python3の使い方。Ok") == ["python3", "の使", "使い", "い方", "ok"]
    assert tokenize("한국어 학교에서") == ["한국", "국어", "학교", "교에", "에서"]
    assert tokenize("ภาษาไทย") == ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]
    # scripts with spaces keep their words whole, combining marks included
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("cafe\u0301 Москва") == ["cafe\u0301", "москва"]


@pytest.mark.parametrize(("query", "texts"), [
    ("咖啡因的半衰期是多久？",
     ["咖啡因在成年人体内的半衰期大约是五个小时。", "酒精会破坏后半夜的睡眠。",
      "木星是太阳系中最大的行星。"]),
    ("カフェインの半減期はどのくらいですか",
     ["カフェインの半減期は大人で約五時間です。", "アルコールは夜の後半の睡眠を乱します。",
      "木星は太陽系で最大の惑星です。"]),
])
def test_bm25_finds_the_matching_passage_in_chinese_and_japanese(query, texts):
    scores = bm25(query, texts)
    assert scores[0] > 0 and scores[0] > scores[1:].max()
    np.testing.assert_allclose(scores, reference_bm25(query, texts), rtol=1e-9, atol=1e-12)


def test_bm25_equals_the_reference_and_bm25s():
    bm25s = pytest.importorskip("bm25s")
    for query in ("caffeine half-life", "sleep sleep alcohol", "Jupiter planet", "nothing here"):
        ours = bm25(query, TEXTS, background=())  # bm25s reads the pool alone
        np.testing.assert_allclose(ours, reference_bm25(query, TEXTS, background=False),
                                   rtol=1e-9, atol=1e-12)
        index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        index.index([tokenize(t) for t in TEXTS], show_progress=False)
        np.testing.assert_allclose(ours, index.get_scores(tokenize(query)), rtol=1e-5, atol=1e-6)


def pool_texts(min_size: int) -> st.SearchStrategy[list[str]]:
    """Small pools of texts over a few words (some of them the queries')."""
    return st.lists(st.lists(st.sampled_from("a b c d e f gé H".split()), max_size=12)
                    .map(" ".join), min_size=min_size, max_size=8)


QUERIES = st.lists(st.sampled_from("a b c x GÉ h".split()), max_size=5).map(" ".join)


# "a" is a common word, rarer in this pool than the background expects: its df is floored
COMMON_WORD_FLOORED = dict(texts=["", "b b", "b b", "b b b b b", "b b b b b b", "b b b b b b",
                                  "a a a a a a a a a a a a"], query="a")


@settings(max_examples=60, deadline=None)
@given(texts=pool_texts(1), query=QUERIES)
@example(**COMMON_WORD_FLOORED)
def test_bm25_matches_the_reference_on_any_pool(texts, query):
    scores = bm25(query, texts)
    assert scores.shape == (len(texts),) and np.all(scores >= 0)
    np.testing.assert_allclose(scores, reference_bm25(query, texts) if any(texts) and any(
        tokenize(t) for t in texts) else np.zeros(len(texts)), rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(texts=pool_texts(0), query=QUERIES)
@example(**COMMON_WORD_FLOORED)
def test_word_profiles_match_the_reference_on_any_pool(texts, query):
    got = word_profiles(query, texts)
    want = reference_profiles(query, texts)
    # the query's words in any column order: the profiles' cosines are what counts
    assert got.shape == want.shape
    np.testing.assert_allclose(got @ got.T, want @ want.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.sort(got, axis=1), np.sort(want, axis=1), rtol=1e-9,
                               atol=1e-12)


def test_word_profiles_tell_which_question_words_a_text_weighs():
    """Two restatements (the same words) have profile cosine 1; texts that each name a
    different word of the question are less alike than one of them and a text that
    names none; an empty text is 0."""
    texts = ["Caffeine has a half-life of about five hours.",
             "caffeine has a HALF-LIFE of about five hours",
             "Caffeine is in coffee and tea.",
             ""]
    P = word_profiles("caffeine half-life", texts)
    assert P[0] @ P[1] == pytest.approx(1.0)
    Q = word_profiles("caffeine half-life", ["Caffeine keeps you awake.",
                                             "A drug's half-life is how long half of it lasts.",
                                             "Sleep matters."])
    assert Q[0] @ Q[1] < min(Q[0] @ Q[2], Q[1] @ Q[2])
    assert P[3].tolist() == [0.0] * 4  # caffeine, half, life, the rest
    np.testing.assert_allclose(np.linalg.norm(P[:3], axis=1), 1.0)
    assert word_profiles("anything", []).shape == (0, 2)
    assert word_profiles("", texts[:2]).shape == (2, 1)  # no query words: the rest only


def test_the_rarer_word_counts_more_and_a_text_without_query_words_scores_zero():
    scores = bm25("caffeine adenosine", TEXTS)
    assert scores[2] == scores.max()  # both words, one of them rare
    np.testing.assert_allclose(scores[3:], 0.0, atol=1e-12)
    assert bm25("", TEXTS).tolist() == [0.0] * 5
    assert bm25("caffeine", []).shape == (0,)


def test_each_text_is_tokenised_once():
    text = "a passage seen by many queries " * 20
    read_text.cache_clear()
    for query in ("passage", "queries", "many"):
        bm25(query, [text, "another one"])
    info = read_text.cache_info()
    assert info.misses == 2 and info.hits == 4
    # the whole relevance (BM25 and the profiles) reads each text once per query
    pool_relevance("passage", [text, "another one"], np.ones(2), np.eye(2))
    assert read_text.cache_info().hits == 6
    # the judge of copies reads the same reading (its word pairs)
    Judge([text, "another one"])
    assert read_text.cache_info().hits == 8 and read_text.cache_info().misses == 2


def test_the_core_fuses_the_signals_in_pool_units():
    from vrsd_core import pool_units, select

    def z(x):
        return (x - x.mean()) / x.std()

    cos = np.array([0.9, 0.8, 0.7, 0.2])
    lex = np.array([0.0, 5.0, 0.0, 1.0])
    vectors = np.eye(4)
    sel = select(np.ones(4), vectors, 4, method="similarity", relevance=pool_units([cos, lex]))
    fused = z(z(cos) + z(lex))
    np.testing.assert_allclose(sel.relevance, fused[sel.indices])
    assert sel.indices.tolist() == np.argsort(-fused, kind="stable").tolist()
    # scale and shift of either signal change nothing: no weight to choose
    again = select(np.ones(4), vectors, 4, method="similarity",
                   relevance=pool_units([3 * cos - 1, 10 * lex]))
    np.testing.assert_allclose(again.relevance, sel.relevance)
    # a signal that does not vary adds nothing (no query word in any candidate)
    flat = select(np.ones(4), vectors, 4, method="similarity",
                  relevance=pool_units([cos, np.zeros(4)]))
    np.testing.assert_allclose(flat.relevance, z(cos)[flat.indices])
    with pytest.raises(ValueError, match="relevance: expected shape"):
        select(np.ones(4), vectors, 2, relevance=np.ones((2, 3)))


def test_pool_relevance_reads_both_and_the_caller_arrays_are_not_changed():
    q = np.array([1.0, 0.0])
    vectors = np.array([[1.0, 0.1], [0.8, 0.6], [0.0, 1.0], [0.0, 0.0]])
    before = vectors.copy()
    parts = pool_relevance("caffeine half-life", TEXTS[:4], q, vectors)
    np.testing.assert_array_equal(vectors, before)
    np.testing.assert_allclose(parts.cosine, cosines(q, vectors))
    assert parts.cosine[3] == 0.0  # a zero vector scores 0, not NaN
    np.testing.assert_allclose(parts.lexical, bm25("caffeine half-life", TEXTS[:4]))
    np.testing.assert_array_equal(parts.signals, [parts.cosine, parts.lexical])
    np.testing.assert_allclose(parts.profiles, word_profiles("caffeine half-life", TEXTS[:4]))
