"""``--model test:hashing``: a hashing embedding that exists for tests only.

Each text's vector is drawn from a random generator seeded by the text's SHA-256 (128
of its bits): the same text always gets the same vector, two texts never share one in
practice, and no model is loaded. The vectors carry no meaning; tests of what the index
keeps and returns run on thousands of chunks in seconds with it.
"""

from __future__ import annotations

import hashlib

import numpy as np
from langchain_core.embeddings import Embeddings

DIMENSION = 384  # the bundled model's


class HashingEmbeddings(Embeddings):
    """Deterministic random vectors keyed by each text's SHA-256 (tests only)."""

    def __init__(self, size: int = DIMENSION) -> None:
        self.size = size

    def _vector(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16],
                              "big")
        return np.random.default_rng(seed).standard_normal(self.size).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
