"""Feasibility under the per-source cap and the token budget: one tracker for every method.

Two constraints limit which candidates a selection may still take:

- the per-source cap (``groups`` + ``max_per_group``, see ``_groups``): at most
  m picks share a label;
- the token budget (``token_counts`` + ``max_tokens``): the picks' token counts
  sum to at most ``max_tokens``, so an LLM's context is filled, not k slots.

``Constraints`` keeps, per query, which candidates are still *open* (real, not
picked, group not full, short enough for the tokens left) and updates that in a
few O(n) array operations per pick, vectorised over the batch. Every method
asks it the same two things: what a pick closes (``add``), and whether
anything is left (``open``). A greedy method therefore skips a candidate that
does not fit and takes the next best one that does ("fill while items fit"); it
stops at k picks or when nothing open is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# Token counts above this are refused: sums of a few thousand stay exact in int64.
MAX_TOKEN_COUNT = 2**53


def token_table(
    token_counts: Any, budget: int | None, shape: tuple[int, int], valid: np.ndarray, batched: bool
) -> tuple[np.ndarray | None, int | None]:
    """Checked (B, n) int64 token counts (0 at padding) and the budget, or (None, None).

    ``token_counts`` is one non-negative integer per candidate ((n,), or (B, n)
    when ``batched``; padding positions are ignored); integral floats such as
    3.0 are accepted. ``budget`` is ``max_tokens`` already checked (``_prepare``:
    an int >= 0 or None). Each argument needs the other.
    """
    if token_counts is None:
        if budget is not None:
            raise ValueError("max_tokens: needs token_counts (one token count per candidate)")
        return None, None
    if budget is None:
        raise ValueError("token_counts: needs max_tokens (the budget the counts are spent on)")
    want = shape if batched else shape[1:]
    try:
        raw = np.asarray(token_counts)
    except (ValueError, TypeError) as exc:  # ragged nesting
        raise ValueError(f"token_counts: expected {want} integers ({exc})") from None
    if raw.shape != want:
        raise ValueError(
            f"token_counts: expected shape {want} (one count per candidate), got {raw.shape}"
        )
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"token_counts: expected integers, got dtype {raw.dtype}")
    counts = raw.reshape(shape)
    real = counts[valid]
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(real) | (real != np.floor(real))
        if bad.any():
            raise ValueError(
                f"token_counts: expected whole numbers, got {real[bad][0]!r}"
            )
    if len(real) and (real.min() < 0 or real.max() > MAX_TOKEN_COUNT):
        worst = real.min() if real.min() < 0 else real.max()
        raise ValueError(
            f"token_counts: expected integers in [0, {MAX_TOKEN_COUNT}], got {worst!r}"
        )
    return np.where(valid, counts, 0).astype(np.int64), budget


@dataclass
class Constraints:
    """Per query, the candidates the cap and the budget still allow, while a method runs.

    ``open`` is (B, n): real, not picked, group not full, and no longer than the
    tokens left. ``add(picks, active)`` records one pick per query (rows with
    ``active`` False pick nothing) and returns the (B, n) mask of candidates it
    closed besides the picks themselves, or None when it closed none, so the
    caller masks them out exactly once. ``taken`` counts the recorded picks.
    """

    open: np.ndarray  # (B, n) bool
    taken: np.ndarray  # (B,) int64
    codes: np.ndarray | None = None  # (B, n) group codes, with a cap
    cap: int | None = None
    counts: np.ndarray | None = None  # (B, G) picks per group
    tokens: np.ndarray | None = None  # (B, n) token counts, with a budget
    left: np.ndarray | None = None  # (B,) tokens left

    @classmethod
    def start(
        cls,
        valid: np.ndarray,
        codes: np.ndarray | None = None,
        cap: int | None = None,
        tokens: np.ndarray | None = None,
        budget: int | None = None,
    ) -> Constraints:
        B = valid.shape[0]
        tracker = cls(valid.copy(), np.zeros(B, dtype=np.int64))
        if codes is not None and cap is not None:
            groups = int(codes.max(initial=-1)) + 1
            tracker.codes, tracker.cap = codes, cap
            tracker.counts = np.zeros((B, groups), dtype=np.int64)
        if tokens is not None and budget is not None:
            tracker.tokens = tokens
            tracker.left = np.full(B, budget, dtype=np.int64)
            tracker.open &= tokens <= budget  # a candidate longer than the budget never fits
        return tracker

    @property
    def live(self) -> np.ndarray:
        """(B,) whether a query can still pick anything."""
        return np.asarray(self.open.any(axis=1))

    def add(self, picks: np.ndarray, active: np.ndarray) -> np.ndarray | None:
        B = self.open.shape[0]
        rows = np.arange(B)
        self.taken += active
        self.open[rows[active], picks[active]] = False
        closed = None
        if self.codes is not None and self.counts is not None:
            g = self.codes[rows, picks]
            self.counts[rows, g] += active
            filled = active & (self.counts[rows, g] == self.cap)
            if filled.any():
                closed = filled[:, None] & (self.codes == g[:, None])
        if self.tokens is not None and self.left is not None:
            self.left -= np.where(active, self.tokens[rows, picks], 0)
            over = self.tokens > self.left[:, None]
            closed = over if closed is None else closed | over
        if closed is None:
            return None
        closed &= self.open
        if not closed.any():
            return None
        self.open &= ~closed
        return closed

    def add_one(self, b: int, pick: int) -> np.ndarray | None:
        """``add`` for query b alone: the (n,) mask of the candidates it closed, or None."""
        self.taken[b] += 1
        row = self.open[b]
        row[pick] = False
        closed = None
        if self.codes is not None and self.counts is not None:
            g = int(self.codes[b, pick])
            self.counts[b, g] += 1
            if self.counts[b, g] == self.cap:
                closed = self.codes[b] == g
        if self.tokens is not None and self.left is not None:
            self.left[b] -= self.tokens[b, pick]
            over = self.tokens[b] > self.left[b]
            closed = over if closed is None else closed | over
        if closed is None:
            return None
        closed &= row
        if not closed.any():
            return None
        row &= ~closed
        return closed

    def group_room(self, b: int) -> tuple[np.ndarray, np.ndarray, int] | None:
        """Query b's group codes, a copy of its per-group pick counts and the cap
        (None without a cap): what a search over exchanges needs to keep the cap."""
        if self.codes is None or self.counts is None or self.cap is None:
            return None
        return self.codes[b], self.counts[b].copy(), self.cap
