"""The store behind ``vrsd index`` and ``vrsd search``: exact search over float32 vectors.

An index folder holds::

    vrsd_index.json          the manifest: format, model, dimension, the folders indexed,
                             and the current generation (replaced atomically: the commit)
    generation-000007/       one generation: vectors.npy (float32, one unit row per chunk)
                             and chunks.sqlite (row -> id, file, chunk, text digest, text)
    vrsd_index.lock          the writers' lock (``filelock``): one writer at a time
    vrsd_writer.json         who is writing (pid, host, start, folder); left behind by a
                             run that was interrupted, which readers then report

A writer builds the next generation beside the current one, then replaces the manifest
(``os.replace`` of a small file): a reader sees one whole generation, the one before or
the one after, never a mix. The generation before the current one is kept, so a reader
that read the manifest just before a commit still finds its files.

Search is exact: one matrix product of the unit question vector with every stored
vector, the top ``n`` by cosine (ties: the lower row first). No approximate index can
lose a live chunk after deletes and updates (as chroma-core/chroma#7758 reports of
Chroma 1.5.9's HNSW index).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

FORMAT = 2
"""The manifest's ``format``; an index without it is the Chroma store of vrsd 0.1's CLI."""
MANIFEST = "vrsd_index.json"
LOCK = "vrsd_index.lock"
WRITER = "vrsd_writer.json"
GENERATION = "generation-"
VECTORS = "vectors.npy"
CHUNKS = "chunks.sqlite"
OLD_STORE = ("chroma", "records.sqlite")  # what an index of the Chroma era holds
_OPEN_ATTEMPTS = 3  # a reader whose generation was removed under it reads the manifest again


class IndexBusy(ValueError):
    """Another ``vrsd index`` holds the index's lock."""


class IndexDamaged(ValueError):
    """A file of the index cannot be read; the message names it and the fix."""


def now() -> str:
    """The time, UTC, to the second (ISO 8601)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def digest(text: str) -> str:
    """The SHA-256 of ``text`` (hex): what identifies a chunk's text across runs."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def rebuild_hint(manifest: dict[str, Any] | None) -> str:
    """How to rebuild, naming the folders the manifest lists (when it can be read)."""
    folders = list((manifest or {}).get("folders") or {})
    first = folders[0] if folders else "PATH"
    more = f" (then 'vrsd index' each other folder it held: {', '.join(folders[1:])})" \
        if len(folders) > 1 else ""
    return f"rebuild it: vrsd index --rebuild {first}{more}"


# --- the manifest ------------------------------------------------------------------------

def read_manifest(where: Path) -> dict[str, Any] | None:
    """The manifest of the index at ``where`` (None: there is none).

    Raises:
        IndexDamaged: unreadable, not JSON, or without the fields a manifest has; or
            the Chroma store of an older vrsd (which this one no longer reads).
    """
    path = where / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if any((where / name).exists() for name in OLD_STORE):
            raise IndexDamaged(
                f"index_dir: the index at {where} was built by an older vrsd (a Chroma "
                f"store) and {MANIFEST} is missing; {rebuild_hint(None)}") from None
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexDamaged(f"index_dir: cannot read {path}: {exc}; {rebuild_hint(None)}") \
            from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IndexDamaged(f"index_dir: {path} is damaged (not JSON: {exc}); "
                           f"{rebuild_hint(None)}") from None
    if not isinstance(manifest, dict):
        raise IndexDamaged(f"index_dir: {path} is damaged (not a JSON object); "
                           f"{rebuild_hint(None)}")
    if "format" not in manifest and "folders" in manifest:
        raise IndexDamaged(
            f"index_dir: the index at {where} was built by an older vrsd (a Chroma store, "
            f"which could lose chunks after updates); {rebuild_hint(manifest)}")
    missing = [key for key in ("format", "model", "generation", "folders", "dimension")
               if key not in manifest]
    if missing:
        raise IndexDamaged(f"index_dir: {path} is damaged (no {missing[0]!r}); "
                           f"{rebuild_hint(manifest)}")
    if manifest["format"] != FORMAT:
        raise IndexDamaged(f"index_dir: {path} has format {manifest['format']!r}, this vrsd "
                           f"reads {FORMAT}; {rebuild_hint(manifest)}")
    if not isinstance(manifest["folders"], dict):
        raise IndexDamaged(f"index_dir: {path} is damaged ('folders' is not an object); "
                           f"{rebuild_hint(manifest)}")
    return manifest


def _write_atomically(path: Path, data: bytes) -> None:
    """``data`` into ``path``: a temporary file beside it, flushed to disk, then renamed
    over it (``os.replace``): a reader sees the old file or the new one, whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(tmp, path)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The folder's entries (a rename) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_manifest(where: Path, manifest: dict[str, Any]) -> None:
    _write_atomically(where / MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))


def display_root(folders: Sequence[str]) -> str | None:
    """The folder sources are shown relative to: the one folder indexed, or the deepest
    folder holding them all (``projA/README.md`` and ``projB/README.md``, not two
    ``README.md``)."""
    if not folders:
        return None
    try:
        return os.path.commonpath(list(folders))
    except ValueError:  # different drives (Windows): absolute paths
        return None


def source_of(file: str, root: str | None) -> str:
    """``file`` as shown: relative to ``root``, with ``/`` between parts."""
    if root is not None:
        with contextlib.suppress(ValueError):
            rel = os.path.relpath(file, root)
            if not rel.startswith(os.pardir):
                return Path(rel).as_posix()
    return Path(file).as_posix()


# --- reading a generation ----------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    """One chunk: the file it came from (the path as walked under the folder), its
    position in the file, its text's digest and its id."""

    id: str
    file: str
    chunk: int
    digest: str


class FlatIndex:
    """One generation of an index, open for reading (``open_flat``)."""

    def __init__(self, where: Path, manifest: dict[str, Any], vectors: NDArray[np.float32],
                 db: sqlite3.Connection) -> None:
        self.where = where
        self.manifest = manifest
        self.vectors = vectors
        self._db = db
        self.root = display_root(list(manifest["folders"]))

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def model(self) -> str | None:
        return self.manifest["model"]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> FlatIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def top(self, query: NDArray[np.floating[Any]], n: int) -> NDArray[np.int64]:
        """The rows of the ``n`` chunks nearest ``query`` by cosine, nearest first (ties:
        the lower row first); ``query`` (d,) or a batch (B, d) -> (n,) or (B, n)."""
        q = np.asarray(query, dtype=np.float32)
        single = q.ndim == 1
        q = np.atleast_2d(q)
        norms = np.linalg.norm(q, axis=1, keepdims=True)
        q = (q / np.where(norms > 0, norms, 1)).astype(np.float32, copy=False)
        scores = q @ self.vectors.T  # (B, N): the one exact pass over every vector
        n = min(n, len(self))
        if n < len(self):
            part = np.argpartition(-scores, n - 1, axis=1)[:, :n]
            # rows scoring as the n-th best that argpartition left out: keep the lower rows
            kth = np.take_along_axis(scores, part, axis=1).min(axis=1, keepdims=True)
            rows = [np.union1d(p, np.flatnonzero(s >= k)) for p, s, k in
                    zip(part, scores, kth, strict=True)]
        else:
            rows = [np.arange(len(self)) for _ in range(len(q))]
        best = np.stack([r[np.lexsort((r, -s[r]))][:n] for r, s in
                         zip(rows, scores, strict=True)])
        return best[0] if single else best

    def records(self, rows: Sequence[int] | NDArray[np.int64] | None = None) -> list[Record]:
        """The records of ``rows`` in that order (None: every row, in row order)."""
        if rows is None:
            got = self._db.execute("SELECT id, file, chunk, digest FROM chunks ORDER BY row")
            return [Record(i, os.fsdecode(f), c, d) for i, f, c, d in got]
        by_row = self._select("id, file, chunk, digest", rows)
        return [Record(i, os.fsdecode(f), c, d) for i, f, c, d in (by_row[r] for r in rows)]

    def texts(self, rows: Sequence[int] | NDArray[np.int64]) -> list[str]:
        """The chunk texts of ``rows``, in that order."""
        by_row = self._select("text", rows)
        return [by_row[r][0] for r in rows]

    def _select(self, columns: str, rows: Sequence[int] | NDArray[np.int64]
                ) -> dict[int, tuple[Any, ...]]:
        wanted = sorted({int(r) for r in rows})
        found: dict[int, tuple[Any, ...]] = {}
        for i in range(0, len(wanted), 500):  # SQLite's limit on bound parameters
            part = wanted[i:i + 500]
            marks = ",".join("?" * len(part))
            for row, *values in self._db.execute(
                    f"SELECT row, {columns} FROM chunks WHERE row IN ({marks})", part):
                found[row] = tuple(values)
        missing = set(wanted) - set(found)
        if missing:
            raise IndexDamaged(f"index_dir: {self._generation() / CHUNKS} is damaged (row "
                               f"{min(missing)} is missing); {rebuild_hint(self.manifest)}")
        return found

    def _generation(self) -> Path:
        return generation_dir(self.where, self.manifest["generation"])

    def source(self, file: str) -> str:
        """``file`` as a result shows it (``display_root``)."""
        return source_of(file, self.root)


def generation_dir(where: Path, generation: int) -> Path:
    return where / f"{GENERATION}{generation:06d}"


def open_flat(where: Path) -> FlatIndex | None:
    """The current generation of the index at ``where`` (None: no index there).

    Raises:
        IndexDamaged: a file of the index is missing or unreadable, named with the fix.
    """
    for attempt in range(_OPEN_ATTEMPTS):
        manifest = read_manifest(where)
        if manifest is None:
            return None
        try:
            return _open_generation(where, manifest)
        except FileNotFoundError as exc:
            if attempt + 1 < _OPEN_ATTEMPTS and read_manifest(where) != manifest:
                continue  # a writer committed and removed it meanwhile: read the new one
            raise IndexDamaged(f"index_dir: {exc.filename} is missing; "
                               f"{rebuild_hint(manifest)}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _open_generation(where: Path, manifest: dict[str, Any]) -> FlatIndex:
    folder = generation_dir(where, int(manifest["generation"]))
    vectors_path, chunks_path = folder / VECTORS, folder / CHUNKS
    if not chunks_path.is_file():
        raise FileNotFoundError(2, "missing", str(chunks_path))
    try:
        vectors = np.load(vectors_path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"index_dir: {vectors_path} is damaged ({exc}); "
                           f"{rebuild_hint(manifest)}") from None
    try:
        db = sqlite3.connect(f"file:{chunks_path}?mode=ro", uri=True)
        (count,) = db.execute("SELECT count(*) FROM chunks").fetchone()
    except sqlite3.Error as exc:
        raise IndexDamaged(f"index_dir: {chunks_path} is damaged ({exc}); "
                           f"{rebuild_hint(manifest)}") from None
    dimension = manifest["dimension"]
    if (vectors.ndim != 2 or vectors.dtype != np.float32 or vectors.shape[0] != count
            or (count and vectors.shape[1] != dimension)):
        db.close()
        raise IndexDamaged(
            f"index_dir: {vectors_path} is damaged ({vectors.shape} {vectors.dtype} "
            f"vectors for {count} chunks of dimension {dimension}); "
            f"{rebuild_hint(manifest)}")
    return FlatIndex(where, manifest, vectors, db)


# --- writing -----------------------------------------------------------------------------

@dataclass(frozen=True)
class NewChunk:
    """A chunk as a writer commits it."""

    file: str
    chunk: int
    text: str
    digest: str

    @property
    def id(self) -> str:
        key = f"{self.file}\0{self.chunk}\0{self.digest}"
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def commit(where: Path, manifest: dict[str, Any], chunks: Sequence[NewChunk],
           vectors: NDArray[np.float32]) -> dict[str, Any]:
    """Write ``chunks`` and their unit ``vectors`` as the next generation and make it the
    current one (the manifest, with ``generation`` and ``chunks`` updated, replaced last);
    generations before the previous one are removed. Returns the manifest written.
    The caller holds the lock (``writing``)."""
    generation = int(manifest.get("generation", 0)) + 1
    final = generation_dir(where, generation)
    tmp = where / f".{final.name}.{os.getpid()}.tmp"
    # what a run stopped before its commit left (the caller holds the lock: no other
    # writer's files are in the making)
    for stale in (final, *where.glob(f".{GENERATION}*.tmp"), *where.glob(f".{MANIFEST}.*.tmp")):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)
    tmp.mkdir(parents=True)
    with open(tmp / VECTORS, "wb") as file:
        np.save(file, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
        file.flush()
        os.fsync(file.fileno())
    db = sqlite3.connect(tmp / CHUNKS)
    try:
        db.execute("CREATE TABLE chunks (row INTEGER PRIMARY KEY, id TEXT, file BLOB, "
                   "chunk INTEGER, digest TEXT, text TEXT)")
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                       ((row, c.id, os.fsencode(c.file), c.chunk, c.digest, c.text)
                        for row, c in enumerate(chunks)))
        db.commit()
    finally:
        db.close()
    os.replace(tmp, final)
    _sync_folder(where)
    written = {**manifest, "generation": generation, "chunks": len(chunks)}
    write_manifest(where, written)
    for old in where.glob(f"{GENERATION}*"):
        number = old.name.removeprefix(GENERATION)
        if number.isdigit() and int(number) < generation - 1:
            shutil.rmtree(old, ignore_errors=True)  # (a reader holding it open keeps reading)
    return written


def last_generation(where: Path) -> int:
    """The highest generation number on disk (0: none): a rebuilt index goes on from it,
    so a reader of the index before the rebuild never meets a reused number."""
    numbers = [int(p.name.removeprefix(GENERATION)) for p in where.glob(f"{GENERATION}*")
               if p.name.removeprefix(GENERATION).isdigit()]
    return max(numbers, default=0)


def remove_old_store(where: Path) -> None:
    """Delete the Chroma store an index of an older vrsd kept in ``where`` (``chroma/``,
    ``records.sqlite``), and nothing else: a ``--index-dir`` may hold other files."""
    for name in OLD_STORE:
        path = where / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


# --- one writer at a time ----------------------------------------------------------------

def writer_record(where: Path) -> dict[str, Any] | None:
    """Who is writing the index, or was when interrupted (None: nobody)."""
    try:
        found = json.loads((where / WRITER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def describe_writer(found: dict[str, Any] | None) -> str:
    if not found:
        return "another vrsd index (it left no record of itself)"
    return (f"pid {found.get('pid', '?')} on {found.get('host', '?')}, started "
            f"{found.get('started', '?')}: vrsd index {found.get('folder', '?')}")


def is_running(found: dict[str, Any]) -> bool | None:
    """Whether the writer ``found`` names still runs (None: on another host, unknown)."""
    if found.get("host") != socket.gethostname():
        return None
    try:
        os.kill(int(found.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # alive, another user's (or a pid we cannot ask about)
    except OSError:
        return None
    return int(found.get("pid", 0)) > 0


def interruption(where: Path, *, indexed: bool = True) -> str | None:
    """What a reader should know about a writer's record: an interrupted run (how to
    finish it), or one still running; None when the last run finished. ``indexed``:
    whether a generation was committed before that run."""
    found = writer_record(where)
    if found is None:
        return None
    folder = found.get("folder", "PATH")
    running = None if found.get("interrupted") else is_running(found)
    if running:
        return (f"'vrsd index {folder}' is running (pid {found.get('pid')}, started "
                f"{found.get('started')}); " + ("this reads the index as it was before "
                                                "that run started" if indexed
                                                else "search once it has finished"))
    how = "was interrupted" if running is False or found.get("interrupted") else \
        f"has not finished (pid {found.get('pid')} on {found.get('host')})"
    return (f"the last 'vrsd index {folder}' (started {found.get('started')}) {how}; "
            f"run 'vrsd index {folder}' again to finish it (what it embedded is cached)")


@contextlib.contextmanager
def writing(where: Path, folder: Path) -> Iterator[dict[str, Any] | None]:
    """Hold the index's lock while the block runs, with a record of who holds it; yields
    the record an interrupted run left (None: the last run finished).

    The record is removed when the block ends, except on Ctrl-C (KeyboardInterrupt):
    then readers say the index was interrupted and how to finish it.

    Raises:
        IndexBusy: another writer holds the lock (one line naming it).
    """
    from filelock import FileLock, Timeout

    where.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(where / LOCK), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise IndexBusy(f"index_dir: {where} is being written by "
                        f"{describe_writer(writer_record(where))}; wait for it to finish "
                        "(one writer at a time)") from None
    try:
        left = writer_record(where)
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": now(),
                  "folder": str(folder), "argv": sys.argv[1:]}
        _write_atomically(where / WRITER, json.dumps(record).encode("utf-8"))
        try:
            yield left
        except KeyboardInterrupt:  # the record stays, marked: readers say how to finish
            record["interrupted"] = now()
            _write_atomically(where / WRITER, json.dumps(record).encode("utf-8"))
            raise
        except BaseException:
            (where / WRITER).unlink(missing_ok=True)
            raise
        (where / WRITER).unlink(missing_ok=True)
    finally:
        lock.release()
