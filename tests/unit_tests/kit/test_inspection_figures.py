"""The inspection's figures (``vrsd_kit.inspection.figures``): what a held-back passage is
called is what the judge the default obeyed says."""

from __future__ import annotations

import numpy as np

from vrsd_kit.inspection.figures import Passage, compare
from vrsd_kit.lexical import Judge

FILLERS = 20


def _pool() -> tuple[list[Passage], np.ndarray, np.ndarray]:
    """A pick P, a passage H whose word pairs are P's but for three that twenty other
    passages repeat, and those twenty: among the whole pool those three weigh little, so H
    restates P; among P, H and one other pick alone they weigh as much as the rest."""
    texts = ["alpha beta gamma delta omega psi",
             "alpha beta gamma delta epsilon zeta eta",
             *(f"delta epsilon zeta eta filler{i} word{i} other{i}" for i in range(FILLERS))]
    query = np.zeros(24)
    query[0] = 1.0
    vectors = np.zeros((len(texts), 24))
    vectors[:, 0] = 1.0
    vectors[0, 1], vectors[1, 2] = 0.1, 0.2  # P nearest the query, then H
    vectors[2:, 3:] = np.eye(FILLERS, 21) * 3.0  # the others farther, each its own way
    passages = [Passage(f"p{i}", text) for i, text in enumerate(texts)]
    return passages, query, vectors


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
