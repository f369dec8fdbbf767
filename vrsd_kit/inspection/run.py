"""The inspection loop every adapter's ``inspect`` call shares: questions read, the
store's candidates fetched through a ``Source`` (each adapter has its own, reading the
store as its retriever does), top-k and the default compared on them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from vrsd_core import check_count

from ..settings import DEFAULT_FETCH_K, check_counts
from .figures import Inspection, Passage, QuestionFigures, compare
from .questions import read_questions

DEFAULT_SAMPLE = 100
"""Passages asked as questions when no questions are given (all of them if fewer)."""
DEFAULT_K = 4
"""``k`` when neither the call nor the retriever gives one (the retrievers')."""

SourceSpec = str | Callable[[Any], Any] | None
"""Where a passage's source is: a metadata field, a callable on the framework's item
(a Document or a node), or None for no source."""

Questions = str | os.PathLike[str] | Sequence[str] | None
"""A file (one question a line, or JSON lines with a ``"question"`` field), a list of
strings, or None: a sample of the store's own passages."""


@dataclass(frozen=True)
class Pool:
    """One question's candidates: the query vector, the passages and their vectors
    (row i belongs to passage i), in the store's order; ``background``, where the store
    knows its corpus: (question, the candidates) -> what the store's other passages say
    is common (the rerank's ``background`` setting)."""

    query: np.ndarray
    passages: list[Passage]
    vectors: np.ndarray
    background: Callable[[str, list[Passage]], Any] | None = None


class Source(Protocol):
    """A store as the inspection reads it."""

    name: str
    k: int
    fetch_k: int

    def prepare(self, questions: list[str]) -> None:
        """Embed ``questions`` ahead, in batches, where the model allows (else nothing)."""

    def pool(self, question: str, n: int) -> Pool:
        """The store's top ``n`` for ``question``, with their vectors."""

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        """``count`` of the store's passages at random (fewer if it holds fewer);
        ValueError naming ``questions`` when the store cannot list them."""


def source_label(spec: SourceSpec, item: Any, metadata: Mapping[str, Any]) -> str | None:
    """An item's source by ``spec`` (a metadata field or a callable), as a string."""
    if spec is None:
        return None
    value = spec(item) if callable(spec) else metadata.get(spec)
    return None if value is None else str(value)


def cannot_list(what: str) -> ValueError:
    """The error for a store that cannot list its passages when a sample is asked."""
    return ValueError(f"questions: {what} cannot list its passages, so there are none to "
                      "sample; give questions (a file or a list)")


def as_embedder(exc: ValueError) -> ValueError:
    """An adapter's error about its embedding argument, re-worded to name ``embedder``
    (the inspection's argument for the model)."""
    name, sep, rest = str(exc).partition(":")
    if sep and name in ("embeddings", "embed_model"):
        return ValueError(f"embedder:{rest}")
    return exc


def default_counts(k: int | None, fetch_k: int | None, fetch_default: int = DEFAULT_FETCH_K
                   ) -> tuple[int, int]:
    """(k, fetch_k) with the retrievers' defaults filled in (k 4, fetch_k
    ``DEFAULT_FETCH_K`` or k if larger), checked (ValueError naming the one at fault)."""
    k = check_count(DEFAULT_K if k is None else k, "k", minimum=1)
    return check_counts(k, max(fetch_default, k) if fetch_k is None else fetch_k)


def pick(items: Sequence[Any], count: int, rng: np.random.Generator) -> list[Any]:
    """``count`` of ``items`` at random, in the store's order."""
    if count >= len(items):
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]


def inspect_source(
    make_source: Callable[[], Source],
    questions: Questions = None,
    *,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    progress: bool = False,
    max_per_group: int | None = None,
) -> Inspection:
    """Top-k against the default on the candidates ``make_source()`` fetches for every
    question. The arguments are checked before the source is made (a store is opened
    only for a valid call); the adapters' ``inspect`` calls document them.
    ``max_per_group``: a per-source cap (the default keeps at most that many passages
    per source, and a top-k slot past it counts as crowded); None: no cap, and sharing a
    source is not crowding."""
    start = time.perf_counter()
    for name, value in (("k", k), ("fetch_k", fetch_k), ("max_per_group", max_per_group)):
        if value is not None:
            check_count(value, name, minimum=1)
    asked = None if questions is None else read_questions(questions)
    if asked is None:
        sample = check_count(sample, "sample", minimum=1)
        seed = check_count(seed, "seed", minimum=0)
    src = make_source()  # its k, fetch_k checked
    pairs: list[tuple[str, Passage | None]]
    if asked is None:
        drawn = [p for p in src.sample(sample, np.random.default_rng(seed)) if p.text.strip()]
        if not drawn:
            raise ValueError(f"store: {src.name} holds no passages")
        pairs = [(p.text, p) for p in drawn]
        where = (f"a sample of {len(drawn)} of the store's passages, each asked with itself "
                 "left out")
    else:
        pairs = [(q, None) for q in asked]
        where = (f"from {questions}" if isinstance(questions, str | os.PathLike)
                 else "given as a list")
    src.prepare([text for text, _ in pairs])
    figures = [_question(src.pool(text, src.fetch_k + (own is not None)), text, own, src.k,
                         src.fetch_k, max_per_group)
               for text, own in _progress(pairs, progress)]
    if not any(q.top_k for q in figures):
        raise ValueError(f"store: {src.name} returned no candidates for any question; "
                         "is it empty?")
    return Inspection(src.name, where, src.k, src.fetch_k, figures,
                      time.perf_counter() - start, max_per_group=max_per_group)


def _question(pool: Pool, text: str, own: Passage | None, k: int,
              fetch_k: int, max_per_group: int | None = None) -> QuestionFigures:
    passages, vectors = pool.passages, pool.vectors
    if own is not None:
        passages, vectors = _without(own, passages, vectors)
    passages, vectors = passages[:fetch_k], vectors[:fetch_k]
    background = None if pool.background is None else pool.background(text, passages)
    return compare(text, pool.query, passages, vectors, k, own, max_per_group, background)


def _without(own: Passage, passages: list[Passage], vectors: np.ndarray
             ) -> tuple[list[Passage], np.ndarray]:
    """The candidates without the passage asked as the question (by id, else by text;
    when it is not among them, the last candidate goes, to keep fetch_k)."""
    at = next((i for i, p in enumerate(passages) if own.id is not None and p.id == own.id),
              None)
    if at is None:
        at = next((i for i, p in enumerate(passages) if p.text == own.text), len(passages) - 1)
    if at < 0:
        return passages, vectors
    return passages[:at] + passages[at + 1:], np.delete(vectors, at, axis=0)


def _progress(items: list[Any], show: bool) -> Any:
    if not show:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc="vrsd inspect", unit="question")
