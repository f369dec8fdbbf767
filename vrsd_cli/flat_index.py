"""The store behind ``vrsd index`` and ``vrsd search``: one SQLite database holding the
chunks and their vectors, searched exactly by ``sqlite-vec``.

An index folder holds::

    vrsd_index.sqlite        the database (write-ahead log: ``-wal`` and ``-shm`` beside it
                             while it is open): the settings (format, model, dimension, the
                             folders indexed), one row per chunk (file, position, text
                             digest, text) and its unit float32 vector (a ``vec0`` table),
                             how many files hold each word (``words``), and each
                             file's words (``file_words``)
    vrsd_index.lock          the writers' lock (``filelock``): one writer at a time
    vrsd_writer.json         who is writing (pid, host, start, folder); left behind by a
                             run that was interrupted, which readers then report

A writer changes the rows of the files that changed (deleted, added, updated in place) and
the settings in one SQLite transaction: a commit costs what changed, and a run stopped
before it, or a full disk during it, leaves the index as it was. The same transaction
counts the words of the files it changes (``words``: each word's id as
``vrsd_kit.lexical`` reads it, and how many files hold it, a file's chunks read together;
``file_words``: each file's words), so a search knows how common each of its candidates'
words is in the rest of the index (``FlatIndex.background``). Files, not chunks:
boilerplate a long file states once (a licence's header) is rare among its chunks but
common among files. An index written before the tables were kept, or counting otherwise,
is counted from the stored texts at its next commit. A reader reads in one read
transaction (a snapshot of the write-ahead log): one committed state, whole, however many
commits land meanwhile.

Search is exact: ``sqlite-vec``'s ``vec0`` scan computes the distance of the unit question
vector to every stored vector (L2 on unit vectors ranks as cosine does), the top ``n``
(ties: the lower row first). No approximate index can lose a live chunk after deletes and
updates (as chroma-core/chroma#7758 reports of Chroma 1.5.9's HNSW index).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import functools
import hashlib
import itertools
import json
import math
import os
import shutil
import socket
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import apsw

    from vrsd_kit.lexical import Background

FORMAT = 3
"""The database's ``format`` setting; 2 was numpy generations beside a manifest, and an
index without one is the Chroma store of vrsd 0.1's CLI."""
DATABASE = "vrsd_index.sqlite"
LOCK = "vrsd_index.lock"
WRITER = "vrsd_writer.json"
OLD_FLAT = ("vrsd_index.json", "generation-")  # what an index of format 2 holds
OLD_STORE = ("chroma", "records.sqlite")  # what an index of the Chroma era holds
MAX_FETCH = 4096
"""The most chunks one search returns (``sqlite-vec``'s limit on ``k``)."""
_PAGE_SIZE = 4096
_VECTOR_BLOCK = 1024  # vectors a vec0 block holds (sqlite-vec's chunk_size): allocated whole
_BUSY_MS = 30_000  # how long a connection waits on another's lock (a checkpoint, a recovery)
_OPEN_ATTEMPTS = 3  # a reader that raced with a writer creating the database reads again
_SETTINGS = ("format", "model", "dimension", "folders")

WORDS_LANGUAGE: str | None = None
"""The reading of the ``words`` table: the words as written (``vrsd search`` reads its
candidates without a language)."""
WORDS_PER = "file"
"""What the ``words`` table counts of each word: the files holding it."""
_WORDS_PROBE = "Reading 42 naïve Words: STRASSE, Ελλάδα, 東京都に住む"


def _in_parts(execute: Any, sql: str, keys: Sequence[Any]) -> Iterator[Any]:
    """The rows ``execute(sql, part)`` gives for ``keys`` in parts of 500 (SQLite's limit on
    bound parameters); ``sql``'s ``{marks}`` is a part's placeholders."""
    for i in range(0, len(keys), 500):
        part = tuple(keys[i:i + 500])
        yield from execute(sql.format(marks=",".join("?" * len(part))), part)


@functools.cache
def words_reading() -> dict[str, Any]:
    """What the ``words`` table counts (its ``words`` setting): the language, a digest of
    a probe text's word ids as ``vrsd_kit.lexical`` reads them, and what is counted (the
    files holding each word), so counts a vrsd that read or counted words otherwise wrote
    are not mixed with this one's (the next commit counts them again)."""
    from vrsd_kit.lexical import document_frequencies

    ids, _ = document_frequencies([_WORDS_PROBE], WORDS_LANGUAGE)
    return {"language": WORDS_LANGUAGE, "reading": hashlib.sha256(ids.tobytes()).hexdigest()[:16],
            "per": WORDS_PER}


class IndexBusy(ValueError):
    """Another ``vrsd index`` holds the index's lock."""


class IndexDamaged(ValueError):
    """A file of the index cannot be read; the message names it and the fix."""


class IndexFull(ValueError):
    """The disk filled during a commit; the message names the path and the room needed."""


def now() -> str:
    """The time, UTC, to the second (ISO 8601)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def digest(text: str) -> str:
    """The SHA-256 of ``text`` (hex): what identifies a chunk's text across runs."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def rebuild_hint(manifest: dict[str, Any] | None) -> str:
    """How to rebuild, naming the folders the settings list (when they can be read)."""
    folders = list((manifest or {}).get("folders") or {})
    first = folders[0] if folders else "PATH"
    more = f" (then 'vrsd index' each other folder it held: {', '.join(folders[1:])})" \
        if len(folders) > 1 else ""
    return f"rebuild it: vrsd index --rebuild {first}{more}"


def _write_atomically(path: Path, data: bytes) -> None:
    """``data`` into ``path``: a temporary file beside it, flushed to disk, then renamed
    over it (``os.replace``): a reader sees the old file or the new one, whole. A failed
    write (a full disk) removes the temporary file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The folder's entries (a rename) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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


# --- the database ------------------------------------------------------------------------

def connect(path: Path, *, create: bool = False) -> apsw.Connection:
    """A connection to the database at ``path`` with ``sqlite-vec`` loaded. ``apsw``:
    the interpreter's ``sqlite3`` may be built without loadable extensions."""
    import apsw
    import sqlite_vec

    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    db = apsw.Connection(str(path), flags=flags)
    db.set_busy_timeout(_BUSY_MS)
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    db.enable_load_extension(False)
    return db


def _damaged(path: Path, what: str, manifest: dict[str, Any] | None) -> IndexDamaged:
    return IndexDamaged(f"index_dir: {path} is damaged ({what}); {rebuild_hint(manifest)}")


def _database_error() -> type[Exception]:
    """What a connection raises (``apsw.Error``), imported when the index is used."""
    import apsw

    return apsw.Error


def _old_format(where: Path) -> IndexDamaged | None:
    """The message for an index an older vrsd wrote (None: there is none at ``where``)."""
    manifest_path = where / OLD_FLAT[0]
    if manifest_path.is_file():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        old = old if isinstance(old, dict) and isinstance(old.get("folders"), dict) else None
        what = "numpy generations" if old is None or "format" in old else \
            "a Chroma store, which could lose chunks after updates"
        return IndexDamaged(f"index_dir: the index at {where} was built by an older vrsd "
                            f"({what}); {rebuild_hint(old)} (the embedding cache keeps "
                            "what it encoded)")
    if any((where / name).exists() for name in OLD_STORE):
        return IndexDamaged(f"index_dir: the index at {where} was built by an older vrsd "
                            f"(a Chroma store); {rebuild_hint(None)}")
    return None


def read_settings(db: apsw.Connection, path: Path) -> dict[str, Any] | None:
    """The index's settings (None: the database holds no index yet: a first run was
    stopped before its commit).

    Raises:
        IndexDamaged: a table or a setting missing, or a setting of the wrong type,
            naming the database and the fix.
    """
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return None
    if "settings" not in tables:
        raise _damaged(path, "no settings table", None)
    found: dict[str, Any] = {}
    for key, value in db.execute("SELECT key, value FROM settings"):
        try:
            found[key] = json.loads(value)
        except (TypeError, ValueError):
            raise _damaged(path, f"the setting {key!r} is not JSON", None) from None
    folders = found.get("folders")
    manifest = found if isinstance(folders, dict) else None
    for key in _SETTINGS:
        if key not in found:
            raise _damaged(path, f"no {key!r} setting", manifest)
    if found["format"] != FORMAT:
        raise IndexDamaged(f"index_dir: {path} has format {found['format']!r}, this vrsd "
                           f"reads {FORMAT}; {rebuild_hint(manifest)}")
    if not isinstance(folders, dict):
        raise _damaged(path, "the setting 'folders' is not an object", None)
    if found["model"] is not None and not isinstance(found["model"], str):
        raise _damaged(path, f"the setting 'model' is {found['model']!r}, not a name", manifest)
    dimension = found["dimension"]
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
        raise _damaged(path, f"the setting 'dimension' is {dimension!r}", manifest)
    missing = {"chunks", "vectors", "files"} - tables
    if missing:
        raise _damaged(path, f"no {sorted(missing)[0]} table", manifest)
    if not {"words", "file_words"} <= tables:
        found.pop("words", None)
    return found


def counts_words(manifest: dict[str, Any] | None) -> bool:
    """Whether the index's ``words`` table holds this vrsd's reading of its chunks."""
    return manifest is not None and manifest.get("words") == words_reading()


_UNDER = "file = ? OR (file >= ? AND file < ?)"  # a file under a folder, by its path


def _under(folder: str) -> tuple[bytes, bytes, bytes]:
    """``_UNDER``'s bounds: the folder itself, then every path starting with it and a
    separator (the separator's successor bounds them)."""
    start = os.fsencode(folder.rstrip(os.sep) + os.sep)
    return os.fsencode(folder), start, start[:-1] + bytes([start[-1] + 1])


def read_file_words(rows: Iterable[tuple[bytes, str]]
                    ) -> Iterator[tuple[bytes, NDArray[np.int64]]]:
    """(file, the distinct word ids of its chunks, sorted) for each file of ``rows``
    ((file, chunk text), a file's rows together), read as the ``words`` table counts them."""
    from vrsd_kit.lexical import document_frequencies

    for file, group in itertools.groupby(rows, key=lambda row: row[0]):
        yield file, document_frequencies([text for _, text in group], WORDS_LANGUAGE)[0]


def count_files(found: Iterable[tuple[bytes, NDArray[np.int64]]]
                ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(the word ids, sorted; how many of the files ``found`` ((file, its word ids)) hold each),
    folded every million ids so memory holds the vocabulary, not every file's words."""
    vocabulary, df = np.zeros(0, np.int64), np.zeros(0, np.int64)
    pending: list[NDArray[np.int64]] = []
    size = 0
    for _, held in itertools.chain(found, [(b"", None)]):
        if held is not None:
            pending.append(held)
            size += len(held)
        if pending and (held is None or size > 1_000_000):
            ids = np.concatenate([vocabulary, *pending])
            weights = np.concatenate([df, np.ones(size, np.int64)])
            vocabulary, where = np.unique(ids, return_inverse=True)
            df = np.bincount(where.ravel(), weights=weights,
                             minlength=len(vocabulary)).astype(np.int64)
            pending, size = [], 0
    return vocabulary.astype(np.int64), df


# --- reading -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    """One chunk: the file it came from (the path as walked under the folder), its
    position in the file, its text's digest and its id."""

    id: str
    file: str
    chunk: int
    digest: str


def chunk_id(file: str, chunk: int, text_digest: str) -> str:
    """A chunk's id: the same for the same file, position and text, in every run."""
    key = f"{file}\0{chunk}\0{text_digest}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_Open = TypeVar("_Open", bound="_Connection")


class _Connection:
    """A connection to the index's database, closed by ``close`` or a ``with`` block."""

    _db: apsw.Connection

    def close(self) -> None:
        self._db.close()

    def __enter__(self: _Open) -> _Open:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FlatIndex(_Connection):
    """The index as one committed state, open for reading (``open_flat``). Rows are the
    database's chunk ids: ``top`` returns them, ``records``, ``texts`` and ``vectors``
    read them."""

    def __init__(self, where: Path, manifest: dict[str, Any], db: apsw.Connection,
                 count: int) -> None:
        self.where = where
        self.path = where / DATABASE
        self.manifest = manifest
        self._db = db
        self._count = count
        self.root = display_root(list(manifest["folders"]))

    def __len__(self) -> int:
        return self._count

    @property
    def model(self) -> str | None:
        return self.manifest["model"]

    @property
    def dimension(self) -> int:
        return int(self.manifest["dimension"])

    def rows(self) -> NDArray[np.int64]:
        """Every row, in the order stored."""
        return np.fromiter((r for (r,) in self._read("SELECT id FROM chunks ORDER BY id")),
                           dtype=np.int64)

    def top(self, query: NDArray[np.floating[Any]], n: int) -> NDArray[np.int64]:
        """The rows of the ``n`` chunks nearest ``query`` by cosine, nearest first (ties:
        the lower row first); ``query`` (d,) or a batch (B, d) -> (n,) or (B, n).

        Raises:
            ValueError: ``n`` above ``MAX_FETCH`` in an index holding more chunks.
            IndexDamaged: a stored vector that is not finite.
        """
        q = np.asarray(query, dtype=np.float32)
        single = q.ndim == 1
        q = np.atleast_2d(q)
        norms = np.linalg.norm(q, axis=1, keepdims=True)
        q = (q / np.where(norms > 0, norms, 1)).astype(np.float32, copy=False)
        n = min(n, len(self))
        if n > MAX_FETCH:
            raise ValueError(f"fetch_k: at most {MAX_FETCH} chunks a search, got {n}")
        best = np.stack([self._nearest(one, n) for one in q])
        return best[0] if single else best

    def _nearest(self, query: NDArray[np.float32], n: int) -> NDArray[np.int64]:
        if n <= 0:
            return np.zeros(0, dtype=np.int64)
        k = min(n + 1, len(self), MAX_FETCH)
        while True:  # ask for more while rows past the n-th tie with it: the lower rows win
            hits = self._read("SELECT rowid, distance FROM vectors WHERE embedding MATCH ? "
                              "AND k = ?", (query.tobytes(), k))
            if any(distance is None or not math.isfinite(distance) for _, distance in hits):
                raise _damaged(self.path, "a stored vector is not finite", self.manifest)
            if len(hits) < k or k >= min(len(self), MAX_FETCH) or \
                    hits[-1][1] > hits[n - 1][1]:
                break
            k = min(2 * k, len(self), MAX_FETCH)
        rows = np.array([row for row, _ in hits], dtype=np.int64)
        distances = np.array([distance for _, distance in hits], dtype=np.float64)
        return rows[np.lexsort((rows, distances))][:n]

    def records(self, rows: Sequence[int] | NDArray[np.int64] | None = None) -> list[Record]:
        """The records of ``rows`` in that order (None: every row, in row order)."""
        if rows is None:
            rows = self.rows()
        by_row = self._select("chunks", "id", "file, chunk, digest", rows)
        found = []
        for row in rows:
            file, chunk, text_digest = by_row[int(row)]
            if not isinstance(file, bytes) or not isinstance(chunk, int) or \
                    not isinstance(text_digest, str):
                raise _damaged(self.path, f"the chunk of row {row} is malformed",
                               self.manifest)
            name = os.fsdecode(file)
            found.append(Record(chunk_id(name, chunk, text_digest), name, chunk, text_digest))
        return found

    def texts(self, rows: Sequence[int] | NDArray[np.int64]) -> list[str]:
        """The chunk texts of ``rows``, in that order."""
        by_row = self._select("chunks", "id", "text", rows)
        texts = [by_row[int(r)][0] for r in rows]
        for row, text in zip(rows, texts, strict=True):
            if not isinstance(text, str):
                raise _damaged(self.path, f"the text of row {row} is {type(text).__name__}",
                               self.manifest)
        return texts

    def vectors(self, rows: Sequence[int] | NDArray[np.int64]) -> NDArray[np.float32]:
        """The unit vectors of ``rows``, in that order, (len(rows), d) float32.

        Raises:
            IndexDamaged: a vector missing, of the wrong length, or not finite.
        """
        by_row = self._select("vectors", "rowid", "embedding", rows)
        out = np.empty((len(rows), self.dimension), dtype=np.float32)
        for i, row in enumerate(rows):
            blob = by_row[int(row)][0]
            if not isinstance(blob, bytes) or len(blob) != 4 * self.dimension:
                raise _damaged(self.path, f"the vector of row {row} is malformed",
                               self.manifest)
            out[i] = np.frombuffer(blob, dtype=np.float32)
        if not np.isfinite(out).all():
            row = rows[int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0])]
            raise _damaged(self.path, f"the vector of row {row} is not finite", self.manifest)
        return out

    @property
    def counts_words(self) -> bool:
        """Whether the index knows each word's document frequency (``background``); an
        index written before the table was kept gets it at its next ``vrsd index``."""
        return counts_words(self.manifest)

    def background(self, query: str, rows: Sequence[int] | NDArray[np.int64]
                   ) -> Background | None:
        """What the index's other files say is common, for a pool of its chunks (``rows``)
        asked ``query``: for each word of the pool and the question, how many files
        outside the pool's files (those holding a chunk of the pool) hold it, as a share
        of those files (``vrsd_kit.lexical.Background``, for the rerank's ``background``
        setting). The pool's files are left out (their words: ``file_words``), so a pool
        that touches every file has no background: it adds what the pool does not already
        say. None: the index does not count words (``counts_words``).

        Raises:
            IndexDamaged: the table unreadable.
        """
        from vrsd_kit.lexical import Background, document_frequencies

        if not self.counts_words:
            return None
        by_row = self._select("chunks", "id", "file, text", rows)
        files = sorted({file for file, _ in by_row.values()})
        ids, _ = document_frequencies([query, *(text for _, text in by_row.values())],
                                      WORDS_LANGUAGE, cached=True)
        inside = np.zeros(len(ids), dtype=np.int64)
        for _, held in self._words_of(files):
            inside += np.isin(ids, held, assume_unique=True)
        outside = np.maximum(self.word_counts(ids) - inside, 0)
        others = self.file_count() - len(files)
        known = outside > 0
        return Background(ids[known], outside[known] / max(others, 1), True, WORDS_LANGUAGE)

    def _words_of(self, files: Sequence[bytes]) -> list[tuple[bytes, NDArray[np.int64]]]:
        """(file, its word ids) of each of ``files`` (files of the index's chunks)."""
        found: dict[bytes, NDArray[np.int64]] = {}
        for file, ids in _in_parts(self._read, "SELECT file, ids FROM file_words WHERE file "
                                   "IN ({marks})", files):
            found[file] = np.frombuffer(ids, dtype=np.int64)
        missing = set(files) - set(found)
        if missing:
            raise _damaged(self.path, f"no words of {os.fsdecode(min(missing))}",
                           self.manifest)
        return list(found.items())

    def file_count(self) -> int:
        """How many files hold a chunk of the index (``file_words`` has a row for each)."""
        return int(self._read("SELECT count(*) FROM file_words")[0][0])

    def word_counts(self, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """How many of the index's files hold each word of ``ids`` (0: none)."""
        found = dict(self._read("SELECT id, df FROM words WHERE id IN (SELECT value FROM "
                                "json_each(?))", (json.dumps(ids.tolist()),)))
        return np.array([found.get(word, 0) for word in ids.tolist()], dtype=np.int64)

    def _read(self, sql: str, bindings: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, bindings).fetchall()
        except _database_error() as exc:
            raise _damaged(self.path, str(exc), self.manifest) from None

    def _select(self, table: str, key: str, columns: str,
                rows: Sequence[int] | NDArray[np.int64]) -> dict[int, tuple[Any, ...]]:
        wanted = sorted({int(r) for r in rows})
        found: dict[int, tuple[Any, ...]] = {}
        for row, *values in _in_parts(
                self._read, f"SELECT {key}, {columns} FROM {table} WHERE {key} IN ({{marks}})",
                wanted):
            found[row] = tuple(values)
        missing = set(wanted) - set(found)
        if missing:
            raise _damaged(self.path, f"row {min(missing)} has no {table[:-1]}",
                           self.manifest)
        return found

    def files_read(self, folder: str) -> dict[str, tuple[int, int, int]]:
        """file -> (size, modification time, when it was read; ns) of the files under
        ``folder`` whose chunks the index holds, as they were when read."""
        return {os.fsdecode(file): (size, mtime_ns, seen_ns) for file, size, mtime_ns, seen_ns
                in self._read("SELECT file, size, mtime_ns, seen_ns FROM files WHERE "
                              + _UNDER, _under(folder))}

    def source(self, file: str) -> str:
        """``file`` as a result shows it (``display_root``)."""
        return source_of(file, self.root)


def open_flat(where: Path) -> FlatIndex | None:
    """The last committed state of the index at ``where`` (None: no index there), read
    in one read transaction until it is closed.

    Raises:
        IndexDamaged: the database or a setting unreadable, or an index an older vrsd
            wrote, named with the fix.
    """
    path = where / DATABASE
    if not path.is_file():
        old = _old_format(where)
        if old is not None:
            raise old
        return None
    for attempt in range(_OPEN_ATTEMPTS):
        try:
            return _open_snapshot(where, path)
        except IndexDamaged:
            raise
        except _database_error() as exc:
            import apsw

            if isinstance(exc, apsw.BusyError | apsw.LockedError) and \
                    attempt + 1 < _OPEN_ATTEMPTS:
                continue  # a writer creating or recovering the database: read again
            raise _damaged(path, str(exc), None) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _open_snapshot(where: Path, path: Path) -> FlatIndex | None:
    db = connect(path)
    try:
        db.execute("PRAGMA query_only = ON")
        db.execute("BEGIN")  # the snapshot this reader keeps until it closes
        manifest = read_settings(db, path)
        if manifest is None:
            db.close()
            return None
        (count,) = db.execute("SELECT count(*) FROM chunks").fetchone()  # type: ignore[misc]
    except BaseException:
        db.close()
        raise
    return FlatIndex(where, manifest, db, int(count))


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
        return chunk_id(self.file, self.chunk, self.digest)


@dataclass(frozen=True)
class FilesRead:
    """What a run read under ``folder``: file -> (size, modification time, when read;
    ns) of each file whose chunks it commits, and the files it kept unread."""

    folder: str
    read: dict[str, tuple[int, int, int]]
    kept: set[str]


class IndexWriter(_Connection):
    """The index open for one writer (the caller holds the lock: ``writing``): what it
    holds under a folder, the vectors it holds for texts, and one commit."""

    def __init__(self, where: Path, *, rebuild: bool = False) -> None:
        self.where = where
        self.path = where / DATABASE
        old = None if rebuild else _old_format(where)
        if old is not None and not self.path.exists():
            raise old
        if rebuild:
            self._discard_if_damaged()
        self._db = connect(self.path, create=True)
        try:
            self._db.execute(f"PRAGMA page_size = {_PAGE_SIZE}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = FULL")
            self.manifest = read_settings(self._db, self.path)
        except _database_error() as exc:
            self._db.close()
            raise _damaged(self.path, str(exc), None) from None
        except BaseException:
            self._db.close()
            raise
        self.rebuild = rebuild

    def _discard_if_damaged(self) -> None:
        """``--rebuild`` of a database that cannot be read: its files go (under the lock),
        the rebuild starts an empty one."""
        if not self.path.exists():
            return
        try:
            db = connect(self.path)
            try:
                read_settings(db, self.path)
                db.execute("PRAGMA quick_check").fetchall()
            finally:
                db.close()
        except (IndexDamaged, _database_error()):
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def records_under(self, folder: str, kept: Iterable[str] = ()
                      ) -> tuple[list[tuple[int, str, int, str]], int]:
        """(row, file, chunk, digest) of every chunk of a file under ``folder`` but the
        files ``kept``, and how many chunks those hold (none on a rebuild)."""
        if self.manifest is None or self.rebuild:
            return [], 0
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (file BLOB PRIMARY KEY)")
        self._db.execute("DELETE FROM temp.kept")
        self._db.executemany("INSERT OR IGNORE INTO temp.kept VALUES (?)",
                             [(os.fsencode(file),) for file in kept])
        found = self._db.execute(
            f"SELECT id, file, chunk, digest FROM chunks WHERE ({_UNDER}) AND file NOT IN "
            "(SELECT file FROM temp.kept)", _under(folder))
        records = [(row, os.fsdecode(file), chunk, text_digest)
                   for row, file, chunk, text_digest in found]
        (count,) = self._db.execute("SELECT count(*) FROM chunks WHERE file IN "  # type: ignore[misc]
                                    "(SELECT file FROM temp.kept)").fetchone()
        return records, int(count)

    def vectors_for(self, digests: Iterable[str]) -> dict[str, NDArray[np.float32]]:
        """The vectors the index holds for texts of these digests (one each; those it
        does not hold are left out). A stored vector that is not finite is left out too:
        it is encoded again."""
        if self.manifest is None or self.rebuild:
            return {}
        wanted = list(dict.fromkeys(digests))
        found: dict[str, NDArray[np.float32]] = {}
        for text_digest, blob in _in_parts(
                self._db.execute, "SELECT c.digest, v.embedding FROM chunks c JOIN vectors v "
                "ON v.rowid = c.id WHERE c.digest IN ({marks})", wanted):
            vector = np.frombuffer(blob, dtype=np.float32)
            if len(vector) == self.manifest["dimension"] and np.isfinite(vector).all():
                found.setdefault(text_digest, vector)
        return found

    def commit(self, manifest: dict[str, Any], removed: Sequence[int],
               added: Sequence[NewChunk], vectors: NDArray[np.float32],
               files: FilesRead | None = None) -> dict[str, Any]:
        """One transaction: the rows ``removed`` go, ``added`` come with their unit
        ``vectors`` (a removed row's id is reused, so the vectors' storage stays
        compact), ``files`` (when given) record what was read under a folder, and the
        settings become ``manifest`` (on a rebuild, everything else goes). Returns the
        settings written.

        Raises:
            ValueError: a vector not finite or of another dimension than the index's.
            IndexFull: the disk filled (nothing was changed; the message says how much
                room the commit needs).
        """
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not np.isfinite(vectors).all():
            row = int(np.flatnonzero(~np.isfinite(vectors).all(axis=1))[0])
            raise ValueError(f"model: the vector of {added[row].file} chunk "
                             f"{added[row].chunk} is not finite; it cannot be indexed")
        dimension = int(manifest["dimension"])
        if vectors.shape != (len(added), dimension):
            raise ValueError(f"vectors: {vectors.shape} for {len(added)} chunks; the index at "
                             f"{self.where} holds {dimension}-d ones")
        written = {**manifest, "format": FORMAT}
        import apsw

        try:
            self._transaction(written, removed, added, vectors, files)
        except apsw.Error as exc:
            # (sqlite-vec reports a vector it could not write as a plain error)
            full = self._full(added, vectors, isinstance(exc, apsw.FullError))
            if full is None:
                raise
            raise full from None
        self._checkpoint()
        written["words"] = words_reading()
        self.manifest, self.rebuild = written, False
        return written

    def _transaction(self, manifest: dict[str, Any], removed: Sequence[int],
                     added: Sequence[NewChunk], vectors: NDArray[np.float32],
                     files: FilesRead | None) -> None:
        """``_apply`` in one transaction: all of it or none of it (SQLite may have rolled
        it back itself, on a full disk)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._apply(manifest, removed, added, vectors)
            if files is not None:
                self._record_files(files)
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _apply(self, manifest: dict[str, Any], removed: Sequence[int],
               added: Sequence[NewChunk], vectors: NDArray[np.float32]) -> None:
        db = self._db
        fresh = self.manifest is None or self.rebuild
        if fresh:
            for table in ("settings", "chunks", "vectors", "files", "words", "file_words"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            db.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, file BLOB NOT NULL, "
                       "chunk INTEGER NOT NULL, digest TEXT NOT NULL, text TEXT NOT NULL)")
            db.execute("CREATE INDEX chunks_by_file ON chunks (file)")
            db.execute("CREATE INDEX chunks_by_digest ON chunks (digest)")
            db.execute("CREATE TABLE files (file BLOB PRIMARY KEY, size INTEGER NOT NULL, "
                       "mtime_ns INTEGER NOT NULL, seen_ns INTEGER NOT NULL)")
            db.execute("CREATE VIRTUAL TABLE vectors USING "
                       f"vec0(embedding float[{int(manifest['dimension'])}])")
            removed = []
        counted = not fresh and counts_words(self.manifest)
        held = self._held_by_files(removed, added) if counted else {}
        (last,) = db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()  # type: ignore[misc]
        reused = min(len(removed), len(added))  # a removed row's slot takes a new chunk
        rows = [*removed[:reused], *range(last + 1, last + 1 + len(added) - reused)]
        gone = [(row,) for row in removed[reused:]]
        db.executemany("DELETE FROM vectors WHERE rowid = ?", gone)
        db.executemany("DELETE FROM chunks WHERE id = ?", gone)
        chunks = [(os.fsencode(c.file), c.chunk, c.digest, c.text, row)
                  for c, row in zip(added, rows, strict=True)]
        db.executemany("UPDATE chunks SET file = ?, chunk = ?, digest = ?, text = ? "
                       "WHERE id = ?", chunks[:reused])
        db.executemany("INSERT INTO chunks (file, chunk, digest, text, id) VALUES "
                       "(?, ?, ?, ?, ?)", chunks[reused:])
        embeddings = [(v.tobytes(), row) for v, row in zip(vectors, rows, strict=True)]
        db.executemany("UPDATE vectors SET embedding = ? WHERE rowid = ?", embeddings[:reused])
        db.executemany("INSERT INTO vectors (embedding, rowid) VALUES (?, ?)",
                       embeddings[reused:])
        if counted:
            self._count_words(held)
        else:  # a new index, or one whose words were not counted (or read otherwise)
            self._count_all_words()
        db.executemany("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                       [(key, json.dumps(manifest[key])) for key in _SETTINGS])
        # a new token per commit: a writer's record tells whether its run committed
        db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('commit', ?)",
                   (json.dumps(uuid.uuid4().hex),))

    def _held_by_files(self, removed: Sequence[int], added: Sequence[NewChunk]
                       ) -> dict[bytes, tuple[list[str], list[str], list[str]]]:
        """Per file the commit changes (one losing ``removed`` rows or gaining ``added``
        chunks): the texts of its chunks that stay, of those that go and of those that
        come, read before the change."""
        held: dict[bytes, tuple[list[str], list[str], list[str]]] = {}
        for file, text in _in_parts(self._db.execute, "SELECT file, text FROM chunks WHERE id "
                                    "IN ({marks})", [int(row) for row in removed]):
            held.setdefault(file, ([], [], []))[1].append(text)
        for chunk in added:
            held.setdefault(os.fsencode(chunk.file), ([], [], []))[2].append(chunk.text)
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS changed (file BLOB PRIMARY KEY)")
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS going (id INTEGER PRIMARY KEY)")
        self._db.execute("DELETE FROM temp.changed")
        self._db.execute("DELETE FROM temp.going")
        self._db.executemany("INSERT INTO temp.changed VALUES (?)", [(f,) for f in held])
        self._db.executemany("INSERT OR IGNORE INTO temp.going VALUES (?)",
                             [(int(row),) for row in removed])
        for file, text in self._db.execute(
                "SELECT file, text FROM chunks WHERE file IN (SELECT file FROM temp.changed) "
                "AND id NOT IN (SELECT id FROM temp.going)"):
            held[file][0].append(text)
        return held

    def _count_words(self, held: dict[bytes, tuple[list[str], list[str], list[str]]]
                     ) -> None:
        """The ``words`` table moved by the files a commit changes (``_held_by_files``):
        a word a file holds now and did not before counts one more file, one it held and
        no longer holds one fewer; a word no file holds any more goes; each file's words
        (``file_words``) become those it holds now (a file left without chunks goes). Each
        text is read once: a file's words before are those of its chunks that stay and go,
        after those that stay and come."""
        from vrsd_kit.lexical import document_frequencies

        up: list[NDArray[np.int64]] = [np.zeros(0, np.int64)]
        down: list[NDArray[np.int64]] = [np.zeros(0, np.int64)]
        for file, (stay, going, coming) in held.items():
            stays, went, came = (document_frequencies(texts, WORDS_LANGUAGE)[0]
                                 for texts in (stay, going, coming))
            before, after = np.union1d(stays, went), np.union1d(stays, came)
            up.append(np.setdiff1d(after, before, assume_unique=True))
            down.append(np.setdiff1d(before, after, assume_unique=True))
            if stay or coming:
                self._db.execute("INSERT OR REPLACE INTO file_words (file, ids) VALUES (?, ?)",
                                 (file, after.astype(np.int64).tobytes()))
            else:
                self._db.execute("DELETE FROM file_words WHERE file = ?", (file,))
        ups, downs = np.concatenate(up), np.concatenate(down)
        ids, where = np.unique(np.concatenate([ups, downs]), return_inverse=True)
        change = np.bincount(where.ravel(), weights=np.concatenate(
            [np.ones(len(ups)), -np.ones(len(downs))]), minlength=len(ids)).astype(np.int64)
        moved = change != 0
        self._db.executemany(
            "INSERT INTO words (id, df) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET "
            "df = df + excluded.df", zip(ids[moved].tolist(), change[moved].tolist(),
                                         strict=True))
        self._db.executemany("DELETE FROM words WHERE id = ? AND df <= 0",
                             [(word,) for word in ids[change < 0].tolist()])

    def _count_all_words(self) -> None:
        """The ``words`` and ``file_words`` tables made afresh from every stored chunk's
        text (how many files hold each word; each file's words), and the ``words`` setting
        saying what they count."""
        for table in ("words", "file_words"):
            self._db.execute(f"DROP TABLE IF EXISTS {table}")
        self._db.execute("CREATE TABLE words (id INTEGER PRIMARY KEY, df INTEGER NOT NULL)")
        self._db.execute("CREATE TABLE file_words (file BLOB PRIMARY KEY, ids BLOB NOT NULL)")

        def kept(found: Iterator[tuple[bytes, NDArray[np.int64]]]
                 ) -> Iterator[tuple[bytes, NDArray[np.int64]]]:
            for file, held in found:
                self._db.execute("INSERT INTO file_words (file, ids) VALUES (?, ?)",
                                 (file, held.astype(np.int64).tobytes()))
                yield file, held

        ids, df = count_files(kept(read_file_words(
            self._db.execute("SELECT file, text FROM chunks ORDER BY file"))))
        self._db.executemany("INSERT INTO words (id, df) VALUES (?, ?)",
                             zip(ids.tolist(), df.tolist(), strict=True))
        self._db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('words', ?)",
                         (json.dumps(words_reading()),))

    def _record_files(self, files: FilesRead) -> None:
        """The files under ``files.folder``: those read now with their signatures, the
        unchanged ones as they were, the others out."""
        listed = {os.fsdecode(file) for (file,) in self._db.execute(
            "SELECT file FROM files WHERE " + _UNDER, _under(files.folder))}
        self._db.executemany("DELETE FROM files WHERE file = ?", [
            (os.fsencode(name),) for name in listed - files.kept - set(files.read)])
        self._db.executemany(
            "INSERT OR REPLACE INTO files (file, size, mtime_ns, seen_ns) VALUES (?, ?, ?, ?)",
            [(os.fsencode(name), *signature) for name, signature in files.read.items()])

    def _checkpoint(self) -> None:
        """The write-ahead log copied into the database and emptied, where no reader
        holds an older state (else at a later commit)."""
        import apsw

        with contextlib.suppress(apsw.Error):
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _full(self, added: Sequence[NewChunk], vectors: NDArray[np.float32], said: bool
              ) -> IndexFull | None:
        """The message for a commit the disk had no room for, once SQLite rolled it back
        and the write-ahead log is emptied (None: the disk has the room, the failure was
        another; ``said``: SQLite said the disk is full)."""
        self._checkpoint()
        new = sum(len(c.text.encode("utf-8", "surrogatepass")) + len(c.file) + 200
                  for c in added) + vectors.nbytes + _word_rows(added)
        # the log's copy and the database's, and the vector table's next block
        need = 2 * new + 2 * _VECTOR_BLOCK * vectors.shape[1] * 4
        free = shutil.disk_usage(self.where).free
        if free >= need and not said:
            return None
        return IndexFull(
            f"index_dir: the disk holding {self.path} is full: this commit needs about "
            f"{_megabytes(need)} free, {_megabytes(free)} is; nothing was changed (the "
            "index is as it was): free some space and run 'vrsd index' again")


_WORDS_READ = 20_000
"""The most chunks a full disk's message reads to estimate the word tables' growth: a
larger commit's estimate is scaled up from its first ones (words repeat, so scaling
tends to overestimate)."""


def _word_rows(added: Sequence[NewChunk]) -> int:
    """About how many bytes the word tables grow by when ``added`` is committed, at most:
    each file's word ids (``file_words``: 8 bytes an id) and a ``words`` row for each
    distinct word (about 24 bytes), as if every word were new."""
    read = added[:_WORDS_READ]
    found = [ids for _, ids in read_file_words(sorted(
        (os.fsencode(c.file), c.text) for c in read))]
    if not found:
        return 0
    size = 8 * sum(len(ids) for ids in found) + 24 * len(np.unique(np.concatenate(found)))
    return size * len(added) // len(read)


def _megabytes(count: int) -> str:
    return f"{math.ceil(count / 1e5) / 10:.1f} MB"


def remove_old_store(where: Path) -> None:
    """Delete what an older vrsd's index kept in ``where`` (numpy generations and their
    manifest; the Chroma store), and nothing else: a ``--index-dir`` may hold other
    files."""
    manifest, prefix = OLD_FLAT
    candidates = [where / manifest, *where.glob(f"{prefix}*"), *where.glob(f".{prefix}*.tmp"),
                  *where.glob(f".{manifest}.*.tmp"), *(where / name for name in OLD_STORE)]
    for path in candidates:
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
    pid = possible_pid(found.get("pid"))
    if pid is None:
        return False  # no process can have it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    except OSError:
        return None
    return True


def possible_pid(value: object) -> int | None:
    """``value`` as a process id a process can have (1 to 2**31 - 1), else None."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        pid = int(value)
    except ValueError:
        return None
    return pid if 0 < pid < 2**31 else None


def last_commit(where: Path) -> str | None:
    """The token the index's last commit wrote (None: no index, or none readable): every
    commit writes a new one in its transaction, so a new token means a commit since."""
    path = where / DATABASE
    if not path.is_file():
        return None
    try:
        db = connect(path)
    except _database_error():
        return None
    try:
        found = db.execute("SELECT value FROM settings WHERE key = 'commit'").fetchone()
    except _database_error():
        return None
    finally:
        db.close()
    return None if found is None else str(found[0])


def committed_by(where: Path, found: dict[str, Any]) -> bool:
    """Whether the run of the writer's record ``found`` committed (the index's commit
    token changed since it took the lock, and only the lock's holder commits): a kill
    after the commit left the record behind, but nothing is left to finish."""
    if "commit" not in found:
        return False  # a record written before the commit token was kept
    return last_commit(where) != found["commit"]


def interruption(where: Path, *, indexed: bool = True) -> str | None:
    """What a reader should know about a writer's record: an interrupted run (how to
    finish it), or one still running; None when the last run finished. ``indexed``:
    whether a generation was committed before that run."""
    found = writer_record(where)
    if found is None or committed_by(where, found):
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
        if left is not None and committed_by(where, left):
            left = None  # killed after its commit: nothing to finish
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": now(),
                  "folder": str(folder), "argv": sys.argv[1:],
                  "commit": last_commit(where)}
        try:
            _write_atomically(where / WRITER, json.dumps(record).encode("utf-8"))
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            raise IndexFull(f"index_dir: the disk holding {where} is full: no room for "
                            f"{WRITER} ({_megabytes(shutil.disk_usage(where).free)} free); "
                            "nothing was changed: free some space and run 'vrsd index' "
                            "again") from None
        try:
            yield left
        except KeyboardInterrupt:  # the record stays, marked: readers say how to finish
            if committed_by(where, record):
                (where / WRITER).unlink(missing_ok=True)
                raise
            record["interrupted"] = now()
            _write_atomically(where / WRITER, json.dumps(record).encode("utf-8"))
            raise
        except BaseException:
            (where / WRITER).unlink(missing_ok=True)
            raise
        (where / WRITER).unlink(missing_ok=True)
    finally:
        lock.release()
