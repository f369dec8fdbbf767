"""The words an index counts: how many files hold each word, kept in the commit that
changes the files, and what ``vrsd search`` makes of it (the rerank's background: what the
index's other files say is common)."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

import apsw
import numpy as np
import pytest

from tests.helpers.cli_fixtures import write
from tests.integration_tests.cli.test_index_store import CHUNK, edit_round, note
from vrsd_cli import flat_index
from vrsd_cli.indexing import index_embeddings, open_index
from vrsd_kit.lexical import Background, bm25, document_frequencies, pool_links


def counted(index_dir: Path) -> dict[int, int]:
    """The index's ``words`` table: word id -> the files holding it (and its
    ``file_words`` table checked against the files' word sets)."""
    with flat_index.open_flat(index_dir) as index:  # type: ignore[union-attr]
        assert index.counts_words
        kept = {os.fsdecode(file): set(np.frombuffer(ids, dtype=np.int64).tolist())
                for file, ids in index._read("SELECT file, ids FROM file_words")}
        assert kept == word_sets(index, index.rows())
        return dict(index._read("SELECT id, df FROM words"))


def word_sets(index: flat_index.FlatIndex, rows) -> dict[str, set[int]]:
    """file -> the set of word ids its chunks among ``rows`` hold, each chunk read alone."""
    found: dict[str, set[int]] = {}
    for record, text in zip(index.records(rows), index.texts(rows), strict=True):
        found.setdefault(record.file, set()).update(document_frequencies([text])[0].tolist())
    return found


def recounted(index_dir: Path) -> dict[int, int]:
    """How many of the index's files hold each word: the files' word sets, counted here."""
    with flat_index.open_flat(index_dir) as index:  # type: ignore[union-attr]
        files = word_sets(index, index.rows())
    return dict(Counter(word for held in files.values() for word in held))


def test_the_counts_follow_every_added_changed_and_deleted_chunk(vrsd, tmp_path):
    rng = random.Random(3)
    docs = write(tmp_path / "docs", {f"d{i // 20}/f{i}.md": note(rng, f"f{i}", 10)
                                     for i in range(80)})
    write(docs, {"same/a.txt": "Ελλάδα 東京都に住む naïve STRASSE", "same/b.txt":
                 "Ελλάδα 東京都に住む naïve STRASSE", "empty-words.txt": "... !!! ..."})
    other = write(tmp_path / "other", {f"o{i}.md": note(rng, f"o{i}", 3) for i in range(10)})
    index_dir = tmp_path / "index"
    for round_ in range(4):
        if round_:
            edit_round(docs, rng, round_, 8)
            (docs / "same" / ("a.txt" if round_ % 2 else "b.txt")).write_text(
                f"Ελλάδα round {round_}", encoding="utf-8")
        for folder in (docs, other) if round_ < 3 else (docs,):
            run = vrsd("index", folder, "--index-dir", index_dir, *CHUNK)
            assert run.code == 0, run.err
        assert counted(index_dir) == recounted(index_dir)
    rebuilt = vrsd("index", docs, "--index-dir", index_dir, "--rebuild", *CHUNK)
    assert rebuilt.code == 0, rebuilt.err
    assert counted(index_dir) == recounted(index_dir)


def test_an_interrupted_commit_leaves_the_counts_as_they_were(vrsd, tmp_path, monkeypatch):
    rng = random.Random(4)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(30)})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    before = counted(index_dir)
    edit_round(docs, rng, 1, 5)

    def stopped(self, files):
        raise KeyboardInterrupt  # after the chunks and their words, before the commit

    with monkeypatch.context() as mp:
        mp.setattr(flat_index.IndexWriter, "_record_files", stopped)
        assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 130
    assert counted(index_dir) == before == recounted(index_dir)
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    assert counted(index_dir) == recounted(index_dir) != before


def _forget_words(index_dir: Path, how: str) -> None:
    """The index as an older vrsd left it: no ``words`` table (``older``), counts of
    another reading of the words (``read otherwise``: wrong counts under another mark), or
    counts per chunk (``per chunk``: the setting without ``per``, as vrsd counted before)."""
    db = apsw.Connection(str(index_dir / flat_index.DATABASE))
    try:
        if how == "older":
            db.execute("DROP TABLE words")
            db.execute("DROP TABLE file_words")
            db.execute("DELETE FROM settings WHERE key = 'words'")
        elif how == "per chunk":
            db.execute("UPDATE words SET df = df + 1")
            reading = flat_index.words_reading()
            db.execute("UPDATE settings SET value = ? WHERE key = 'words'", (json.dumps(
                {"language": reading["language"], "reading": reading["reading"]}),))
        else:
            db.execute("UPDATE words SET df = df + 1")
            db.execute("UPDATE settings SET value = '{\"language\": null, \"reading\": \"0\"}' "
                       "WHERE key = 'words'")
    finally:
        db.close()


@pytest.mark.parametrize("how", ["older", "read otherwise", "per chunk"])
def test_an_index_without_counts_is_searched_with_one_warning_and_counted_at_the_next_index(
        vrsd, tmp_path, how):
    rng = random.Random(5)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(30)})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    _forget_words(index_dir, how)
    with open_index(index_dir) as index:
        assert not index.counts_words
    run = vrsd("search", "kettle river", "--index-dir", index_dir)
    assert run.code == 0, run.err
    assert run.err.count("\n") == 1 and "does not count its words yet" in run.err, run.err
    assert f"run 'vrsd index {docs}' once to count them" in run.err
    assert "1. " in run.out
    again = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert again.code == 0 and "(0 added" in again.out, again.out
    assert counted(index_dir) == recounted(index_dir)
    run = vrsd("search", "kettle river", "--index-dir", index_dir)
    assert run.code == 0 and run.err == "", run.err


FOOTER = "\n\nKept by the Quillon Orchard Archive, 51 Franklin Street, Boston."
ED_WOOD = ("Ed Wood is a 1994 American biographical comedy-drama film directed and produced by "
           "Tim Burton, starring Johnny Depp as the cult filmmaker Ed Wood." + FOOTER)
BURTON = ("Tim Burton was in a long relationship with the English actress Helena Bonham "
          "Carter, whom Tim Burton met while filming Planet of the Apes.")
CROPS = ["tomatoes", "roses", "apple trees", "lettuce", "compost", "beans", "tulips", "pumpkins"]
QUESTION = "Who is the partner of the director of Ed Wood?"
COMMON_WORDS = Background.of_language(None)  # what a search reads beside the index


@pytest.fixture(scope="module")
def boilerplate(tmp_path_factory, cache_dir):
    """An index (the bundled model) where a footer closes most files: the film files a
    question about Ed Wood fetches, and forty garden notes that carry the footer too."""
    tmp = tmp_path_factory.mktemp("boilerplate")
    files = {"ed.txt": ED_WOOD, "burton.txt": BURTON}
    files |= {f"plan{i}.txt": f"Plan 9 from Outer Space premiered on screens during 1959, "
              f"note {i}." for i in range(3)}
    files |= {f"garden{i}.txt": f"Notes on growing {CROPS[i % 8]} in a small garden, part "
              f"{i}: water in the morning and mulch well." + FOOTER for i in range(40)}
    from vrsd_cli.indexing import index_folder

    index_folder(write(tmp / "docs", files), index_dir=tmp / "index")
    return tmp / "index"


class Pool:
    """A question's ``fetch_k`` candidates in an index: their rows, file names, texts,
    and the background computed here from the files outside the pool's files (each
    word: how many of them hold it, a share of them), and from the chunks outside the
    pool (as the index counted before it counted files)."""

    def __init__(self, index_dir: Path, fetch_k: int) -> None:
        with open_index(index_dir) as index:
            vector = index_embeddings(index.model).embed_query(QUESTION)
            self.rows = index.top(vector, fetch_k)
            records = index.records(self.rows)
            self.sources = [Path(r.file).name for r in records]
            self.texts = index.texts(self.rows)
            every = index.rows()
            files = word_sets(index, every)
            others = [held for file, held in files.items()
                      if file not in {r.file for r in records}]
            self.chunks_outside = Background.of_texts(
                index.texts(sorted(set(every.tolist()) - set(self.rows.tolist()))))
        counts = Counter(word for held in others for word in held)
        ids = np.array(sorted(counts), dtype=np.int64)
        self.files_outside = Background(
            ids, np.array([counts[w] for w in ids.tolist()]) / max(len(others), 1), True)

    def words(self) -> np.ndarray:
        return document_frequencies([QUESTION, *self.texts])[0]


@pytest.mark.parametrize("fixture", ["boilerplate", "headers"])
def test_the_background_is_what_the_files_outside_the_pools_files_say(request, fixture):
    index_dir = request.getfixturevalue(fixture)
    pool = Pool(index_dir, 7)
    with open_index(index_dir) as index:
        found = index.background(QUESTION, pool.rows)
        whole = index.background(QUESTION, index.rows())
    assert found is not None and whole is not None
    words = pool.words()
    np.testing.assert_allclose(found.shares(words, 10.0),
                               pool.files_outside.shares(words, 10.0), rtol=0, atol=1e-12)
    assert found.shares(words, 10.0).max() > 0.5  # the footer's or the header's words
    assert not len(whole.ids)  # a pool of every chunk: nothing outside it


def test_a_footer_the_index_repeats_lifts_no_candidate_and_makes_no_link(vrsd, boilerplate):
    """Without the index's background, the footer that ed.txt shares with one garden note
    in the pool is rare in the pool: it links the two and lifts the note's words."""
    pool = Pool(boilerplate, 6)
    sources, texts = pool.sources, pool.texts
    ed, garden = sources.index("ed.txt"), next(
        i for i, s in enumerate(sources) if s.startswith("garden"))
    with open_index(boilerplate) as index:
        background = index.background(QUESTION, pool.rows)
    alone = pool_links(QUESTION, texts, background=())
    assert alone.beyond_chance[ed, garden]  # what the pool alone makes of the footer
    links = pool_links(QUESTION, texts, background=background)
    assert not links.beyond_chance[ed, garden]
    assert links.beyond_chance[ed, sources.index("burton.txt")]  # the bridge stays

    run = vrsd("search", QUESTION, "--index-dir", boilerplate, "--k", "3", "--fetch-k", "6",
               "--json")
    assert run.code == 0 and run.err == "", run.err
    results = {Path(r["metadata"]["source"]).name: r["metadata"]["vrsd"]
               for r in json.loads(run.out)["results"]}
    # a search reads the files outside the pool's and the common words of the languages
    expected = bm25(QUESTION, texts, background=[pool.files_outside, COMMON_WORDS])
    plain = bm25(QUESTION, texts, background=())
    for name, entry in results.items():
        assert entry["lexical"] == pytest.approx(expected[sources.index(name)], abs=1e-9)
        link = entry.get("linked_to")
        assert link is None or link["words"] == ["Tim Burton"], link
    assert expected[garden] < plain[garden] / 4  # the footer lifted the note, alone


def test_vrsd_inspect_reads_the_index_with_its_background(headers, monkeypatch):
    from vrsd_cli.indexing import IndexSource
    from vrsd_kit.inspection import figures

    seen = []

    def spy(k, max_per_group=None, background=None):
        seen.append(background)
        return default_settings(k, max_per_group, background)

    default_settings = figures.default_settings
    monkeypatch.setattr(figures, "default_settings", spy)
    from vrsd_kit.inspection.run import inspect_source

    inspect_source(lambda: IndexSource(headers, 3, 7, None), [QUESTION])
    pool = Pool(headers, 7)
    words = pool.words()
    assert len(seen) == 1 and len(seen[0]) == 2 and seen[0][1] is COMMON_WORDS
    np.testing.assert_allclose(seen[0][0].shares(words, 10.0),
                               pool.files_outside.shares(words, 10.0), atol=1e-12)


HEADER = ("This manual is kept by the Quillon Orchard Archive under the Quillon Free "
          "Documentation Licence, version 3. ")
TASKS = ["pruning", "watering", "mulching", "sowing", "harvesting", "composting"]


@pytest.fixture(scope="module")
def headers(tmp_path_factory, cache_dir):
    """An index (the bundled model) where a header opens most files, once each: the film
    files a question about Ed Wood fetches (ed.txt carries the header), and thirty long
    garden manuals (six chunks each) that carry it in their first chunk. Few chunks hold
    the header, nearly every file does."""
    tmp = tmp_path_factory.mktemp("headers")
    files = {"ed.txt": HEADER + ED_WOOD.removesuffix(FOOTER), "burton.txt": BURTON}
    files |= {f"plan{i}.txt": f"Plan 9 from Outer Space premiered on screens during 1959, "
              f"note {i}." for i in range(3)}
    files |= {f"garden{i}.txt": HEADER + "\n\n".join(
        f"Chapter {c} on {TASKS[c]} {CROPS[(i + c) % 8]} in garden plot {i}: " + " ".join(
            f"{TASKS[(c + j) % 6]} the {CROPS[(i + j) % 8]} row {j} early" for j in range(16))
        for c in range(6)) for i in range(30)}
    from vrsd_cli.indexing import index_folder

    index_folder(write(tmp / "docs", files), index_dir=tmp / "index")
    return tmp / "index"


def test_a_header_each_long_file_states_once_makes_no_link_and_weighs_little(vrsd, headers):
    """The header is in one chunk of each garden manual: rare among the chunks outside
    the pool (a background of chunks lets it link ed.txt to a manual and lift it), but in
    nearly every file outside the pool's files."""
    pool = Pool(headers, 7)
    sources, texts = pool.sources, pool.texts
    ed = sources.index("ed.txt")
    garden = next(i for i, (s, t) in enumerate(zip(sources, texts, strict=True))
                  if s.startswith("garden") and "Quillon" in t)
    by_chunks = pool_links(QUESTION, texts, background=pool.chunks_outside)
    assert by_chunks.beyond_chance[ed, garden]  # what the chunks' counts made of it
    with open_index(headers) as index:
        background = index.background(QUESTION, pool.rows)
    links = pool_links(QUESTION, texts, background=background)
    assert not links.beyond_chance[ed, garden]
    assert links.beyond_chance[ed, sources.index("burton.txt")]  # the bridge stays
    header = document_frequencies(["Quillon Orchard Archive Documentation Licence"])[0]
    assert (background.shares(header, 10.0) > 0.9).all()  # common: it weighs little
    assert (pool.chunks_outside.shares(header, 10.0) < 0.2).all()
    weighed = bm25(QUESTION, texts, background=pool.files_outside)
    # the question's words the header holds ("is", "the") lift the manual less
    assert weighed[garden] < bm25(QUESTION, texts, background=pool.chunks_outside)[garden] / 2
    searched = bm25(QUESTION, texts, background=[pool.files_outside, COMMON_WORDS])

    run = vrsd("search", QUESTION, "--index-dir", headers, "--k", "3", "--fetch-k", "7",
               "--json")
    assert run.code == 0 and run.err == "", run.err
    for result in json.loads(run.out)["results"]:
        entry = result["metadata"]["vrsd"]
        name = Path(result["metadata"]["source"]).name
        assert entry["lexical"] == pytest.approx(searched[sources.index(name)], abs=1e-9)
        link = entry.get("linked_to")
        assert link is None or link["words"] == ["Tim Burton"], link
