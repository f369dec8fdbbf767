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
