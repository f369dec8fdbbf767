"""``inspect_store``: will the default change anything on this store? Label-free."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from vrsd_core import check_count

from .figures import Inspection, Passage, QuestionFigures, compare
from .questions import read_questions
from .sources import Pool, SourceSpec, source_for

DEFAULT_SAMPLE = 100
"""Passages asked as questions when no questions are given (all of them if fewer)."""


def inspect_store(
    store: Any,
    questions: str | os.PathLike[str] | Sequence[str] | None = None,
    *,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    source: SourceSpec = "source",
    embedder: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> Inspection:
    """Top-k against the default (``vrsd_core.DEFAULT_METHOD``) on ``store``'s candidates
    for every question: how crowded top-k is and what the default changes.

    Args:
        store: a folder built by ``vrsd index`` (a path); a LangChain ``VectorStore``
            or ``vrsd_langchain.VRSDRetriever`` (its k, fetch_k, search arguments and
            embeddings are used); a LlamaIndex index; a Haystack
            ``InMemoryDocumentStore`` or the embedding retriever of a pipeline (its
            ``top_k`` is the default fetch_k; it must return embeddings).
        questions: a file (one question a line, or JSON lines with a ``"question"``
            field) or a list of strings. None: ``sample`` of the store's own passages,
            each asked as a question with itself left out of its candidates.
        k, fetch_k: how many passages are kept, and of how many candidates (None: the
            retriever's, else 4 and 20, or k if larger).
        sample, seed: how many passages to ask when no questions are given, drawn at
            random with ``seed``.
        source: where a passage's source is, for the source figures: a metadata field
            (``"source"``: what ``vrsd index`` records) or a callable on the
            framework's item; None for none.
        embedder: the model the store's vectors were made with, when the store does not
            know it: a LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding``, or for
            Haystack the pipeline's text embedder (or a callable str -> vector).
        cache_dir: the embedding cache of a ``vrsd index`` folder (see ``vrsd index``).
        progress: a progress bar on stderr (tqdm).

    Returns:
        An ``Inspection``: per-question figures, totals and the verdict
        (``vrsd_cli.inspection.format_table`` and ``write_html`` present it).

    Raises:
        ValueError: naming the argument: ``store`` empty or of an unknown kind;
            ``embedder`` missing; ``questions`` unreadable or with a blank or
            malformed line; ``k``, ``fetch_k``, ``sample`` or ``seed`` out of range.
    """
    start = time.perf_counter()
    for name, value in (("k", k), ("fetch_k", fetch_k)):
        if value is not None:
            check_count(value, name, minimum=1)  # before any store is opened
    asked = None if questions is None else read_questions(questions)
    if asked is None:
        sample = check_count(sample, "sample", minimum=1)
        seed = check_count(seed, "seed", minimum=0)
    src = source_for(store, embedder, k, fetch_k, source, cache_dir)  # its k, fetch_k checked
    k, fetch_k = src.k, src.fetch_k
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
    figures = [_question(src.pool(text, fetch_k + (own is not None)), text, own, k, fetch_k)
               for text, own in _progress(pairs, progress)]
    if not any(q.top_k for q in figures):
        raise ValueError(f"store: {src.name} returned no candidates for any question; "
                         "is it empty?")
    return Inspection(src.name, where, k, fetch_k, figures, time.perf_counter() - start)


def _question(pool: Pool, text: str, own: Passage | None, k: int,
              fetch_k: int) -> QuestionFigures:
    passages, vectors = pool.passages, pool.vectors
    if own is not None:
        passages, vectors = _without(own, passages, vectors)
    return compare(text, pool.query, passages[:fetch_k], vectors[:fetch_k], k, own)


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
