"""The room a full disk's message names for the word tables (``flat_index._word_rows``):
each file's word ids and a row per distinct word, read from a bounded part of a large
commit and scaled up."""

from __future__ import annotations

import random

import pytest

from vrsd_cli import flat_index
from vrsd_cli.flat_index import NewChunk


def _chunks(count: int) -> list[NewChunk]:
    rng = random.Random(3)
    return [NewChunk(f"f{i // 5}.md", i % 5,
                     " ".join(f"w{rng.randrange(5_000)}" for _ in range(60)), "digest")
            for i in range(count)]


def test_the_estimate_counts_each_files_word_ids_and_a_row_per_word() -> None:
    chunks = [NewChunk("a.md", 0, "one two three", "d"), NewChunk("a.md", 1, "three four", "d"),
              NewChunk("b.md", 0, "one five", "d")]
    # a.md holds 4 distinct words, b.md 2; 5 distinct in all
    assert flat_index._word_rows(chunks) == 8 * (4 + 2) + 24 * 5
    assert flat_index._word_rows([]) == 0


def test_a_large_commit_reads_a_bounded_part_and_does_not_estimate_less(
        monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(400)
    exact = flat_index._word_rows(chunks)
    read: list[int] = []
    real = flat_index.read_file_words

    def counted(rows):  # the real reader, counting the chunks it is given
        rows = list(rows)
        read.append(len(rows))
        return real(rows)

    monkeypatch.setattr(flat_index, "read_file_words", counted)
    monkeypatch.setattr(flat_index, "_WORDS_READ", 100)
    assert flat_index._word_rows(chunks) >= exact
    assert read == [100]
