"""A disk cache of vectors keyed by text, that a kill, a full disk or a damaged entry
cannot make unusable (no framework imports).

``VectorCache(folder)`` keeps one vector per text in ``diskcache`` (SQLite underneath):
a batch of writes is one transaction, so a kill or a full disk leaves the entries as
they were before it or after it, never half-written. An entry that does not read back
as a vector (damaged on disk, or written by something else) is treated as missing,
with a warning naming it, and is re-made by the next write. A database file that
SQLite cannot open is moved aside (``<folder>.damaged``), named in a warning, and the
cache starts empty. A write that fails (the disk is full) warns once, naming the folder,
and the run goes on without caching.

It has the shape of LangChain's ``BaseStore[str, list[float]]`` (``mget``, ``mset``,
``mdelete``, ``yield_keys``), so ``CacheBackedEmbeddings`` stores its vectors in it
directly; the keys given are the texts, stored as their SHA-256.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import struct
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

CACHE_ENV = "VRSD_CACHE_DIR"

_MAGIC = b"vec1"
_HEADER = struct.Struct("<4sI")  # magic, dimension; then the float64 values, little-endian


class DamagedCacheEntry(UserWarning):
    """An entry of a disk cache could not be read back; it is made again."""


class CacheWriteFailed(UserWarning):
    """A disk cache could not be written (a full disk, a read-only folder); the run goes
    on without it."""


def default_cache_dir() -> Path:
    """``$VRSD_CACHE_DIR`` if set, else ``~/.cache/vrsd``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "vrsd"


def text_key(text: str) -> str:
    """The key a text is stored under: its SHA-256 (hex)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode_vector(vector: Sequence[float]) -> bytes:
    """``vector`` as stored: a header (magic, dimension), then float64 little-endian."""
    values = np.asarray(vector, dtype="<f8")
    if values.ndim != 1 or not values.size or not np.isfinite(values).all():
        raise ValueError(f"vector: expected a non-empty 1-D finite vector, got shape "
                         f"{values.shape}")
    return _HEADER.pack(_MAGIC, values.size) + values.tobytes()


def decode_vector(data: object) -> list[float]:
    """The vector ``encode_vector`` stored, or ValueError saying why ``data`` is not one."""
    if not isinstance(data, bytes):
        raise ValueError(f"not bytes but {type(data).__name__}")
    if len(data) < _HEADER.size:
        raise ValueError(f"{len(data)} bytes, shorter than a header")
    magic, dimension = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise ValueError("no vector header")
    if len(data) != _HEADER.size + 8 * dimension or not dimension:
        raise ValueError(f"{len(data)} bytes for a {dimension}-d vector")
    values = np.frombuffer(data, dtype="<f8", offset=_HEADER.size)
    if not np.isfinite(values).all():
        raise ValueError("non-finite values")
    return values.tolist()


def _storable(vector: Sequence[float]) -> bytes | None:
    """``vector`` encoded, or None for one that is not a finite vector (not cached: the
    caller's own checks name it)."""
    try:
        return encode_vector(vector)
    except (ValueError, TypeError):
        return None


class VectorCache:
    """Vectors by text in ``folder`` (created on first use); see the module's docstring.

    Safe to share between threads and processes (SQLite's own locking)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._cache: Any = None
        self._lock = threading.Lock()
        self._failed = False  # it could not be opened or written: warned once, then skipped

    def __repr__(self) -> str:
        return f"VectorCache({str(self.folder)!r})"

    def _open(self) -> Any:
        """The diskcache.Cache, opened on first use (None: it cannot be, warned once)."""
        with self._lock:
            if self._cache is None and not self._failed:
                try:
                    try:
                        self._cache = self._diskcache()
                    except sqlite3.OperationalError:  # locked, read-only, full: not damage
                        raise
                    except sqlite3.DatabaseError as exc:  # not a database
                        self._move_aside(exc)
                        self._cache = self._diskcache()
                except (sqlite3.Error, OSError) as exc:
                    self._give_up("opened", exc)
            return self._cache

    def _diskcache(self) -> Any:
        import diskcache

        # nothing is culled (the cache holds what the user's folders hold); no memory map,
        # so a file cut short by something else is an error SQLite reports, not a SIGBUS
        return diskcache.Cache(str(self.folder), eviction_policy="none", size_limit=2**62,
                               sqlite_mmap_size=0)

    def _move_aside(self, exc: BaseException) -> None:
        """A database SQLite cannot read: renamed ``<folder>.damaged``, named in a warning."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None
        aside = self.folder.with_name(self.folder.name + ".damaged")
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(self.folder, aside)
        warnings.warn(f"the cache at {self.folder} is damaged ({exc}): moved to {aside}, "
                      "its vectors are encoded again", DamagedCacheEntry, stacklevel=5)

    def _damaged(self, exc: sqlite3.Error | OSError, done: str) -> None:
        """A read or write that failed: a damaged database is moved aside (the next call
        starts a new one); anything else (a full disk) ends the caching for this run."""
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                exc, sqlite3.OperationalError):
            try:
                with self._lock:
                    self._move_aside(exc)
                return
            except OSError as cannot:  # (the folder cannot be renamed either)
                exc = cannot
        self._give_up(done, exc)

    def _give_up(self, done: str, exc: BaseException) -> None:
        self._failed = True
        warnings.warn(f"the cache at {self.folder} cannot be {done} ({exc}); this run goes "
                      "on without it, encoding what it needs", CacheWriteFailed, stacklevel=5)

    def close(self) -> None:
        with self._lock:
            if self._cache is not None:
                self._cache.close()
                self._cache = None

    def mget(self, keys: Sequence[str]) -> list[list[float] | None]:
        """The vector of each text in ``keys`` (None: not cached, or damaged: warned)."""
        cache = self._open() if keys else None
        if cache is None:
            return [None] * len(keys)
        try:
            stored = [(key, cache.get(key, default=None, retry=True))
                      for key in map(text_key, keys)]
        except (sqlite3.Error, OSError) as exc:
            self._damaged(exc, "read")
            return [None] * len(keys)
        return [self._vector(key, data) for key, data in stored]

    def _vector(self, key: str, data: object) -> list[float] | None:
        if data is None:
            return None
        try:
            return decode_vector(data)
        except ValueError as exc:
            warnings.warn(f"the cache entry {key} in {self.folder} is damaged ({exc}): it "
                          "is encoded again", DamagedCacheEntry, stacklevel=4)
            return None

    def mset(self, pairs: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Store each (text, vector), all in one transaction (a kill keeps all or none);
        a vector that is not finite is left out."""
        cache = self._open() if pairs and not self._failed else None
        if cache is None or self._failed:
            return
        encoded = [(text_key(text), data) for text, vector in pairs
                   if (data := _storable(vector)) is not None]
        try:
            with cache.transact(retry=True):
                for key, data in encoded:
                    cache.set(key, data, retry=True)
        except (sqlite3.Error, OSError) as exc:
            self._damaged(exc, "written")

    def mdelete(self, keys: Sequence[str]) -> None:
        cache = self._open()
        if cache is None:
            return
        with cache.transact(retry=True):
            for text in keys:
                cache.delete(text_key(text), retry=True)

    async def amget(self, keys: Sequence[str]) -> list[list[float] | None]:
        return self.mget(keys)

    async def amset(self, pairs: Sequence[tuple[str, Sequence[float]]]) -> None:
        self.mset(pairs)

    async def amdelete(self, keys: Sequence[str]) -> None:
        self.mdelete(keys)

    def yield_keys(self, prefix: str | None = None) -> Iterator[str]:
        """The stored keys (the texts' SHA-256, not the texts)."""
        cache = self._open()
        for key in cache.iterkeys() if cache is not None else ():
            if prefix is None or str(key).startswith(prefix):
                yield str(key)
