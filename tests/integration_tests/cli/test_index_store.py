"""The index behind ``vrsd index`` / ``vrsd search``: exact after any sequence of edits,
one writer at a time, consistent for readers, the folder as the boundary, and state a
user can read (interrupted, damaged, large files, unique sources).

Everything runs on ``--model test:hashing`` (``vrsd_cli.hashing_embeddings``: a text's
vector drawn from its hash, no model loaded), so thousands of chunks take seconds."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from langchain_text_splitters import RecursiveCharacterTextSplitter

from tests.helpers.cli_fixtures import stored, write
from vrsd_cli import flat_index
from vrsd_cli.hashing_embeddings import HashingEmbeddings
from vrsd_cli.indexing import HASHING_TEST_MODEL, index_folder, open_index, search_index

ROOT = Path(__file__).resolve().parents[3]
HASHING = ["--model", HASHING_TEST_MODEL]
SIZE = 200
CHUNK = ["--chunk-size", str(SIZE), "--chunk-overlap", "0", *HASHING]


def note(rng: random.Random, tag: str, paragraphs: int) -> str:
    """A file of ``paragraphs`` paragraphs (one chunk each), every one unique to ``tag``."""
    words = ["kettle", "river", "lantern", "orbit", "pepper", "violin", "quartz", "meadow"]
    return "\n\n".join(f"{tag} part {p}: " + " ".join(rng.choice(words) for _ in range(18))
                       for p in range(paragraphs))


def expected(folder: Path, prefix: str = "") -> set[tuple[str, int, str]]:
    """(source, chunk, text) of every chunk of the folder's files, split here directly."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=0)
    return {(prefix + path.relative_to(folder).as_posix(), i, text)
            for path in folder.rglob("*") if path.is_file()
            for i, text in enumerate(splitter.split_text(path.read_text(encoding="utf-8")))}


def unit(texts: list[str]) -> np.ndarray:
    vectors = np.asarray(HashingEmbeddings().embed_documents(texts), "f4")
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def settings(index_dir: Path) -> dict:
    """The index's settings (model, dimension, the folders indexed)."""
    with open_index(index_dir) as index:
        return index.manifest


def check_exact(index_dir: Path, live: set[tuple[str, int, str]], gone: set[str],
                sample: int | None = None) -> None:
    """The index holds exactly ``live``; every live chunk (or ``sample`` of them, drawn
    at random) is the first hit for its own text's vector, and no text of ``gone`` is
    ever a hit."""
    assert set(stored(index_dir)) == live
    texts = sorted(text for _, _, text in live)
    if sample is not None and sample < len(texts):
        texts = sorted(random.Random(len(texts)).sample(texts, sample))
    with open_index(index_dir) as index:
        first = index.texts(index.top(unit(texts), 1)[:, 0])
        assert first == texts
        if gone:
            hits = index.top(unit(sorted(gone)), 5)
            assert not set(index.texts(hits.ravel())) & gone


def edit_round(folder: Path, rng: random.Random, round_: int, count: int) -> None:
    """Delete ``count`` files, change ``count`` (some paragraphs kept, some new, some
    dropped) and add ``count``."""
    files = sorted(folder.rglob("*.md"))
    rng.shuffle(files)
    for path in files[:count]:
        path.unlink()
    for path in files[count:2 * count]:
        parts = path.read_text(encoding="utf-8").split("\n\n")
        parts[rng.randrange(len(parts))] = note(rng, f"{path.stem} r{round_}", 1)
        path.write_text("\n\n".join(parts[:rng.randint(3, len(parts))]), encoding="utf-8")
    for i in range(count):
        write(folder, {f"new{round_}/n{i}.md": note(rng, f"new{round_}-{i}", 8)})


def test_rounds_of_added_changed_and_deleted_files_keep_the_search_exact(vrsd, tmp_path):
    rng = random.Random(7)
    docs = write(tmp_path / "docs", {f"d{i // 50}/f{i}.md": note(rng, f"f{i}", 10)
                                     for i in range(300)})
    index_dir = tmp_path / "index"
    before: set[tuple[str, int, str]] = set()
    for round_ in range(5):
        if round_:
            edit_round(docs, rng, round_, 30)
        run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
        assert run.code == 0, run.err
        live = expected(docs)
        assert len(live) >= 2000
        texts = {text for _, _, text in live}
        check_exact(index_dir, live, {text for _, _, text in before} - texts)
        if round_:
            assert "(0 added" not in run.out and ", 0 deleted" not in run.out
        before = live
    for source, chunk, text in random.Random(1).sample(sorted(before), 5):
        top = search_index(text, index_dir=index_dir, method="similarity", k=1)
        assert (top[0].metadata["source"], top[0].metadata["chunk"]) == (source, chunk)


def vrsd_process(*args: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "vrsd_cli.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_second_writer_exits_2_naming_the_first_and_the_index_stays_exact(vrsd, tmp_path):
    rng = random.Random(3)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(1500)})
    other = write(tmp_path / "other", {"o.md": note(rng, "other", 3)})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    edit_round(docs, rng, 1, 100)
    first = vrsd_process("index", docs, "--index-dir", index_dir, *CHUNK)
    deadline = time.monotonic() + 120
    while not (index_dir / flat_index.WRITER).exists():  # it holds the lock from here
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.002)
    os.kill(first.pid, signal.SIGSTOP)  # hold it there while the second one tries
    try:
        second = vrsd_process("index", other, "--index-dir", index_dir, *CHUNK)
        out, err = second.communicate(timeout=120)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"vrsd index: error: index_dir: {index_dir} is being written by "
                          f"pid {first.pid} on {socket.gethostname()}, started "), err
    assert f"vrsd index {docs}" in err
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    check_exact(index_dir, expected(docs), set(), sample=500)
    assert vrsd("index", other, "--index-dir", index_dir, *CHUNK).code == 0
    check_exact(index_dir, expected(docs, "docs/") | expected(other, "other/"), set(),
                sample=500)
    assert set(settings(index_dir)["folders"]) == {str(docs), str(other)}


@pytest.mark.filterwarnings("ignore:'vrsd index .* is running")
def test_a_search_during_an_index_reads_one_committed_state(vrsd, tmp_path):
    rng = random.Random(5)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(600)})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    states = [expected(docs)]
    for round_ in range(1, 4):
        edit_round(docs, rng, round_, 60)
        states.append(expected(docs))
        writer = vrsd_process("index", docs, "--index-dir", index_dir, *CHUNK)
        reads = 0
        while writer.poll() is None or not reads:
            with open_index(index_dir) as index:
                rows = index.rows()
                docs_now = {(index.source(r.file), r.chunk, t) for r, t in
                            zip(index.records(rows), index.texts(rows), strict=True)}
                assert docs_now in (states[-2], states[-1])
                sample = rows[:: max(1, len(rows) // 40)]
                assert np.allclose(index.vectors(sample), unit(index.texts(sample)), atol=1e-6)
            reads += 1
        assert writer.wait() == 0, writer.stderr.read() if writer.stderr else ""
    check_exact(index_dir, states[-1], set(), sample=500)


def test_the_folder_is_the_boundary(vrsd, tmp_path, monkeypatch):
    outside = write(tmp_path / "outside", {"secret.txt": "The vault code is 4471.",
                                           "dir/more.txt": "Outside folder text."})
    docs = write(tmp_path / "docs", {"a.md": "A note on kettles.", "locked/b.md": "Locked."})
    (docs / "secret.txt").symlink_to(outside / "secret.txt")
    (docs / "linked").symlink_to(outside / "dir")
    (docs / "gone.md").symlink_to(tmp_path / "nowhere.md")
    (docs / "inside.md").symlink_to(docs / "a.md")  # inside the folder: read
    os.mkfifo(docs / "pipe")  # read, it would block forever
    scandir = os.scandir

    def unreadable(path):  # as for a folder without read permission (tests may run as root)
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr("vrsd_cli.indexing.os.scandir", unreadable)
    index_dir = tmp_path / "index"
    run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert run.code == 0, run.err
    assert {source for source, _, _ in stored(index_dir)} == {"a.md", "inside.md"}
    assert "4471" not in run.out + run.err
    for name, reason in [("secret.txt", "outside the folder"), ("linked", "folder symlink"),
                         ("gone.md", "dangling link"), ("locked", "unreadable folder"),
                         ("pipe", "not a regular file")]:
        assert f"skipped {docs / name}: {reason}" in run.err, (name, run.err)
    summary = [line for line in run.err.splitlines() if line.startswith("vrsd index: skipped")]
    assert summary == ["vrsd index: skipped 5 of 7 entries (1 dangling link, 1 folder symlink, "
                       "1 not a regular file, 1 outside the folder, 1 unreadable folder); "
                       "--follow-symlinks reads links"], run.err
    followed = vrsd("index", docs, "--index-dir", index_dir, *CHUNK, "--follow-symlinks")
    assert followed.code == 0, followed.err
    sources = {source for source, _, _ in stored(index_dir)}
    assert {"secret.txt", "linked/more.txt"} <= sources
    assert "gone.md" not in sources and "skipped 3 of 7 entries" in followed.err


def interrupt_after(monkeypatch, calls: int) -> None:
    """Ctrl-C while the ``calls``-th batch is being embedded."""
    embed = HashingEmbeddings.embed_documents
    seen = []

    def embed_documents(self, texts):
        seen.append(len(texts))
        if len(seen) == calls:
            raise KeyboardInterrupt
        return embed(self, texts)

    monkeypatch.setattr(HashingEmbeddings, "embed_documents", embed_documents)


def test_an_interrupted_index_says_so_and_how_to_finish(vrsd, tmp_path, monkeypatch):
    rng = random.Random(2)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(60)})
    index_dir = tmp_path / "index"
    with monkeypatch.context() as mp:
        interrupt_after(mp, 2)
        assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 130
    first = vrsd("search", "kettle", "--index-dir", index_dir)
    assert first.code == 2 and first.err.count("\n") == 1
    assert f"no index at {index_dir} yet: the last 'vrsd index {docs}' (started " in first.err
    assert f"was interrupted; run 'vrsd index {docs}' again to finish it" in first.err
    again = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert again.code == 0 and "finishing the interrupted 'vrsd index" in again.err
    ok = vrsd("search", "kettle", "--index-dir", index_dir)
    assert ok.code == 0 and ok.err == ""
    edit_round(docs, rng, 1, 10)
    with monkeypatch.context() as mp:
        interrupt_after(mp, 1)
        assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 130
    stale = vrsd("search", "kettle", "--index-dir", index_dir)
    assert stale.code == 0 and stale.err.count("\n") == 1
    assert stale.err.startswith("vrsd search: warning: the last 'vrsd index") and \
        "was interrupted; run" in stale.err
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    check_exact(index_dir, expected(docs), set())


def edit_database(index_dir: Path, sql: str, *args: object) -> None:
    """Change the index's database behind the store's back (with ``sqlite-vec`` loaded,
    for its vector table)."""
    db = flat_index.connect(index_dir / flat_index.DATABASE)
    try:
        db.execute(sql, args)
    finally:
        db.close()


DAMAGE = ["not a database", "a table dropped", "a setting not JSON", "model 5",
          "dimension x", "folders a list", "a text not text", "a vector not finite",
          "numpy generations", "Chroma era"]


def damage(index_dir: Path, how: str) -> tuple[Path, str]:
    """Break the index one way; returns the file a message should name and the folder
    its fix should name."""
    path = index_dir / flat_index.DATABASE
    folder = next(iter(settings(index_dir)["folders"]))
    if how == "not a database":
        path.write_bytes(b"not a database" * 100)
        return path, "PATH"
    if how in ("a table dropped", "a setting not JSON", "model 5", "dimension x",
               "folders a list", "a text not text", "a vector not finite"):
        edit_database(index_dir, {
            "a table dropped": "DROP TABLE chunks",
            "a setting not JSON": "UPDATE settings SET value = '{' WHERE key = 'model'",
            "model 5": "UPDATE settings SET value = '5' WHERE key = 'model'",
            "dimension x": "UPDATE settings SET value = '\"x\"' WHERE key = 'dimension'",
            "folders a list": "UPDATE settings SET value = '[]' WHERE key = 'folders'",
            "a text not text": "UPDATE chunks SET text = X'00ff'",
            "a vector not finite": "UPDATE vectors SET embedding = ?",
        }[how], *([np.full(settings(index_dir)["dimension"], np.nan, "f4").tobytes()]
                  if how == "a vector not finite" else []))
        return path, "PATH" if how in ("a setting not JSON", "folders a list") else folder
    for name in os.listdir(index_dir):  # an index an older vrsd wrote, and no database
        if name.startswith(flat_index.DATABASE):
            (index_dir / name).unlink()
    if how == "numpy generations":
        (index_dir / "generation-000003").mkdir()
        (index_dir / "generation-000003" / "vectors.npy").write_bytes(b"old")
        (index_dir / "vrsd_index.json").write_text(json.dumps(
            {"format": 2, "model": None, "generation": 3, "dimension": 2,
             "folders": {"/some/notes": {}}}), encoding="utf-8")
        return index_dir, "/some/notes"
    assert how == "Chroma era"
    (index_dir / "vrsd_index.json").write_text(
        json.dumps({"model": None, "folders": {"/some/notes": {}}}), encoding="utf-8")
    (index_dir / "chroma").mkdir()
    return index_dir, "/some/notes"


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_index_names_the_file_and_the_fix(vrsd, tmp_path, how):
    docs = write(tmp_path / "docs", {"a.md": "A note on kettles.", "b.md": "On rivers."})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    named, folder = damage(index_dir, how)
    # a text or a vector is read where a search meets it (writes refuse what is not one)
    commands = [["search", "kettles"]] if how in ("a text not text", "a vector not finite") else \
        [["search", "kettles"], ["index", docs, *CHUNK]]
    for command in commands:
        run = vrsd(*command, "--index-dir", index_dir)
        assert run.code == 2, (command, run.err)
        assert run.err.count("\n") == 1 and "Traceback" not in run.err
        assert str(named) in run.err and f"rebuild it: vrsd index --rebuild {folder}" \
            in run.err, run.err
    rebuilt = vrsd("index", docs, "--index-dir", index_dir, *CHUNK, "--rebuild")
    assert rebuilt.code == 0, rebuilt.err
    assert set(os.listdir(index_dir)) == {flat_index.DATABASE, flat_index.LOCK}
    check_exact(index_dir, expected(docs), set())


def test_a_large_file_is_announced_before_the_work_and_can_be_skipped_or_capped(
        vrsd, tmp_path, monkeypatch):
    rng = random.Random(4)
    docs = write(tmp_path / "docs", {"small.md": note(rng, "small", 3),
                                     "big.txt": note(rng, "big", 12_000)})
    size = (docs / "big.txt").stat().st_size
    assert 1.5e6 < size < 3e6
    lines: list[str] = []
    first_encode: list[int] = []
    embed = HashingEmbeddings.embed_documents

    def embed_documents(self, texts):
        first_encode.append(len(lines))
        return embed(self, texts)

    monkeypatch.setattr(HashingEmbeddings, "embed_documents", embed_documents)
    index_dir = tmp_path / "index"
    report = index_folder(docs, index_dir=index_dir, chunk_size=SIZE, chunk_overlap=0,
                          model=HASHING_TEST_MODEL, large_file_mb=1, notes=lines.append)
    assert first_encode[0] == len(lines) == 2  # both lines came before any encoding
    assert lines[0] == (f"large file big.txt: {size / 1e6:.1f} MB, read whole: "
                        f"{report.chunks - 3} chunks")
    assert lines[1].startswith(f"this run embeds {report.chunks} chunks not cached yet: about ")
    assert "--large-files skip" in lines[1] and "--large-files cap" in lines[1]
    skip = vrsd("index", docs, "--index-dir", tmp_path / "skip", *CHUNK, "--large-file-mb",
                "1", "--large-files", "skip")
    assert skip.code == 0 and "big.txt: large: " in skip.err and "(1 large)" in skip.err
    assert {source for source, _, _ in stored(tmp_path / "skip")} == {"small.md"}
    cap = vrsd("index", docs, "--index-dir", tmp_path / "cap", *CHUNK, "--large-file-mb",
               "1", "--large-files", "cap")
    assert cap.code == 0, cap.err
    assert "vrsd index: large file big.txt: " in cap.err and "read up to 1 MB" in cap.err
    kept = "".join(text for source, _, text in stored(tmp_path / "cap") if source == "big.txt")
    assert 0.9e6 < len(kept) <= 1e6
    assert vrsd("index", docs, "--large-files", "some").code == 2
    assert vrsd("index", docs, "--large-file-mb", "0").code == 2


def test_sources_are_unique_across_folders_and_nested_runs_add_nothing(vrsd, tmp_path):
    notes = write(tmp_path / "notes", {"projA/README.md": "Project A builds kettles.",
                                       "projB/README.md": "Project B maps rivers.",
                                       "projB/sub/deep.md": "A deep note on lanterns."})
    index_dir = tmp_path / "index"
    for folder in ("projA", "projB"):
        assert vrsd("index", notes / folder, "--index-dir", index_dir, *CHUNK).code == 0
    assert [source for source, _, _ in stored(index_dir)] == [
        "projA/README.md", "projB/README.md", "projB/sub/deep.md"]
    nested = vrsd("index", notes / "projB" / "sub", "--index-dir", index_dir, *CHUNK)
    assert nested.code == 0 and "(0 added, 1 unchanged, 0 deleted)" in nested.out
    whole = vrsd("index", notes, "--index-dir", index_dir, *CHUNK)
    assert whole.code == 0 and "(0 added, 3 unchanged, 0 deleted)" in whole.out
    assert len(stored(index_dir)) == 3
    assert set(settings(index_dir)["folders"]) == {str(notes / "projA"), str(notes / "projB"),
                                        str(notes / "projB" / "sub"), str(notes)}
    found = vrsd("search", "Project B", "--index-dir", index_dir, "--json")
    sources = {r["metadata"]["source"] for r in json.loads(found.out)["results"]}
    assert "projB/README.md" in sources and "README.md" not in sources


def test_exact_top_breaks_ties_toward_the_lower_row(tmp_path):
    vectors = np.array([[1, 0], [0, 1], [1, 0], [0.6, 0.8], [1, 0]], dtype="f4")
    chunks = [flat_index.NewChunk(f"/f{i}", 0, f"t{i}", flat_index.digest(f"t{i}"))
              for i in range(5)]
    manifest = {"model": None, "dimension": 2, "folders": {}}
    with flat_index.IndexWriter(tmp_path) as store:
        store.commit(manifest, [], chunks, vectors)
    with flat_index.open_flat(tmp_path) as index:
        first, second, third, fourth, fifth = index.rows().tolist()
        assert index.top(np.array([2.0, 0.0]), 2).tolist() == [first, third]
        assert index.top(np.array([2.0, 0.0]), 4).tolist() == [first, third, fifth, fourth]
        assert index.top(np.array([[0.0, 1.0], [1.0, 0.0]]), 1).tolist() == [[second],
                                                                              [first]]
        assert index.top(np.array([0.0, 1.0]), 9).tolist() == [second, fourth, first, third,
                                                                fifth]


def test_rebuild_starts_afresh_and_keeps_other_files(vrsd, tmp_path):
    a = write(tmp_path / "a", {"a.md": "A note on kettles."})
    b = write(tmp_path / "b", {"b.md": "A note on rivers."})
    index_dir = tmp_path / "index"
    (index_dir / "mine.txt").parent.mkdir()
    (index_dir / "mine.txt").write_text("a user's file beside the index", encoding="utf-8")
    for folder in (a, b):
        assert vrsd("index", folder, "--index-dir", index_dir, *CHUNK).code == 0
    assert set(settings(index_dir)["folders"]) == {str(a), str(b)}
    assert vrsd("index", b, "--index-dir", index_dir, *CHUNK, "--rebuild").code == 0
    assert list(settings(index_dir)["folders"]) == [str(b)]
    check_exact(index_dir, expected(b), set())
    assert (index_dir / "mine.txt").is_file()


def test_a_search_while_the_first_index_runs_says_so(vrsd, tmp_path):
    rng = random.Random(6)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(1500)})
    index_dir = tmp_path / "index"
    first = vrsd_process("index", docs, "--index-dir", index_dir, *CHUNK)
    deadline = time.monotonic() + 120
    while not (index_dir / flat_index.WRITER).exists():
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.002)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        run = vrsd("search", "kettle", "--index-dir", index_dir)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert run.code == 2 and run.err.count("\n") == 1, run.err
    assert (f"no index at {index_dir} yet: 'vrsd index {docs}' is running (pid {first.pid}, "
            "started ") in run.err and "search once it has finished" in run.err
    assert first.wait(timeout=300) == 0
    assert vrsd("search", "kettle", "--index-dir", index_dir).code == 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"large_files": "skp"}, "large_files: expected one of index, skip, cap, got 'skp'; "
                             "did you mean skip?"),
    ({"large_file_mb": 0}, "large_file_mb: expected a size in MB above 0, got 0"),
    ({"large_file_mb": "2"}, "large_file_mb: expected a size in MB above 0, got '2'"),
])
def test_index_folder_refuses_bad_large_file_settings(tmp_path, kwargs, message):
    docs = write(tmp_path / "docs", {"a.md": "A note."})
    with pytest.raises(ValueError, match="^" + message.replace("?", r"\?")):
        index_folder(docs, index_dir=tmp_path / "index", model=HASHING_TEST_MODEL, **kwargs)
    assert not (tmp_path / "index").exists()


def test_a_reindex_reads_only_the_files_that_changed(vrsd, tmp_path, monkeypatch):
    rng = random.Random(8)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 4) for i in range(30)})
    hour_ago = time.time() - 3600
    for path in docs.iterdir():
        os.utime(path, (hour_ago, hour_ago))
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    from vrsd_cli import indexing

    read: list[set[str]] = []
    real = indexing.read_chunks

    def spy(files, *args, **kwargs):
        read.append({path.name for path in files})
        return real(files, *args, **kwargs)

    monkeypatch.setattr(indexing, "read_chunks", spy)
    again = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert again.code == 0 and read == [], again.err  # nothing read, nothing to split
    assert "30 files, 120 chunks (0 added, 120 unchanged, 0 deleted)" in again.out
    (docs / "f1.md").write_text(note(rng, "f1 edited", 4), encoding="utf-8")
    os.utime(docs / "f1.md", (hour_ago + 60, hour_ago + 60))  # changed: read again
    (docs / "f2.md").unlink()
    write(docs, {"new.md": note(rng, "new", 2)})  # written just now: read
    os.utime(docs / "f3.md", (hour_ago, hour_ago + 1))  # touched, same text: read, unchanged
    changed = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert changed.code == 0, changed.err
    assert read[-1] == {"f1.md", "new.md", "f3.md"}
    assert "30 files, 118 chunks (6 added, 112 unchanged, 8 deleted)" in changed.out
    check_exact(index_dir, expected(docs), set())
    assert vrsd("index", docs, "--index-dir", index_dir, "--chunk-size", "150",
                "--chunk-overlap", "0", *HASHING).code == 0
    assert len(read[-1]) == 30  # other chunk settings: every file read again
