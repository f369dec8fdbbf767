"""The default's rule on copies written the first way, a reference for the greedy loop's
judge (``complement``'s ``closes``): while a pick is a copy of one before it
(``first_copy``), that candidate is closed from the start (``with_closed``: a token count
above the budget) and the selection made again (``closing_copies``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, Selection, select
from vrsd_kit.lexical import Judge


def first_copy(picks: Sequence[int], judge: Judge) -> int | None:
    """The position of the first pick that is a copy of a pick before it, or None."""
    for position, candidate in enumerate(picks):
        if judge.copy_of(candidate, picks[:position]) is not None:
            return position
    return None


def with_closed(keywords: Mapping[str, Any], closed: Sequence[int], count: int
                ) -> dict[str, Any]:
    """``select``'s keywords with the ``closed`` candidates never picked: each is given a
    token count above the budget (none given: a budget of 0 that every other candidate, at
    0 tokens, fits)."""
    out = dict(keywords)
    budget = out.get("max_tokens")
    tokens = (np.zeros(count, dtype=np.int64) if budget is None
              else np.array(out["token_counts"], dtype=np.int64))
    out["max_tokens"] = budget = 0 if budget is None else budget
    tokens[list(closed)] = budget + 1
    out["token_counts"] = tokens
    return out


def closing_copies(query: Any, vectors: Any, k: int, judge: Judge, method: str = DEFAULT_METHOD,
                   **keywords: Any) -> tuple[Selection, list[int]]:
    """(the selection with every copy closed, the closed candidates in the order found):
    selected again after each copy is closed."""
    closed: list[int] = []
    run = select(query, vectors, k, method=method, **keywords)
    while (position := first_copy(run.indices.tolist(), judge)) is not None:
        closed.append(int(run.indices[position]))
        run = select(query, vectors, k, method=method,
                     **with_closed(keywords, closed, len(vectors)))
    return run, closed


def two_run_reference(query: Any, vectors: Any, k: int, judge: Judge, *, fill: bool = False,
                      **keywords: Any) -> tuple[list[int], list[int], str | None]:
    """(the picks, what plain top-k returns that they do not keep, why fewer than k came
    back or None) as the rerank body said them with two runs: the default with the judge,
    and under a budget or a cap the same selection again without it, whose ``top_k`` is
    plain top-k and whose ``stopped`` says whether the budget or the cap stopped it."""
    judged = select(query, vectors, k, method=DEFAULT_METHOD, closes=judge.copies(), **keywords)
    picks = judged.indices.tolist()
    closed = list(judged.info["closed"])
    if not closed:
        return picks, list(judged.info["held_back"]), judged.info.get("stopped")
    constrained = "max_tokens" in keywords or "max_per_group" in keywords
    first = select(query, vectors, k, method=DEFAULT_METHOD, **keywords).info if constrained \
        else judged.info
    stopped = None
    if "stopped" in first:
        short = len(picks) < min(k, judged.info.get("feasible", len(judge)))
        capped = judged.info.get("stopped") == "max_per_group"
        stopped = ("max_tokens" if short and "max_tokens" in judged.info
                   else None if short else "max_per_group" if capped else None)
    if len(picks) < k:
        if fill:
            picks += closed[:k - len(picks)]
            stopped = None
        elif stopped is None:
            stopped = "restatements"
    return picks, [c for c in first["top_k"] if c not in picks], stopped


FILLERS = 20


def weighed_by_the_pool() -> tuple[list[str], np.ndarray, np.ndarray]:
    """(texts, query, vectors): a pick P (0), a passage H (1) whose word pairs are P's but
    for three that twenty other passages repeat, and those twenty. Among the whole pool
    those three weigh little, so H restates P; among P, H and one other pick alone they
    weigh as much as the rest, and H is no copy. P is nearest the query, then H, the
    others farther, each its own way."""
    texts = ["alpha beta gamma delta omega psi",
             "alpha beta gamma delta epsilon zeta eta",
             *(f"delta epsilon zeta eta filler{i} word{i} other{i}" for i in range(FILLERS))]
    query = np.zeros(24)
    query[0] = 1.0
    vectors = np.zeros((len(texts), 24))
    vectors[:, 0] = 1.0
    vectors[0, 1], vectors[1, 2] = 0.1, 0.2
    vectors[2:, 3:] = np.eye(FILLERS, 21) * 3.0
    return texts, query, vectors
