"""The inspection's figures (``vrsd_kit.inspection.figures``): what a held-back passage is
called is what the judge the default obeyed says."""

from __future__ import annotations

import numpy as np

from tests.helpers.copies import weighed_by_the_pool
from vrsd_kit.inspection.figures import Passage, compare
from vrsd_kit.lexical import Judge


def _pool() -> tuple[list[Passage], np.ndarray, np.ndarray]:
    texts, query, vectors = weighed_by_the_pool()
    return [Passage(f"p{i}", text) for i, text in enumerate(texts)], query, vectors


def test_a_held_back_passage_is_named_by_the_judge_of_the_whole_pool() -> None:
    passages, query, vectors = _pool()
    texts = [p.text for p in passages]
    assert Judge(texts).copy_of(1, [0]).relation == "restates"  # the pool's verdict
    assert Judge(texts[:3]).copy_of(1, [0, 2]) is None  # a judge of the few involved only
    figures = compare("alpha beta gamma", query, passages, vectors, k=2)
    assert [r.passage.id for r in figures.top_k] == ["p0", "p1"]
    assert figures.default[0].passage.id == "p0" and "p1" not in [
        r.passage.id for r in figures.default]
    [held] = figures.held_back
    assert (held.rank, held.relation) == (2, "restates")
