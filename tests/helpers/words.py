"""What an adapter's default does with the words, for tests that hold adapters to the core.

The default reads the candidates' words as well as their vectors (``vrsd_kit.lexical``):
``default_selection`` is ``select`` as the adapters call it, on the same texts (LangChain's
``page_content``, LlamaIndex's LLM text, Haystack's ``content``) and the same query text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, Selection, method_options, select
from vrsd_kit.lexical import pool_relevance


def default_selection(query: str, texts: Sequence[str], query_vector: Any, vectors: Any, k: int,
                      **select_kwargs: Any) -> Selection:
    """``select(query_vector, vectors, k)`` with the default method and, as the adapters
    give it, the cosine and the texts' BM25 against ``query`` fused in pool units
    (``vrsd_core.pool_units``) as its relevance, the texts' word profiles as its
    ``profiles`` and the links between them as its ``links``."""
    words = pool_relevance(query, list(texts), np.asarray(query_vector), np.asarray(vectors))
    return select(query_vector, vectors, k, method=DEFAULT_METHOD,
                  **words.select_keywords(method_options(DEFAULT_METHOD)), **select_kwargs)
