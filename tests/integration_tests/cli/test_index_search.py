"""``vrsd index`` / ``vrsd search`` on tmp folders: re-indexing, scoping, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_fixtures import stored, write
from vrsd_cli.indexing import find_files, load_chunks
from vrsd_cli.printing import format_hits
from vrsd_kit.settings import DEFAULT_FETCH_K

CHUNK = ["--chunk-size", "60", "--chunk-overlap", "0"]

COFFEE = (
    "Caffeine has a half-life of about five hours.\n\n"
    "Caffeine blocks adenosine receptors, which keeps you awake.\n\n"
    "Decaffeinated coffee still contains a little caffeine."
)
SLEEP = (
    "# Sleep\n\nAdults need seven to nine hours of sleep.\n\n"
    "Alcohol fragments sleep and suppresses REM sleep.\n\n"
    "A cool bedroom helps deep sleep."
)
ROME = "Augustus became the first Roman emperor in 27 BC.\n\nRoman concrete used volcanic ash."
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"


def expected(folder: Path, prefix: str = "") -> list[tuple[str, int, str]]:
    chunks, _ = load_chunks(folder, find_files(folder), 60, 0)
    return sorted((prefix + c.metadata["source"], c.metadata["chunk"], c.page_content)
                  for c in chunks)


def test_reindexing_a_changed_folder_leaves_exactly_the_current_chunks(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"coffee.txt": COFFEE, "notes/sleep.md": SLEEP,
                                     "rome.txt": ROME})
    index_dir = tmp_path / "index"
    first = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert first.code == 0, first.err
    before = expected(docs)
    assert len(before) >= 6 and stored(index_dir) == before
    assert f"{len(before)} added, 0 unchanged, 0 deleted" in first.out

    again = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert f"0 added, {len(before)} unchanged, 0 deleted" in again.out
    assert stored(index_dir) == before

    (docs / "coffee.txt").write_text(COFFEE.replace("five hours", "five to six hours"))
    (docs / "notes" / "sleep.md").unlink()
    changed = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert changed.code == 0, changed.err
    after = expected(docs)
    assert stored(index_dir) == after
    assert not any(source == "notes/sleep.md" for source, _, _ in after)
    assert any("five to six hours" in text for _, _, text in after)
    assert "1 added" in changed.out and "deleted" in changed.out


def test_search_returns_k_annotated_chunks(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"coffee.txt": COFFEE, "sleep.md": SLEEP, "rome.txt": ROME})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    run = vrsd("search", "does coffee keep me awake?", "--index-dir", index_dir, "--k", "3",
               "--fetch-k", "6")
    assert run.code == 0, run.err
    assert run.out.startswith("3 results for 'does coffee keep me awake?'")
    assert "1. coffee.txt" in run.out and "relevance" in run.out
    assert "(cosine " in run.out and ", words " in run.out  # the default's two parts
    plain = vrsd("search", "does coffee keep me awake?", "--index-dir", index_dir, "--k", "3",
                 "--fetch-k", "6", "--vectors-only")
    assert plain.code == 0, plain.err
    assert "relevance" in plain.out and "(cosine " not in plain.out
    for method in ("similarity", "mmr", "dpp:theta=0.7", "vrsd:refine=swap"):
        again = vrsd("search", "sleep", "--index-dir", index_dir, "--method", method, "--k", "2")
        assert again.code == 0, again.err
        assert again.out.startswith("2 results")


def test_index_is_scoped_per_folder(vrsd, tmp_path):
    """Re-indexing folder B never deletes folder A's chunks in the same index; sources
    are shown from the folder holding both."""
    a = write(tmp_path / "a", {"coffee.txt": COFFEE})
    b = write(tmp_path / "b", {"rome.txt": ROME})
    index_dir = tmp_path / "index"
    assert vrsd("index", a, "--index-dir", index_dir, *CHUNK).code == 0
    assert vrsd("index", b, "--index-dir", index_dir, *CHUNK).code == 0
    assert stored(index_dir) == sorted(expected(a, "a/") + expected(b, "b/"))


def test_files_that_are_not_text_are_skipped_with_a_warning(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"coffee.txt": COFFEE, "blob.dat": b"\x01\x00\xff\xfe",
                                     "blank.md": "  \n", ".git/ignored.txt": ROME,
                                     ".hidden.txt": ROME, "image.png": PNG})
    index_dir = tmp_path / "index"
    run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert run.code == 0
    assert "warning: skipped" in run.err and "blob.dat: binary" in run.err
    assert "image.png: binary" in run.err and "blank.md: empty" in run.err
    assert "skipped 3 of 4 files (2 binary, 1 empty)" in run.err
    assert "ignored" not in run.err and "hidden" not in run.err  # hidden: not even counted
    assert {source for source, _, _ in stored(index_dir)} == {"coffee.txt"}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "no files under"),
        ({".hidden.txt": "x", ".git/config": "y"}, "no files under"),
        ({"a.png": PNG, "bad.txt": b"\xff\x00\xfa", "empty.md": ""},
         "no text in the 3 files"),
    ],
)
def test_index_without_readable_text_exits_2(vrsd, tmp_path, files, message):
    docs = write(tmp_path / "docs", files)
    docs.mkdir(exist_ok=True)
    run = vrsd("index", docs, "--index-dir", tmp_path / "index")
    assert run.code == 2
    assert message in run.err and "Traceback" not in run.err
    assert not (tmp_path / "index").exists()


def test_index_path_errors_exit_2(vrsd, tmp_path):
    missing = vrsd("index", tmp_path / "missing", "--index-dir", tmp_path / "index")
    assert missing.code == 2 and "does not exist" in missing.err
    (tmp_path / "file.txt").write_text("text")
    not_dir = vrsd("index", tmp_path / "file.txt", "--index-dir", tmp_path / "index")
    assert not_dir.code == 2 and "is not a folder" in not_dir.err
    overlap = vrsd("index", tmp_path, "--chunk-size", "100", "--chunk-overlap", "100")
    assert overlap.code == 2 and "chunk_overlap" in overlap.err


def test_search_errors_exit_2(vrsd, tmp_path):
    run = vrsd("search", "anything", "--index-dir", tmp_path / "nowhere")
    assert run.code == 2
    assert "no index at" in run.err and "vrsd index PATH" in run.err
    docs = write(tmp_path / "docs", {"coffee.txt": COFFEE})
    assert vrsd("index", docs, "--index-dir", tmp_path / "index").code == 0
    bad = vrsd("search", "coffee", "--index-dir", tmp_path / "index", "--method", "nope")
    assert bad.code == 2 and "--method: unknown method 'nope'" in bad.err
    value = vrsd("search", "coffee", "--index-dir", tmp_path / "index",
                 "--method", "mmr:lambda_mult=2")
    assert value.code == 2 and "lambda_mult: must be in [0, 1], got 2" in value.err
    assert value.err.startswith("vrsd search: error: --method: ")
    assert "validation error" not in value.err  # said plainly, not as a pydantic dump
    empty = vrsd("search", "  ", "--index-dir", tmp_path / "index")
    assert empty.code == 2 and "query: empty" in empty.err


def test_default_index_dir_is_dot_vrsd_in_the_working_directory(vrsd, tmp_path, monkeypatch):
    docs = write(tmp_path / "docs", {"rome.txt": ROME})
    monkeypatch.chdir(tmp_path)
    assert vrsd("index", "docs", *CHUNK).code == 0
    assert (tmp_path / ".vrsd" / "index" / "vrsd_index.sqlite").is_file()
    run = vrsd("search", "Roman emperor", "--k", "1")
    assert run.code == 0 and "rome.txt" in run.out
    assert docs.is_dir()


def test_search_says_its_method_and_what_it_held_back(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"coffee.txt": COFFEE, "copy.txt": COFFEE, "sleep.md": SLEEP,
                                     "rome.txt": ROME})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    ask = ["search", "how long does caffeine last?", "--index-dir", index_dir, "--k", "3"]
    run = vrsd(*ask)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    as_json = json.loads(vrsd(*ask, "--json").out)
    held = as_json["index_chunks"]
    assert 8 <= held < DEFAULT_FETCH_K  # fewer than fetched by default: said so
    assert lines[1] == (f"method: complement (the default): 3 kept of {held} fetched by "
                        f"similarity (--k 3, --fetch-k {DEFAULT_FETCH_K}: the index holds "
                        f"only {held} chunks)")
    assert lines[2].startswith("relevance: the fused score the default ranked by, "
                               "z(z(cosine) + z(BM25")
    assert "held back from top-3 by relevance: " in run.out  # the copies
    assert "   - held back" in run.out
    assert (as_json["method"], as_json["options"], as_json["method_label"]) == (
        "complement", {}, "complement (the default)")
    assert (as_json["k"], as_json["fetch_k"], as_json["kept"], as_json["fetched"]) == (
        3, DEFAULT_FETCH_K, 3, held)
    top = as_json["results"][0]
    assert top["metadata"]["source"] in {"coffee.txt", "copy.txt"}
    assert {"relevance", "cosine", "lexical", "rank"} <= set(top["metadata"]["vrsd"])
    assert sum(len(r["metadata"]["vrsd"].get("held_back", [])) for r in as_json["results"]) >= 1
    mmr = vrsd(*ask, "--method", "mmr:lambda_mult=0.7", "--fetch-k", "8")
    assert "method: mmr:lambda_mult=0.7: 3 kept of 8 fetched by similarity\n" in mmr.out
    mmr_json = json.loads(vrsd(*ask, "--method", "mmr:lambda_mult=0.7", "--json").out)
    assert (mmr_json["method"], mmr_json["options"]) == ("mmr", {"lambda_mult": 0.7})
    assert "relevance: cosine to the question" in mmr.out and "held back" not in mmr.out


def test_search_returns_fewer_than_k_rather_than_copies_and_says_so(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"a/coffee.txt": COFFEE, "b/coffee.txt": COFFEE})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    ask = ["search", "how long does caffeine last?", "--index-dir", index_dir, "--k", "5"]
    run = vrsd(*ask)
    assert run.code == 0, run.err
    assert run.out.startswith("3 results")  # three chunks, each in two files
    assert "3 results of the 5 asked: every other candidate repeats one of these" in run.out
    assert "held back from top-5 by relevance: 2 (2 restates)" in run.out  # top-5 held two copies
    assert run.out.count("restates this") == 2
    results = json.loads(vrsd(*ask, "--json").out)["results"]
    assert {r["metadata"]["vrsd"]["stopped"] for r in results} == {"restatements"}
    assert len({r["text"] for r in results}) == 3
    filled = vrsd(*ask, "--fill-with-copies")
    assert filled.out.startswith("5 results") and filled.out.count("[a copy: restates #") == 2
    assert "every other candidate" not in filled.out


def test_held_back_entries_print_their_source_rank_relation_and_excerpt():
    from langchain_core.documents import Document

    held = [{"id": "a1", "rank": 1, "source": "copy.txt", "excerpt": "Caffeine has a  half-life",
             "relation": "restates"},
            {"id": None, "rank": 3, "source": None, "excerpt": "Decaf still has some",
             "relation": "displaced"}]
    doc = Document(page_content="Caffeine has a half-life of about five hours.", metadata={
        "source": "coffee.txt", "chunk": 0,
        "vrsd": {"rank": 0, "relevance": 1.2, "cosine": 0.8, "lexical": 3.0, "held_back": held}})
    out = format_hits("caffeine?", [doc], method="complement (the default)", k=1, fetch_k=20,
                      fetched=20)
    assert "held back from top-1 by relevance: 2 (1 restates, 1 made room for)" in out
    assert ('   - held back copy.txt (#1 by relevance): restates this: '
            '"Caffeine has a half-life"') in out
    assert '   - held back ? (#3 by relevance): made room for this: "Decaf still has some"' in out
    by_cosine = Document(page_content=doc.page_content, metadata={
        **doc.metadata, "vrsd": {"rank": 0, "relevance": 0.8, "held_back": held}})
    out = format_hits("caffeine?", [by_cosine], method="complement (the default, vectors "
                      "only)", k=1, fetch_k=20, fetched=20)  # a rank by the cosine says so
    assert "held back from top-1 by cosine: 2" in out
    assert "   - held back copy.txt (#1 by cosine): restates this" in out
    old = Document(page_content="x", metadata={"vrsd": {"rank": 0, "relevance": 0.5,
                                                        "held_back": ["id-1", 7]}})
    assert "   - held back: id-1, 7" in format_hits("q", [old], method="m", k=1, fetch_k=4,
                                                 fetched=4)


ED_WOOD = ("Ed Wood is a 1994 American biographical comedy-drama film directed and produced by "
           "Tim Burton, starring Johnny Depp as the cult filmmaker Ed Wood.")
BURTON = ("Tim Burton was in a long relationship with the English actress Helena Bonham "
          "Carter, whom Tim Burton met while filming Planet of the Apes.")


def test_search_says_which_result_a_link_brought_in(vrsd, tmp_path):
    """The second hop of a multi-hop question: far from the question, brought in by the
    bridge the first result names; --vectors-only (the words off) has no links."""
    files = {"ed.txt": ED_WOOD, "burton.txt": BURTON,
             "depp.txt": "Johnny Depp starred in many films and played Ed Wood in a "
                         "biographical film."}
    files |= {f"wood{i}.txt": f"Ed Wood the filmmaker made low-budget science fiction films "
              f"in the 1950s, part {i} of a review of cult cinema and its audiences."
              for i in range(8)}
    docs = write(tmp_path / "docs", files)
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir).code == 0
    question = "Who is the partner of the director of Ed Wood?"
    run = vrsd("search", question, "--index-dir", index_dir, "--k", "3")
    assert run.code == 0, run.err
    assert "1. ed.txt" in run.out and "3. burton.txt" in run.out
    assert "\n   linked to #1 by: Tim Burton\n" in run.out
    plain = vrsd("search", question, "--index-dir", index_dir, "--k", "3", "--vectors-only")
    assert "burton.txt" not in plain.out and "linked to" not in plain.out


def test_vrsd_search_prints_the_link():
    from langchain_core.documents import Document

    from vrsd_cli.printing import format_hits

    docs = [Document("Ed Wood is a 1994 film directed by Tim Burton.",
                     metadata={"source": "a.txt", "chunk": 0,
                               "vrsd": {"rank": 0, "relevance": 1.2}}),
            Document("Tim Burton married Helena Bonham Carter.",
                     metadata={"source": "b.txt", "chunk": 3,
                               "vrsd": {"rank": 1, "relevance": -0.4, "linked_to": {
                                   "id": "a.txt", "rank": 1, "words": ["Tim Burton"]}}})]
    out = format_hits("Who is the partner of the director of Ed Wood?", docs,
                      method="complement", k=2, fetch_k=20, fetched=20)
    assert "\n   linked to #1 by: Tim Burton\n" in out  # under its result, indented
    assert out.count("linked to") == 1
