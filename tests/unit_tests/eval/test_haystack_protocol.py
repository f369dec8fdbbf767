"""``vrsd eval haystack``'s own rows: its ``default`` row picks what ``DiverseRanker``
returns on the same candidates, copies held back alike (the row builds the rerank body's
keywords, the judge of copies included)."""

from __future__ import annotations

import numpy as np
import pytest
from haystack import Document

from vrsd_core import DEFAULT_METHOD
from vrsd_eval.haystack_protocol import _core
from vrsd_haystack import DiverseRanker

TEXTS = [
    "Tim Burton directed Ed Wood, a film about a director of cheap films.",
    "Ed Wood was an American filmmaker known for low-budget science fiction.",
    "Caffeine has a half-life of about five hours in healthy adults.",
    "Indeed Tim Burton directed Ed Wood, a film about a director of cheap films.",
    "Ed Wood was an American filmmaker known for low-budget science fiction. He died in 1978.",
    "Blue light from screens delays the release of melatonin in the evening.",
]
QUESTION = "Who directed the film about Ed Wood?"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_default_row_equals_the_ranker_on_copies(seed, k):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=12)
    C = q + rng.normal(scale=1.0, size=(len(TEXTS), 12))
    C[3] = C[0] + rng.normal(scale=0.3, size=12)  # a text copy with a differing vector
    docs = [Document(id=str(i), content=t, embedding=v.tolist())
            for i, (t, v) in enumerate(zip(TEXTS, C, strict=True))]
    ranked = DiverseRanker(top_k=k).run(documents=docs, query=QUESTION,
                                        query_embedding=q.tolist())["documents"]
    picked = _core(DEFAULT_METHOD, words=True)(q, C, k, TEXTS, QUESTION)
    assert picked == [int(d.id) for d in ranked]
    assert not {0, 3} <= set(picked)  # a copy of a pick is never kept beside it
