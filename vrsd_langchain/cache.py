"""A bounded, thread-safe LRU cache of document embeddings, keyed by content.

Used wherever candidate vectors have to be computed from text: the generic
fallback for stores that do not hand out their stored vectors, and
``DiverseCompressor``. Repeated queries over the same documents (the common case
in a RAG loop) then embed each text once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from vrsd_kit.steps import Steps, arun_steps, call, run_steps

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

DEFAULT_CACHE_SIZE = 4096

_Key = tuple[int, str]


def content_hash(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8): the cache's content key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """LRU map ``(embeddings model, content hash) -> vector``, at most ``maxsize`` entries.

    The model is part of the key (by identity; the cache keeps a reference to
    every model it has entries for, so an identity is never reused while its
    entries live), so one cache can serve several ``Embeddings`` safely.
    ``maxsize=0`` disables caching. Safe to share between threads: lookups and
    inserts hold a lock; the embedding call itself runs outside it.

    Attributes:
        hits: texts served without embedding them (cached, or repeated within a call).
        misses: texts that had to be embedded; ``hits + misses`` counts every text asked for.
    """

    def __init__(self, maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 0:
            raise ValueError(f"maxsize: expected an integer >= 0, got {maxsize!r}")
        self.maxsize = maxsize
        self._entries: OrderedDict[_Key, NDArray[np.float64]] = OrderedDict()
        self._models: dict[int, Embeddings] = {}
        self._per_model: dict[int, int] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._entries.clear()
            self._models.clear()
            self._per_model.clear()
            self.hits = 0
            self.misses = 0

    def embed_steps(self, embeddings: Embeddings, texts: Sequence[str]
                    ) -> Steps[NDArray[np.float64]]:
        """(n, d) vectors of ``texts``, embedding only those not cached (each once), as
        steps (``vrsd_kit.steps``) asking ``embed_documents`` / ``aembed_documents``."""
        keys, found, todo = self._plan(embeddings, texts)
        if todo:
            fresh = yield call(embeddings.embed_documents, embeddings.aembed_documents,
                               [texts[i] for i in todo])
            found.update(self._store(embeddings, keys, todo, fresh))
        return self._stack(found, len(texts))

    def embed_documents(self, embeddings: Embeddings, texts: Sequence[str]) -> NDArray[np.float64]:
        """``embed_steps`` through ``embeddings.embed_documents``."""
        return run_steps(self.embed_steps(embeddings, texts))

    async def aembed_documents(self, embeddings: Embeddings, texts: Sequence[str]
                               ) -> NDArray[np.float64]:
        """``embed_steps`` through ``embeddings.aembed_documents``."""
        return await arun_steps(self.embed_steps(embeddings, texts))

    def _plan(
        self, embeddings: Embeddings, texts: Sequence[str]
    ) -> tuple[list[_Key], dict[int, NDArray[np.float64]], list[int]]:
        """Keys of ``texts``, the positions already cached, and one position per missing text."""
        model = id(embeddings)
        keys = [(model, content_hash(t)) for t in texts]
        found: dict[int, NDArray[np.float64]] = {}
        todo: list[int] = []
        first_of: dict[_Key, int] = {}
        with self._lock:
            for i, key in enumerate(keys):
                vec = self._entries.get(key)
                if vec is not None:
                    self._entries.move_to_end(key)
                    found[i] = vec
                    self.hits += 1
                elif key not in first_of:
                    first_of[key] = i
                    todo.append(i)
                    self.misses += 1
                else:  # a repeat within this call: served by the one embedding
                    self.hits += 1
        return keys, found, todo

    def _store(
        self,
        embeddings: Embeddings,
        keys: list[_Key],
        todo: list[int],
        fresh: Sequence[Sequence[float]],
    ) -> dict[int, NDArray[np.float64]]:
        """Cache the fresh vectors; return them for every position sharing a missing key."""
        if len(fresh) != len(todo):
            raise ValueError(
                f"embeddings: embed_documents returned {len(fresh)} vectors for {len(todo)} texts"
            )
        by_key: dict[_Key, NDArray[np.float64]] = {}
        for i, vec in zip(todo, fresh, strict=True):
            try:
                arr = np.array(vec, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"embeddings: embed_documents returned {type(vec).__name__} for text {i}, "
                    "not a vector of numbers"
                ) from None
            arr.setflags(write=False)
            by_key[keys[i]] = arr
        with self._lock:
            if self.maxsize:
                model = id(embeddings)
                self._models[model] = embeddings
                for key, arr in by_key.items():
                    if key not in self._entries:
                        self._per_model[model] = self._per_model.get(model, 0) + 1
                    self._entries[key] = arr
                    self._entries.move_to_end(key)
                while len(self._entries) > self.maxsize:
                    (old_model, _), _ = self._entries.popitem(last=False)
                    self._per_model[old_model] -= 1
                    if self._per_model[old_model] == 0:  # no entry left: let the model go
                        del self._per_model[old_model]
                        del self._models[old_model]
        return {i: by_key[key] for i, key in enumerate(keys) if key in by_key}

    @staticmethod
    def _stack(found: dict[int, NDArray[np.float64]], n: int) -> NDArray[np.float64]:
        if n == 0:
            return np.zeros((0, 0))
        rows = [found[i] for i in range(n)]
        shapes = {row.shape for row in rows}
        if len(shapes) > 1:
            raise ValueError(
                f"embeddings: embed_documents returned vectors of different shapes "
                f"{sorted(shapes)}"
            )
        return np.stack(rows)


def built_cache(owner: Any) -> EmbeddingCache:
    """``owner.cache``, which its validator sets when ``owner`` is built; RuntimeError if
    it is unset (a model made without validation, e.g. by pydantic's ``model_construct``)."""
    cache = owner.cache
    if not isinstance(cache, EmbeddingCache):
        raise RuntimeError(
            f"{type(owner).__name__}.cache: {cache!r}, not an EmbeddingCache; build it with "
            f"{type(owner).__name__}(...), whose validator sets one"
        )
    return cache
