"""Embeddings loaded on the first text to encode (``vrsd_cli.indexing.index_embeddings``)."""

from __future__ import annotations

import warnings
from functools import lru_cache

from langchain_core.embeddings import Embeddings

from vrsd_kit.numpy_encoder import NumpyEncoder, UnsupportedModel, bundled_numpy_encoder

from .disk_embeddings import base_embeddings


class LazyEmbeddings(Embeddings):
    """``base_embeddings(model)``, loaded on the first text to encode, encoding each
    distinct text of a call once.

    Behind the cache, a command whose texts are all cached (re-indexing unchanged
    files, a repeated search) never imports torch nor loads the weights; and the
    same chunk in many files (licences, boilerplate) is encoded once per batch.
    For the bundled model (``model`` None), documents and queries are encoded by
    ``vrsd_kit.numpy_encoder``: the same vectors without importing torch (``vrsd
    search``'s new question, ``vrsd index``'s chunks: on a busy 2-core machine it
    encodes faster than sentence-transformers, docs/speed.md); if it cannot run, by the
    model, after one warning saying why. Many questions at once (``warm_query_cache``,
    ``vrsd inspect``) are encoded as documents, in batches (``queries_as_documents``).
    """

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    @property
    def queries_as_documents(self) -> bool:
        """Whether a query's vector is its vector as a document (the bundled model's: so
        ``warm_query_cache`` encodes many questions in batches, through the model)."""
        return self.model is None

    @property
    def loaded(self) -> Embeddings:
        """The model's embeddings, loaded now if they were not yet."""
        return base_embeddings(self.model)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return []
        encoder = _numpy_encoder() if self.model is None else None
        if encoder is not None:
            found = encoder.embed(distinct, batch_size=DOCUMENT_BATCH,
                                  threads=DOCUMENT_THREADS).tolist()
        else:
            found = self.loaded.embed_documents(distinct)
        vectors = dict(zip(distinct, found, strict=True))
        return [vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        encoder = _numpy_encoder() if self.model is None else None
        if encoder is not None:
            return [float(x) for x in encoder.embed([text])[0]]
        return self.loaded.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


DOCUMENT_BATCH = 8
"""Texts per forward pass of the numpy encoder on documents (in order of length, so
little padding, ``NumpyEncoder.embed``)."""

DOCUMENT_THREADS = None
"""Batches of documents the numpy encoder computes at once: one per CPU core, each on one
BLAS thread (``NumpyEncoder.embed``); a question is encoded alone (``embed_query``)."""


@lru_cache(maxsize=1)
def _numpy_encoder() -> NumpyEncoder | None:
    """The bundled model's numpy encoder, or None after one warning naming why not."""
    try:
        return bundled_numpy_encoder()
    except (ImportError, UnsupportedModel) as exc:
        warnings.warn(f"texts are encoded with torch (slower to start), as the numpy "
                      f"encoder cannot run: {exc}", RuntimeWarning, stacklevel=3)
        return None
