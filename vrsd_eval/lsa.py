"""Latent semantic analysis as LangChain ``Embeddings``: the evidence protocol's third
embedding family (``--model lsa``), built offline from the corpus being searched.

scikit-learn's ``TfidfVectorizer`` (its defaults) and ``TruncatedSVD``
(``LSA_DIMENSIONS`` components, ``random_state=LSA_SEED``: deterministic) are fit on
the corpus texts; questions go through the same fitted pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

LSA_DIMENSIONS = 256
LSA_SEED = 0


def one_blas_thread() -> Any:
    """BLAS on one thread: the SVD's products are small, and a threaded BLAS on a busy
    machine waits for cores (measured: 45x slower at 80 texts, 4x at 14,000), and one
    thread keeps the sums in one order wherever the fit runs."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


class LSAEmbeddings(Embeddings):
    """TF-IDF + truncated SVD fit on ``texts`` (``LSA_DIMENSIONS``, fewer when the
    corpus has fewer terms or texts), as LangChain ``Embeddings``.

    Raises:
        ValueError: naming ``lsa``, when a text or a question shares no term with the
            fitted vocabulary (its vector would be zero, which no cosine accepts).
    """

    def __init__(self, texts: Sequence[str]) -> None:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.tfidf = TfidfVectorizer()
        matrix = self.tfidf.fit_transform(list(texts))
        dims = min(LSA_DIMENSIONS, matrix.shape[1] - 1, matrix.shape[0] - 1)
        if dims < 1:
            raise ValueError("lsa: the corpus needs at least two texts and two terms")
        self.svd = TruncatedSVD(dims, random_state=LSA_SEED)
        with one_blas_thread():
            self.svd.fit(matrix)

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        with one_blas_thread():
            out = self.svd.transform(self.tfidf.transform(texts))
        empty = np.flatnonzero(np.linalg.norm(out, axis=1) == 0)
        if len(empty):
            raise ValueError(f"lsa: {texts[empty[0]]!r} shares no term with the corpus")
        return out.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(list(texts))
