"""What a kill, a signal or a damaged cache does to ``vrsd index`` and ``vrsd search``
(issue 52): real processes, real signals, the real embedding cache."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.cli_fixtures import as_a_terminal_starts_it, stored, write
from vrsd_cli import flat_index

ROOT = Path(__file__).resolve().parents[3]
NOTES = {"tea.md": "Green tea is steamed; black tea is oxidised before drying.",
         "kettle.md": "A kettle boils water in about three minutes on a strong stove.",
         "moss.md": "Moss grows on the north side of trees in damp forests."}


def damage_cache(cache: Path, how: str) -> int:
    """Every file of the embedding cache left as a kill or a full disk leaves one written
    in place: ``empty`` (0 bytes) or ``half`` (cut in the middle). Returns how many.

    The caches the earlier runs opened are closed first; SQLite's shared-memory index
    (``-shm``, mapped in memory by every open connection, never data) is left alone."""
    gc.collect()
    files = [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith("-shm")]
    for path in files:
        data = path.read_bytes()
        path.write_bytes(b"" if how == "empty" else data[:len(data) // 2])
    return len(files)


@pytest.mark.parametrize("how", ["empty", "half"])
def test_a_damaged_embedding_cache_does_not_block_index_or_search(vrsd, tmp_path, how):
    """Defect 1: a cache entry cut short made every later run fail ("Expecting value",
    naming nothing). Now the entry is encoded again and the run succeeds."""
    docs = write(tmp_path / "docs", NOTES)
    cache, index_dir = tmp_path / "cache", tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, "--cache-dir", cache).code == 0
    assert vrsd("search", "boiling water", "--index-dir", index_dir,
                "--cache-dir", cache).code == 0
    before = stored(index_dir)
    assert damage_cache(cache, how) >= 2
    again = vrsd("index", docs, "--index-dir", index_dir, "--cache-dir", cache, "--rebuild")
    assert again.code == 0, again.err
    assert "error" not in again.err
    assert stored(index_dir) == before
    found = vrsd("search", "boiling water", "--index-dir", index_dir, "--cache-dir", cache)
    assert found.code == 0, found.err
    assert "kettle.md" in found.out.split("\n\n")[1]


def vrsd_script(body: str, *args: object) -> subprocess.Popen[str]:
    """A real ``vrsd`` process: ``body`` (Python, may patch the CLI) then ``main(args)``."""
    code = textwrap.dedent(body) + "\nfrom vrsd_cli.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", "import sys\n" + code, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=as_a_terminal_starts_it)


_HOLD_WHILE_ENCODING = """
import time
from vrsd_cli.hashing_embeddings import HashingEmbeddings
def embed_documents(self, texts):
    print("encoding", file=sys.stderr, flush=True)
    time.sleep(300)
HashingEmbeddings.embed_documents = embed_documents
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_sigterm_ends_a_run_as_ctrl_c_does(tmp_path, vrsd, signum):
    """Defect 1: SIGTERM killed ``vrsd index`` on the spot (no clean-up, no word). Now it
    ends the run as Ctrl-C does: one line, exit 128 + the signal, the lock released, the
    run marked interrupted for the next reader."""
    docs = write(tmp_path / "docs", NOTES)
    index_dir = tmp_path / "index"
    proc = vrsd_script(_HOLD_WHILE_ENCODING, "index", docs, "--index-dir", index_dir,
                       "--model", "test:hashing")
    assert proc.stderr is not None
    assert proc.stderr.readline().strip() == "encoding", proc.communicate()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, (proc.returncode, err)
    assert err.startswith("vrsd: interrupted") and err.count("\n") == 1, err
    assert "Traceback" not in err
    record = json.loads((index_dir / flat_index.WRITER).read_text(encoding="utf-8"))
    assert record.get("interrupted"), record
    search = vrsd("search", "tea", "--index-dir", index_dir)
    assert search.code == 2 and "was interrupted; run 'vrsd index" in search.err
    again = vrsd("index", docs, "--index-dir", index_dir, "--model", "test:hashing")
    assert again.code == 0, again.err  # the lock was released
    assert "finishing the interrupted" in again.err


_STOP_AFTER_COMMIT = """
import os, signal
from vrsd_cli import flat_index
commit = flat_index.IndexWriter.commit
def commit_then_stop(*args, **kwargs):
    written = commit(*args, **kwargs)
    os.kill(os.getpid(), int(os.environ["VRSD_TEST_SIGNAL"]))
    return written
flat_index.IndexWriter.commit = commit_then_stop
"""


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT])
def test_a_kill_after_the_commit_is_not_called_interrupted(tmp_path, vrsd, signum):
    """Defect 8: a run killed after its commit left its record, and readers said "was
    interrupted, run it again". Its work is in the index: nothing is said."""
    docs = write(tmp_path / "docs", NOTES)
    index_dir = tmp_path / "index"
    os.environ["VRSD_TEST_SIGNAL"] = str(int(signum))
    try:
        proc = vrsd_script(_STOP_AFTER_COMMIT, "index", docs, "--index-dir", index_dir,
                           "--model", "test:hashing")
        out, err = proc.communicate(timeout=120)
    finally:
        del os.environ["VRSD_TEST_SIGNAL"]
    assert proc.returncode in (-signum, 128 + signum), err
    search = vrsd("search", "tea", "--index-dir", index_dir)
    assert search.code == 0 and search.err == "", search.err
    again = vrsd("index", docs, "--index-dir", index_dir, "--model", "test:hashing")
    assert again.code == 0 and "interrupted" not in again.err, again.err


@pytest.mark.parametrize("pid", [99999999999999999999, -5, 0, "x", None, 2**31])
def test_a_pid_no_process_can_have_is_not_running(tmp_path, vrsd, pid):
    """Defect 8: a writer's record naming pid 99999999999999999999 was reported running."""
    docs = write(tmp_path / "docs", NOTES)
    index_dir = tmp_path / "index"
    assert vrsd("index", docs, "--index-dir", index_dir, "--model", "test:hashing").code == 0
    import socket

    record = {"pid": pid, "host": socket.gethostname(), "started": "2000-01-01T00:00:00+00:00",
              "folder": "/elsewhere"}
    (index_dir / flat_index.WRITER).write_text(json.dumps(record), encoding="utf-8")
    assert flat_index.is_running(record) is False
    search = vrsd("search", "tea", "--index-dir", index_dir)
    assert search.code == 0
    assert "is running" not in search.err and "was interrupted" in search.err, search.err


# ------------------------------------------------------------ open what was checked


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read(vrsd, tmp_path, monkeypatch):
    """Defect 2: the walk checked each file, the read followed whatever stood there later.
    The swap is made between the walk and the reading (a hook on ``walk_folder``): a
    file and a folder replaced by links out of the folder are not read."""
    from vrsd_cli import indexing

    outside = write(tmp_path / "outside", {"secret.txt": "The vault code is 4471.",
                                           "dir/more.txt": "The safe opens with 9917."})
    docs = write(tmp_path / "docs", {"a.md": "A note on kettles.", "b.md": "Moss on trees.",
                                     "sub/c.md": "Tea is steamed."})
    walk = indexing.walk_folder

    def walk_then_swap(*args, **kwargs):
        found = walk(*args, **kwargs)
        (docs / "b.md").unlink()
        (docs / "b.md").symlink_to(outside / "secret.txt")
        (docs / "sub" / "c.md").unlink()
        (docs / "sub").rmdir()
        (docs / "sub").symlink_to(outside / "dir")
        (outside / "dir" / "c.md").write_text("The alarm code is 5521.", encoding="utf-8")
        return found

    monkeypatch.setattr(indexing, "walk_folder", walk_then_swap)
    index_dir = tmp_path / "index"
    run = vrsd("index", docs, "--index-dir", index_dir, "--model", "test:hashing")
    assert run.code == 0, run.err
    texts = " ".join(text for _, _, text in stored(index_dir))
    assert "4471" not in texts and "5521" not in texts
    assert {source for source, _, _ in stored(index_dir)} == {"a.md"}
    assert f"skipped {docs / 'b.md'}: outside the folder" in run.err
    assert f"skipped {docs / 'sub' / 'c.md'}: outside the folder" in run.err


# ------------------------------------------------------------------- read bounded


def sparse(path: Path, size: int, head: bytes) -> Path:
    """A file of ``size`` bytes that takes no disk: ``head``, then a hole (NUL bytes)."""
    with open(path, "wb") as file:
        file.write(head)
        file.truncate(size)
    return path


_MEMORY_LIMIT = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
"""


@pytest.mark.parametrize("extra", [(), ("--max-file-mb", "10000")])
def test_a_huge_file_with_a_text_head_does_not_take_the_run(tmp_path, extra):
    """Defect 4: a 4 GB file with a text head was read whole before being called binary
    (under a memory limit: ``unexpected MemoryError``, naming no file). Now it is refused
    by its size before any read (the default ``--max-file-mb``), or, with a limit above
    it, left at its first binary block; the run indexes the rest, under 1.5 GB."""
    docs = write(tmp_path / "docs", NOTES)
    sparse(docs / "huge.log", 4_000_000_000, b"log line: all is well\n" * 500)
    index_dir = tmp_path / "index"
    proc = vrsd_script(_MEMORY_LIMIT, "index", docs, "--index-dir", index_dir,
                       "--model", "test:hashing", "--no-progress", *extra)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    reason = "binary" if extra else ("too large: 4000.0 MB, above --max-file-mb 100 "
                                     "(--large-files cap reads its first --large-file-mb)")
    assert f"vrsd index: warning: skipped {docs / 'huge.log'}: {reason}\n" in err, err
    assert "indexed" in out and "3 files" in out


# ------------------------------------------------------------ file names as bytes


def _locales() -> list:
    have = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split() \
        if _has_locale_command() else []
    normal = {name.lower().replace("-", ""): name for name in have}
    cases = []
    for wanted, io_encoding in [("C.UTF-8", None), ("C.UTF-8", "utf-8:strict"),
                                ("en_US.UTF-8", None)]:
        found = normal.get(wanted.lower().replace("-", ""))
        marks = [] if found else [pytest.mark.skip(reason=f"no {wanted} locale here")]
        cases.append(pytest.param(found or wanted, io_encoding, marks=marks,
                                  id=f"{wanted}{'-strict' if io_encoding else ''}"))
    return cases


def _has_locale_command() -> bool:
    from shutil import which

    return which("locale") is not None


RAW_NAME = b"\xff\xfe notes.txt"


@pytest.mark.parametrize(("locale", "io_encoding"), _locales())
def test_a_file_name_that_is_not_utf8_is_carried_and_printed_escaped(tmp_path, locale,
                                                                     io_encoding):
    """Defect 3: a name holding the bytes ff fe broke ``vrsd search`` (strict UTF-8
    output: "surrogates not allowed"; C.UTF-8: the raw bytes in ``--json``, invalid
    JSON). Now the terminal shows ``\\xff\\xfe``, and ``--json`` is valid UTF-8 with the
    exact bytes in ``source_b64``."""
    import base64

    docs = write(tmp_path / "docs", {"plain.txt": "Tea is steamed before drying."})
    with open(os.path.join(os.fsencode(docs), RAW_NAME), "wb") as file:
        file.write(b"A kettle boils water in three minutes.")
    index_dir = tmp_path / "index"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("LC_", "PYTHONIOENCODING", "PYTHONUTF8", "LANG"))}
    env.update({"LC_ALL": locale, "PYTHONPATH": str(ROOT)})
    if io_encoding:
        env["PYTHONIOENCODING"] = io_encoding

    def run(*args: object) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "vrsd_cli.cli", *map(str, args)],
                              capture_output=True, env=env, timeout=300)

    indexed = run("index", docs, "--index-dir", index_dir, "--model", "test:hashing",
                  "--no-progress")
    assert indexed.returncode == 0, indexed.stderr
    shown = run("search", "kettle", "--index-dir", index_dir)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode("utf-8")  # strict: nothing but UTF-8
    assert "\\xff\\xfe notes.txt" in text
    as_json = run("search", "kettle", "--index-dir", index_dir, "--json")
    assert as_json.returncode == 0, as_json.stderr
    found = json.loads(as_json.stdout.decode("utf-8"))
    named = [hit["metadata"] for hit in found["results"]
             if "source_b64" in hit["metadata"]]
    assert [base64.b64decode(meta["source_b64"]) for meta in named] == [RAW_NAME]
    assert named[0]["source"] == "\\xff\\xfe notes.txt"
    plain = [hit["metadata"] for hit in found["results"] if hit["metadata"]["source"] ==
             "plain.txt"]
    assert plain and "source_b64" not in plain[0]


def test_a_real_index_killed_while_it_fills_the_cache_is_finished_by_the_next_run(
        vrsd, tmp_path, cache_dir):
    """Defect 1, as the probe found it: ``vrsd index`` with the real model, SIGKILLed
    once the embedding cache holds its first batch. The next run finishes, encoding
    only what the cache does not hold."""
    from vrsd_cli.indexing import index_embeddings
    from vrsd_eval.disk_embeddings import cache_folder, count_uncached
    from vrsd_kit.vector_cache import VectorCache

    docs = write(tmp_path / "docs", {f"n{i}.md": f"Note {i}: the kettle number {i} boils "
                                     f"water; entry {i * 7919} of the log." for i in range(700)})
    cache, index_dir = tmp_path / "cache", tmp_path / "index"
    proc = vrsd_script("", "index", docs, "--index-dir", index_dir, "--cache-dir", cache,
                       "--no-progress")
    stored_keys = VectorCache(cache_folder(None, "documents", cache))
    while proc.poll() is None and len(list(stored_keys.yield_keys())) < 256:
        time.sleep(0.05)  # polling, not a timing: the kill lands after the first batch
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    stored_keys.close()
    assert proc.returncode == -signal.SIGKILL, "it finished before the kill"
    texts = [(docs / f"n{i}.md").read_text(encoding="utf-8") for i in range(700)]
    left = count_uncached(index_embeddings(None, cache), texts)  # type: ignore[arg-type]
    assert 0 < left <= 700 - 256
    again = vrsd("index", docs, "--index-dir", index_dir, "--cache-dir", cache)
    assert again.code == 0, again.err
    assert "error" not in again.err and "damaged" not in again.err
    assert len(stored(index_dir)) == 700
