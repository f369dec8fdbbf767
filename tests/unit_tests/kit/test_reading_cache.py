"""The cache of readings (``vrsd_kit.lexical.read_text``): bounded by memory, not by a
count of texts, and safe to share between threads once it is full."""

from __future__ import annotations

import sys
import threading
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from tests.helpers.reading import reference_reading
from vrsd_kit import lexical
from vrsd_kit.lexical import Judge, pool_relevance
from vrsd_langchain import DiverseRetriever

WORDS = ("water vapor liquid evaporation heat sun plants light rome empire senate bread "
         "dough oven cats dogs sleep").split()


def new_text(i: int, size: int) -> str:
    """A text of about ``size`` characters that no other ``i`` gives."""
    words = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(size // 6))
    return f"text {i} says {words}."[:size] + f" {i}"


@pytest.fixture
def small_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[lexical._Reader]:
    """Every reading in the product goes through a cache of 64 KB for the test."""
    reader = lexical._Reader(64 << 10)
    monkeypatch.setattr(lexical, "read_text", reader)
    yield reader


def test_the_cache_holds_at_most_its_ceiling_in_memory() -> None:
    ceiling = 256 << 10
    reader = lexical._Reader(ceiling)
    reader(new_text(-1, 100))  # the tables a first reading builds, outside the measure
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(300):  # 300 texts of 20,000 characters never seen: 6 MB of text
            reader(new_text(i, 20_000))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= ceiling * 1.1  # allocator slack; the texts read are six MB
    info = reader.cache_info()
    assert info.misses == 301 and 0 < info.currsize <= info.maxsize == ceiling


def test_what_the_cache_counts_is_at_least_what_it_holds() -> None:
    reader = lexical._Reader(1 << 20)
    texts = [new_text(i, 500 + 37 * i) for i in range(40)] + ["東京タワーは高い", "", "!!"]
    readings = [reader(text) for text in texts]
    held = sum(sys.getsizeof(text) + sum(a.nbytes for a in (r.ids, r.counts, r.pairs, r.ending))
               for text, r in zip(texts, readings, strict=True))
    assert held <= reader.cache_info().currsize <= reader.maxsize
    reader.cache_clear()
    assert reader.cache_info() == (0, 0, 1 << 20, 0)


def test_a_text_larger_than_the_cache_is_read_and_not_kept() -> None:
    reader = lexical._Reader(4096)
    big = new_text(1, 10_000)
    assert reader(big).ids.tolist() == reference_reading(big).ids.tolist()
    assert reader.cache_info().currsize == 0
    reader(big)
    assert reader.cache_info().misses == 2


def run_in_threads(work, count: int = 16) -> list[BaseException]:
    """``work(seed)`` in ``count`` threads at once, switching as often as they can; what each
    raised."""
    errors: list[BaseException] = []

    def guarded(seed: int) -> None:
        try:
            work(seed)
        except BaseException as exc:  # noqa: BLE001 - every failure is returned
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(seed,)) for seed in range(count)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    return errors


def test_sixteen_threads_over_a_full_cache_raise_nothing(small_cache: lexical._Reader
                                                         ) -> None:
    texts = [new_text(i, 300) for i in range(600)]  # far more than 64 KB of readings
    want = {text: reference_reading(text).ids.tolist() for text in texts[:60]}

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(40):
            pool = [texts[i] for i in rng.choice(len(texts), 30)]  # repeats too
            relevance = pool_relevance("water heat", pool, np.ones(2), np.ones((30, 2)))
            assert relevance.lexical.shape == (30,)
            Judge(pool)
            for text, read in zip(pool, lexical.read_texts(pool), strict=True):
                if text in want:
                    assert read.ids.tolist() == want[text]

    assert run_in_threads(work) == []
    info = small_cache.cache_info()
    assert info.currsize <= info.maxsize and info.hits > 0


def test_sixteen_threads_invoking_one_retriever_over_a_full_cache(
        small_cache: lexical._Reader) -> None:
    docs = [Document(page_content=new_text(i, 400)) for i in range(400)]
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(docs)
    retriever = DiverseRetriever(vectorstore=store, k=4, fetch_k=30)

    def work(seed: int) -> None:
        for j in range(12):
            found = retriever.invoke(f"{WORDS[(seed + j) % len(WORDS)]} text {seed * j}")
            assert len(found) == 4

    assert run_in_threads(work) == []
