"""The background (``vrsd_kit.lexical.Background``): what is common outside the pool sets a
floor under each word's document frequency, so function words and a corpus' boilerplate
weigh little in BM25 and make no link, however rare they are among the candidates."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from vrsd_kit.lexical import Background, Judge, bm25, pool_links, read_text, word_ids

FILLER = [f"gardening note {i}: roses {i} need sunlight and compost" for i in range(20)]
ADDRESS = ("Copyright the Free Software Foundation, 51 Franklin St, Fifth Floor, Boston, "
           "MA 02110-1301 USA. This program is free software under the GNU General Public "
           "License.")


def test_a_corpus_background_is_each_words_document_frequency() -> None:
    texts = ["a b c", "a b", "a", "d"]
    found = Background.of_texts(texts)
    want = {"a": 0.75, "b": 0.5, "c": 0.25, "d": 0.25}
    shares = found.shares(word_ids(list(want)), mean_length=3.0)
    np.testing.assert_allclose(shares, list(want.values()))
    assert found.shares(word_ids(["zzz"]), 3.0).tolist() == [0.0]
    assert Background.of_texts([]).shares(word_ids(["a"]), 3.0).tolist() == [0.0]
    stemmed = Background.of_texts(["houses", "house"], "en")
    assert stemmed.shares(read_text("House", "english").ids, 1.0).tolist() == [1.0]


def test_a_language_background_weighs_its_function_words_little() -> None:
    pytest.importorskip("wordfreq")
    english = Background.of_language("en")
    question = "what is the half-life of caffeine"
    texts = ["Caffeine is metabolised slowly; its half-life is long.",
             "What is the best way to water roses? What the gardeners say.", *FILLER]
    plain = bm25(question, texts, language="en", background=())  # the pool alone
    assert bm25(question, texts, language="en").tolist() == bm25(  # the language's, by default
        question, texts, language="en", background=english).tolist()
    read = bm25(question, texts, language="en", background=english)
    assert read[0] > read[1]  # the passage with the question's content words comes first
    assert plain[1] / plain[0] > read[1] / read[0]  # "what", "the" weigh less than alone
    the, caffeine = english.shares(word_ids(["the", "caffein"]), mean_length=100.0)
    assert the > 0.99 and caffeine < 0.01


def test_a_repeated_address_makes_no_link_with_the_corpus_background() -> None:
    licensed = [f"Package {name} reads {what} files. {ADDRESS}"
                for name, what in (("alpha", "image"), ("beta", "audio"), ("gamma", "text"),
                                   ("delta", "video"))]
    texts = [*licensed, *FILLER]
    corpus = Background.of_texts([*texts, *[f"tool {i}. {ADDRESS}" for i in range(200)],
                                  *[f"another manual page {i}" for i in range(100)]])
    alone = pool_links("which package reads image files", texts)
    assert alone.beyond_chance[0, 1]  # the pool alone links two licence headers
    assert alone.words(texts[0], texts[1])
    read = pool_links("which package reads image files", texts, background=corpus)
    assert not read.beyond_chance[:4, :4].any()
    assert read.words(texts[0], texts[1]) == []
    # each ends with the address: one continues another for the judge, and the keywords
    # the rerank body builds hold no link among them even with the pool's statistics alone
    assert Judge(texts).continued()[:4, :4].sum() == 12


def test_content_words_still_link_against_the_background() -> None:
    texts = ["Tim Burton directed Ed Wood in 1994.",
             "Ed Wood was written about by Tim Burton's screenwriters.", *FILLER]
    corpus = Background.of_texts(texts + [f"unrelated record {i}" for i in range(100)])
    links = pool_links("who directed the film", texts, background=corpus)
    assert links.beyond_chance[0, 1]
    assert links.words(texts[0], texts[1])


def test_a_background_read_otherwise_or_of_another_type_is_refused() -> None:
    with pytest.raises(ValueError, match="^background: read in 'english'"):
        bm25("a", ["a"], background=Background.of_texts(["a"], "en"))
    with pytest.raises(ValueError, match="^background: expected"):
        bm25("a", ["a"], background=[{"a": 1.0}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="^language"):
        Background.of_language("klingon")


def test_without_wordfreq_the_language_background_says_what_to_install(monkeypatch) -> None:
    from vrsd_kit import lexical

    lexical._language_background.cache_clear()
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    with pytest.raises(ImportError, match=r"vrsd\[background\]"):
        Background.of_language("german")
    lexical._language_background.cache_clear()


def test_without_wordfreq_a_language_warns_once_and_reads_the_pool_alone(monkeypatch) -> None:
    from vrsd_kit import lexical

    lexical._language_background.cache_clear()
    lexical._warn_once.cache_clear()
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    texts = ["Die Häuser der Stadt", "Das Haus am See", "Ein Hund"]
    with pytest.warns(UserWarning, match=r"pool alone.*vrsd\[background\]"):
        first = bm25("Häuser", texts, language="de")
    np.testing.assert_allclose(first, bm25("Häuser", texts, language="de", background=()))
    lexical._language_background.cache_clear()
    lexical._warn_once.cache_clear()


# Two passages that share only the language's small words ("how", "are", "the", "what",
# "under"), among passages of a hundred words that hold none of them: the background
# expects a small word in a text of a hundred words, so in several of the pool's.
SMALL_WORDS = ["How are the tulips of Lisse grown under glass, and what do the growers sell?",
               "How are the salmon of Alta caught under ice, and what do the fishers keep?"]
OTHERS = [" ".join(f"record{i}x{j}" for j in range(100)) for i in range(18)]


def test_with_no_language_the_common_words_of_ten_languages_weigh_little() -> None:
    common = Background.of_language(None)
    assert Background.of_language(None) is common  # read once per process
    function_words = ["the", "und", "les", "и", "que", "che", "het", "och", "się", "não"]
    assert (common.shares(word_ids(function_words), mean_length=100.0) > 0.5).all()
    content = ["caffeine", "koffein", "tulips", "東京", "שלום"]  # nor another script's words
    assert common.shares(word_ids(content), mean_length=100.0).tolist() == [0.0] * 5
    texts = [*SMALL_WORDS, *OTHERS]
    # the default (no language, no background) reads them; () is the pool alone
    assert bm25("how are the tulips grown", texts).tolist() == bm25(
        "how are the tulips grown", texts, background=common).tolist()
    alone = bm25("how are the tulips grown", texts, background=())
    read = bm25("how are the tulips grown", texts)
    assert read[1] / read[0] < alone[1] / alone[0]  # the salmon shares only small words


def test_words_the_languages_call_common_make_no_link() -> None:
    texts = [*SMALL_WORDS, *OTHERS]
    alone = pool_links("fishing", texts, background=())
    assert alone.beyond_chance[0, 1] and alone.words(texts[0], texts[1])  # rare in the pool
    read = pool_links("fishing", texts)
    assert not read.beyond_chance[0, 1] and read.words(texts[0], texts[1]) == []
    german = ["Wie werden die Tulpen unter Glas gezogen, und was verkaufen die Züchter?",
              "Wie werden die Lachse unter dem Eis gefangen, und was behalten die Fischer?"]
    texts = [*german, *OTHERS]
    assert pool_links("Fischerei", texts, background=()).beyond_chance[0, 1]
    assert not pool_links("Fischerei", texts).beyond_chance[0, 1]
