"""The command line's disk cache of vectors (``vrsd_kit.vector_cache``): atomic writes,
a damaged entry or database encoded again with a warning naming it, a full disk not
fatal, and a real process killed while it writes leaves a cache that reads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vrsd_kit.vector_cache import (
    DamagedCacheEntry,
    VectorCache,
    decode_vector,
    encode_vector,
    text_key,
)


class CountingEmbeddings:
    """A LangChain-shaped embeddings object: a fixed vector per text, calls counted."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.encoded += texts
        return [[float(len(t)), 1.0, 0.5] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def cached(folder, inner):
    from langchain_classic.embeddings import CacheBackedEmbeddings

    return CacheBackedEmbeddings(inner, VectorCache(folder / "documents"),  # type: ignore[arg-type]
                                 query_embedding_store=VectorCache(folder / "queries"))  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=40))
def test_a_vector_reads_back_as_written(vector):
    assert decode_vector(encode_vector(vector)) == [float(x) for x in vector]


@pytest.mark.parametrize("data", [b"", b"vec1", encode_vector([1.0, 2.0])[:-3], b"[0.1, 0.2",
                                  b"xxxx" + encode_vector([1.0])[4:], 7,
                                  encode_vector([1.0, 2.0]).replace(
                                      np.float64(2.0).tobytes(), np.float64("nan").tobytes())])
def test_what_is_not_a_whole_vector_is_refused(data):
    with pytest.raises(ValueError):
        decode_vector(data)


def test_a_damaged_entry_is_encoded_again_with_a_warning_naming_it(tmp_path):
    import diskcache

    inner = CountingEmbeddings()
    embeddings = cached(tmp_path, inner)
    first = embeddings.embed_documents(["tea", "coffee"])
    store = embeddings.document_embedding_store
    store.close()  # type: ignore[attr-defined]
    with diskcache.Cache(str(tmp_path / "documents")) as raw:  # a half-written value
        raw.set(text_key("tea"), encode_vector(first[0])[:-5])
    inner.encoded.clear()
    with pytest.warns(DamagedCacheEntry) as caught:
        again = cached(tmp_path, inner).embed_documents(["tea", "coffee"])
    assert again == first and inner.encoded == ["tea"]
    message = str(caught[0].message)
    assert text_key("tea") in message and str(tmp_path / "documents") in message
    inner.encoded.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-made: read without a word
        assert cached(tmp_path, inner).embed_documents(["tea"]) == first[:1]
    assert inner.encoded == []


@pytest.mark.parametrize("damage", ["empty", "half", "garbage"])
def test_a_damaged_database_is_moved_aside_and_made_again(tmp_path, damage):
    inner = CountingEmbeddings()
    cache = VectorCache(tmp_path / "documents")
    cache.mset([(f"text {i}", [float(i), 1.0]) for i in range(300)])
    cache.close()
    db = tmp_path / "documents" / "cache.db"
    data = db.read_bytes()
    db.write_bytes({"empty": b"", "half": data[:len(data) // 2],
                    "garbage": b"not a database " * 100}[damage])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        embeddings = cached(tmp_path, inner)
        vectors = embeddings.embed_documents([f"text {i}" for i in range(300)])
    assert vectors == [[float(len(f"text {i}")), 1.0, 0.5] for i in range(300)]
    if damage != "empty":  # an empty file is an empty database: nothing is lost to name
        assert any(isinstance(w.message, DamagedCacheEntry) and str(db.parent) in
                   str(w.message) for w in caught), [str(w.message) for w in caught]
    inner.encoded.clear()
    assert cached(tmp_path, inner).embed_documents(["text 5"]) == vectors[5:6]
    assert inner.encoded == []  # the new database holds what was encoded again


_FULL_DISK = textwrap.dedent("""
    import resource, signal, sys, warnings
    from vrsd_kit.vector_cache import VectorCache
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
    cache = VectorCache(sys.argv[1])
    cache.mset([(f"text 0 {i}", [0.0, float(i)] * 200) for i in range(16)])
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for batch in range(1, 40):
            cache.mset([(f"text {batch} {i}", [float(batch), float(i)] * 200)
                        for i in range(16)])
    print(len(caught), type(caught[0].message).__name__ if caught else "-")
    print(str(caught[0].message) if caught else "-")
""")


def test_a_full_disk_warns_once_naming_the_cache_and_the_run_goes_on(tmp_path):
    """Files may not grow past 200 kB (RLIMIT_FSIZE, as a full disk refuses them): the
    writes that do not fit fail, one warning names the cache, nothing is raised, and
    what was written before reads back."""
    folder = tmp_path / "documents"
    run = subprocess.run([sys.executable, "-c", _FULL_DISK, str(folder)], capture_output=True,
                         text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr
    counted, message = run.stdout.splitlines()
    assert counted == "1 CacheWriteFailed"
    assert str(folder) in message and "cannot be written" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = VectorCache(folder)
        assert cache.mget(["text 0 3"]) == [[0.0, 3.0] * 200]


_WRITER = textwrap.dedent("""
    import sys
    from vrsd_kit.vector_cache import VectorCache
    cache = VectorCache(sys.argv[1])
    print("ready", flush=True)
    batch = 0
    while True:
        cache.mset([(f"text {batch} {i}", [float(batch), float(i)] * 200) for i in range(64)])
        batch += 1
""")


@pytest.mark.parametrize("lines", [1, 5, 40])
def test_a_writer_killed_mid_batch_leaves_whole_batches(tmp_path, lines):
    """A real process writes batches until SIGKILL: every batch then reads whole or not
    at all, and nothing read is damaged."""
    folder = tmp_path / "documents"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(folder)],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    cache = VectorCache(folder)
    while len(list(cache.yield_keys())) < lines * 64:  # let it write some batches first
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    cache.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no entry damaged
        cache = VectorCache(folder)
        batches = 0
        while True:
            found = cache.mget([f"text {batches} {i}" for i in range(64)])
            if all(v is None for v in found):
                break
            assert all(v == [float(batches), float(i)] * 200 for i, v in enumerate(found))
            batches += 1
    assert batches >= lines
