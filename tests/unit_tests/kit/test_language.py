"""The reading by language (``vrsd_kit.lexical``'s ``language=``): each word is its
Snowball stem, in the texts and the query alike, read once per text and language;
scripts without spaces keep their bigrams; a script the stemmer does not write, and no
language at all, read as the words are written."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.reading import reference_reading
from vrsd_kit import lexical
from vrsd_kit.lexical import (
    Judge,
    bm25,
    check_language,
    pool_links,
    read_text,
    read_texts,
    tokenize,
    word_ids,
)

# (language, forms of one word as texts write them): each language's forms meet in one stem
INFLECTIONS = [
    ("german", ["Häuser", "Haus", "Hauses"]),
    ("german", ["Verteilung", "Verteilungen"]),
    ("french", ["nationale", "nationales", "national"]),
    ("french", ["continuer", "continuait", "continue"]),
    ("spanish", ["canciones", "canción"]),
    ("spanish", ["trabajando", "trabajar", "trabajo"]),
    ("russian", ["книги", "книга", "книгой"]),
    ("russian", ["городами", "города", "город"]),
    ("portuguese", ["cidades", "cidade"]),
    ("portuguese", ["trabalhando", "trabalhar"]),
    ("english", ["redistributing", "Redistribution"]),
    ("english", ["needs", "need"]),
    ("english", ["upgrades", "upgrade"]),
]


@pytest.mark.parametrize(("language", "forms"), INFLECTIONS)
def test_inflections_meet_in_their_stem(language: str, forms: list[str]) -> None:
    read = [read_text(form, language).ids.tolist() for form in forms]
    assert all(ids == read[0] and len(ids) == 1 for ids in read), forms
    plain = {tuple(read_text(form).ids.tolist()) for form in forms}
    assert len(plain) == len(forms)  # without a language they are different words


@pytest.mark.parametrize(("language", "forms"), INFLECTIONS)
def test_a_query_in_one_form_finds_a_passage_in_another(language: str, forms: list[str]
                                                        ) -> None:
    texts = [f"x y {forms[-1]} z", "x y z w", "w w w"]
    scores = bm25(forms[0], texts, language=language)
    assert scores[0] > 0 and scores[1:].tolist() == pytest.approx([0.0, 0.0], abs=1e-12)
    # as written, they never meet
    assert bm25(forms[0], texts).tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    weighted = bm25({forms[0].casefold(): 2.0}, texts, language=language)  # a weighted query
    assert weighted[0] > scores[0] > 0


def test_the_language_is_an_iso_code_or_a_snowball_name() -> None:
    assert check_language("de") == check_language("German") == "german"
    assert check_language("pt") == "portuguese" and check_language(None) is None
    for bad in ("klingon", "", 3, "zh"):
        with pytest.raises(ValueError, match="^language: .*german"):
            check_language(bad)
    with pytest.raises(ValueError, match="^language"):
        bm25("a", ["a"], language="xx")


@pytest.mark.parametrize("language", ["english", "german", "russian", None])
def test_chinese_and_japanese_keep_their_bigrams(language: str | None) -> None:
    for text in ("东京塔很高", "東京タワーは高い", "日本語を読む"):
        assert read_text(text, language).ids.tolist() == reference_reading(text).ids.tolist()
    assert tokenize("東京タワーは高い", language) == ["東京", "京タ", "タワ", "ワー", "ーは",
                                                "は高", "高い"]
    scores = bm25("東京タワー", ["東京タワーは高い", "大阪城は古い"], language=language)
    assert scores[0] > 0 == scores[1]


UNSTEMMED = ["ქართული ენა ლამაზია", "שפה עברית יפה מאוד", "ภาษาไทยสวยงาม",
             "ᎠᏂᏴᏫ ᏗᎦᎳᏫᎢᏍᏗ", "አማርኛ ቋንቋ", "ⲧⲙⲛⲧⲣⲙⲛⲕⲏⲙⲉ", "12 345 6789", "🙂 🎉"]


@pytest.mark.parametrize("language", ["english", "german", "french", "spanish",
                                      "portuguese", "russian"])
def test_a_script_the_stemmer_does_not_write_reads_as_today(language: str) -> None:
    for text in UNSTEMMED:
        want = reference_reading(text)
        got = read_text(text, language)
        assert got.ids.tolist() == want.ids.tolist(), text
        assert got.counts.tolist() == want.counts.tolist()
        assert got.pairs.tolist() == want.pairs.tolist()


TEXT = st.lists(st.sampled_from([
    "Häuser", "Haus", "книги", "книга", "running", "runs", "nationales", "canciones", "東京タワー",
    "ß", "STRASSE", "İstanbul", " ", ". ", "\n", ",", "e\u0301", "🙂", "1987", "x_y",
]), max_size=25).map(" ".join) | st.text(max_size=30)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXT, max_size=6),
       language=st.sampled_from(["english", "german", "russian", "spanish", None]))
def test_the_arrays_read_the_stems_tokenize_gives(texts: list[str], language: str | None
                                                  ) -> None:
    read_text.cache_clear()
    for text, got in zip(texts, read_texts(texts, language), strict=True):
        words = Counter(tokenize(text, language))
        assert got.ids.tolist() == word_ids(list(words)).tolist()
        assert got.counts.tolist() == list(map(float, words.values()))
        if language is None:
            assert got.pairs.tolist() == reference_reading(text).pairs.tolist()


def test_each_text_is_read_once_per_language() -> None:
    read_text.cache_clear()
    text = "Die Häuser der Stadt"
    read_texts([text, text], "german")
    read_text(text, "german")
    read_text(text)
    info = read_text.cache_info()
    assert (info.misses, info.hits) == (2, 2)
    assert read_text(text, "german").ids.tolist() != read_text(text).ids.tolist()


def test_a_link_names_the_words_as_the_text_writes_them() -> None:
    texts = ["Redistributing the archives of Meridian Harbour took years.",
             "The redistribution of Meridian harbours archives was slow.",
             *[f"an unrelated passage number {i} about gardens" for i in range(8)]]
    links = pool_links("who took years", texts, language="english")
    assert links.beyond_chance[0, 1]
    words = links.words(texts[0], texts[1])
    assert words and all(phrase in texts[0] for phrase in words), words
    back = links.words(texts[1], texts[0])
    assert back and all(phrase in texts[1] for phrase in back), back
    # one stem, each text's own spelling: "Harbour" in the one, "harbours" in the other
    assert "Harbour" in " ".join(words) and "harbours" in " ".join(back)


def test_the_judge_reads_the_same_stems() -> None:
    one = "Die Häuser der Stadt sind alt. Sie wurden 1900 gebaut."
    other = "Das Haus der Stadt ist alt. Es wurde 1900 gebaut."
    pool = [one, other, "Etwas ganz anderes über Hunde."]
    assert Judge(pool, "german").share(0, 1) > Judge(pool).share(0, 1)
    assert Judge(pool, "de").words(2) == Judge(pool).words(2)


def test_no_language_reads_exactly_as_before() -> None:
    text = "Caffeine's half-life: 5 hours. Häuser, книги, 東京タワー."
    assert read_text(text, None) is read_text(text)
    want = reference_reading(text)
    assert read_text(text).ids.tolist() == want.ids.tolist()
    assert lexical.stem(["running"], None) == ["running"]
    np.testing.assert_allclose(bm25("half-life", [text, "x"], language=None),
                               bm25("half-life", [text, "x"]))


def test_stems_read_by_many_threads_at_once_are_the_stems(monkeypatch) -> None:
    import threading

    monkeypatch.setattr(lexical, "_KEPT_STEMS", 300)  # the kept stems start again often
    monkeypatch.setattr(lexical, "_stem_ids", lexical._StemIds())
    words = [f"{root}{end}" for root in ("walk", "house", "nation", "play", "connect")
             for end in ("", "s", "ed", "ing", "ion", "ions", "er", "ers")]
    texts = [" ".join(words[(i * 7 + j) % len(words)] + str(i % 13) * (j % 2)
                      for j in range(30)) for i in range(400)]
    errors: list[str] = []

    def work(part: int) -> None:
        for text in texts[part::8]:
            got = lexical._read_all([text], "english")[0].ids.tolist()
            want = word_ids(list(Counter(tokenize(text, "english")))).tolist()
            if got != want:
                errors.append(text)

    threads = [threading.Thread(target=work, args=(part,)) for part in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
