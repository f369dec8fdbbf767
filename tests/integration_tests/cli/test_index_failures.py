"""The index under a full disk, a reader racing commits and vectors that are not
finite: a failed commit changes nothing, frees what it wrote and names the path and the
room it needs; a commit needs room for what changed, not for copies of the index; a
reader reads one committed state whatever lands meanwhile; a vector that is not finite
is refused when written.

A full disk is a small tmpfs mounted for the test (skipped, with the reason, where it
cannot be mounted: mounting needs root)."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli_fixtures import stored, write
from tests.integration_tests.cli.test_index_store import (
    CHUNK,
    SIZE,
    check_exact,
    edit_round,
    expected,
    note,
)
from vrsd_cli.hashing_embeddings import HashingEmbeddings
from vrsd_cli.indexing import HASHING_TEST_MODEL, index_folder, open_index


@contextlib.contextmanager
def small_disk(path: Path, megabytes: int) -> Iterator[Path]:
    """A tmpfs of ``megabytes`` mounted at ``path`` while the block runs."""
    path.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs",
                        str(path)], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"a full disk needs a small tmpfs, which cannot be mounted here ({exc})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True,
                       timeout=30)


def fill(disk: Path, leave: int) -> Path:
    """A file taking all the room on ``disk`` but ``leave`` bytes."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    free = shutil.disk_usage(disk).free
    with open(filler, "wb") as file:
        file.write(b"\0" * max(0, free - leave))
    return filler


def index_and_check(vrsd, docs: Path, index_dir: Path) -> None:
    """``vrsd index`` exits 0 and the index is exact (on a sample of its chunks)."""
    run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert run.code == 0, run.err
    check_exact(index_dir, expected(docs), set(), sample=500)


def test_a_full_disk_during_a_commit_changes_nothing_frees_its_files_and_says_what_it_needs(
        vrsd, tmp_path):
    rng = random.Random(11)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(60)})
    with small_disk(tmp_path / "disk", 16) as disk:
        index_dir = disk / "index"
        assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
        before = expected(docs)
        write(docs, {f"new/n{i}.md": note(rng, f"n{i}", 10) for i in range(300)})
        fill(disk, 0)  # not even the writer's record fits
        run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
        assert run.code == 2 and run.err.count("\n") == 1, run.err
        assert f"the disk holding {index_dir} is full: no room for " in run.err, run.err
        assert not [name for name in os.listdir(index_dir) if name.endswith(".tmp")]
        fill(disk, 256 * 1024)
        free = shutil.disk_usage(disk).free
        run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
        assert run.code == 2, run.err
        assert run.err.count("\n") == 1 and "Traceback" not in run.err, run.err
        assert f"the disk holding {index_dir}" in run.err and " is full: this commit needs " \
            "about " in run.err and "nothing was changed" in run.err, run.err
        assert shutil.disk_usage(disk).free >= free - 64 * 1024  # its files are gone
        assert set(stored(index_dir)) == before  # the index as it was, readable
        # the room it says it needs is enough: freed to exactly that, the run succeeds
        needed = re.search(r"this commit needs about ([0-9.]+) MB free", run.err)
        assert needed is not None, run.err
        fill(disk, int(float(needed.group(1)) * 1e6))
        index_and_check(vrsd, docs, index_dir)


def wordy(rng: random.Random, paragraphs: int) -> str:
    """A file of ``paragraphs`` paragraphs of 800 characters, nearly every word of it rare
    (a vocabulary of 50,000): what the index's word tables grow by most."""
    return "\n\n".join(" ".join(f"w{rng.randrange(50_000)}" for _ in range(120))[:800]
                       for _ in range(paragraphs))


def test_the_room_a_full_disk_asks_for_is_enough_for_texts_of_many_words(vrsd, tmp_path):
    rng = random.Random(14)
    wide = ["--chunk-size", "800", "--chunk-overlap", "0", *CHUNK[4:]]
    docs = write(tmp_path / "docs", {f"f{i}.md": wordy(rng, 10) for i in range(20)})
    with small_disk(tmp_path / "disk", 96) as disk:
        index_dir = disk / "index"
        assert vrsd("index", docs, "--index-dir", index_dir, *wide).code == 0
        write(docs, {f"new/n{i}.md": wordy(rng, 10) for i in range(400)})
        fill(disk, 256 * 1024)
        run = vrsd("index", docs, "--index-dir", index_dir, *wide)
        needed = re.search(r"this commit needs about ([0-9.]+) MB free", run.err)
        assert run.code == 2 and needed is not None, run.err
        fill(disk, int(float(needed.group(1)) * 1e6))
        run = vrsd("index", docs, "--index-dir", index_dir, *wide)
        assert run.code == 0, run.err


def test_a_commit_needs_room_for_what_changed_not_for_a_copy_of_the_index(vrsd, tmp_path):
    rng = random.Random(12)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(300)})
    with small_disk(tmp_path / "disk", 24) as disk:
        index_dir = disk / "index"
        assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
        size = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())
        assert size > 4e6  # the room left below is less than a third of one copy
        fill(disk, 1024 * 1024)
        for round_ in range(1, 4):
            edit_round(docs, rng, round_, 1)  # one file deleted, one changed, one added
            index_and_check(vrsd, docs, index_dir)


def test_a_reader_racing_two_commits_reads_one_committed_state(tmp_path, monkeypatch):
    rng = random.Random(13)
    docs = write(tmp_path / "docs", {f"f{i}.md": note(rng, f"f{i}", 10) for i in range(40)})
    index_dir = tmp_path / "index"

    def commit() -> None:
        index_folder(docs, index_dir=index_dir, chunk_size=SIZE, chunk_overlap=0,
                     model=HASHING_TEST_MODEL)
        states.append(expected(docs))

    def two_commits() -> None:
        for round_ in range(2):
            edit_round(docs, rng, len(states) + round_, 5)
            commit()

    def read_all() -> set[tuple[str, int, str]]:
        with open_index(index_dir) as index:
            rows = index.rows()
            return {(index.source(r.file), r.chunk, t) for r, t in
                    zip(index.records(rows), index.texts(rows), strict=True)}

    states: list[set[tuple[str, int, str]]] = []
    commit()
    # two commits landing while a reader opens the index (here: while it loads vectors
    # from a file, where a store that keeps them in one does so)
    load, raced = np.load, []

    def load_racing(*args, **kwargs):
        loaded = load(*args, **kwargs)
        if not raced:
            raced.append(True)
            two_commits()
        return loaded

    with monkeypatch.context() as patched:
        patched.setattr(np, "load", load_racing)
        assert read_all() in states
    # two commits landing while a reader holds the index open
    with open_index(index_dir) as index:
        held = len(states) - 1
        two_commits()
        rows = index.rows()
        seen = {(index.source(r.file), r.chunk, t) for r, t in
                zip(index.records(rows), index.texts(rows), strict=True)}
        assert seen == states[held]
        assert len(index.vectors(rows)) == len(rows)
    assert read_all() == states[-1]


def test_a_vector_that_is_not_finite_is_refused_and_the_index_is_kept(vrsd, tmp_path,
                                                                        monkeypatch):
    docs = write(tmp_path / "docs", {"a.md": "A note on kettles.", "b.md": "On rivers."})
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, *CHUNK).code == 0
    write(docs, {"c.md": "A note on lanterns."})
    embed = HashingEmbeddings.embed_documents

    def embed_documents(self, texts):
        return [[float("nan")] * self.size if "lanterns" in text else vector
                for text, vector in zip(texts, embed(self, texts), strict=True)]

    monkeypatch.setattr(HashingEmbeddings, "embed_documents", embed_documents)
    run = vrsd("index", docs, "--index-dir", index_dir, *CHUNK)
    assert run.code == 2 and run.err.count("\n") == 1, run.err
    assert f"the vector of {docs / 'c.md'} chunk 0 is not finite" in run.err, run.err
    assert {source for source, _, _ in stored(index_dir)} == {"a.md", "b.md"}
