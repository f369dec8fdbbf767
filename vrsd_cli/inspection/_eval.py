"""The evaluation code the inspection borrows, imported here alone: the evidence
protocol's corpora (for ``known``) and the ``vrsd`` command's disk-cached embeddings
(for ``sources`` and the benchmark), from ``vrsd_eval``: these imports are the only
lines that name it."""

from __future__ import annotations

import os
from typing import Any


def evidence_corpora(limit: int | None) -> list[Any]:
    """The evidence protocol's plain, redundant and chunked HotpotQA corpora (``limit``:
    the first questions, and only their paragraphs)."""
    from vrsd_eval.evidence import load_evidence_corpora

    return load_evidence_corpora(limit=limit)


def cached_embeddings(model: str | None = None,
                      cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """The ``vrsd`` command's embeddings for ``model`` (None: the bundled one), cached on
    disk (``cache_dir``, else the default cache)."""
    from vrsd_eval.disk_embeddings import cached_embeddings as cached

    return cached(model, cache_dir)
