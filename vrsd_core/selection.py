"""The result type shared by every selection method."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray


class _Computed:
    """A float field set to a value or to a zero-argument function that computes it on
    first read (then kept): a result can carry a figure most callers never read
    without paying for it on every call."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: object, objtype: type | None = None) -> float:
        if obj is None:
            raise AttributeError(self.key[1:])  # a required field: no default
        value = obj.__dict__[self.key]
        if callable(value):
            value = obj.__dict__[self.key] = float(value())
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: float | Callable[[], float]) -> None:
        obj.__dict__[self.key] = value


@dataclass(frozen=True)
class Selection:
    """What a method picked, in the order it picked it.

    Attributes:
        indices: candidate positions in selection order (the ranking users see).
        gains: per pick, the method's objective gain when that item was added
            (for ``vrsd``: the sum-vector cosine after the step).
        relevance: per pick, the item's relevance (cosine to the query unless
            ``relevance=`` was given), aligned with ``indices``.
        objective: sum-vector similarity cos(sum of selected, query) of the
            final set, whatever the method; 0.0 for an empty selection. Computed
            when first read (most callers never read it), from a copy of the
            picked vectors taken at selection: later changes to the caller's
            arrays do not reach it.
        method: the method name.
        params: the options the method ran with, defaults filled in.
        info: method-specific facts about the run (e.g. ``filled_by_relevance``
            for ``dpp``, ``swaps`` for ``vrsd`` with ``refine="swap"``). With a
            per-group cap (``groups`` + ``max_per_group``): ``max_per_group``,
            ``feasible`` (the most picks the cap allows) and, when the cap kept
            the selection below min(k, n), ``stopped == "max_per_group"``. With a
            token budget (``token_counts`` + ``max_tokens``): ``max_tokens``,
            ``tokens_used`` and, when the budget cut the selection short,
            ``stopped == "max_tokens"``.
    """

    indices: NDArray[np.int64]
    gains: NDArray[np.float64]
    relevance: NDArray[np.float64]
    if TYPE_CHECKING:  # what callers see: a float (the core may pass a function)
        objective: float
    else:  # a required float field, computed on first read when given as a function
        objective: _Computed = _Computed()
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (lists and floats), e.g. for JSON."""
        return {
            "indices": self.indices.tolist(),
            "gains": self.gains.tolist(),
            "relevance": self.relevance.tolist(),
            "objective": self.objective,
            "method": self.method,
            "params": dict(self.params),
            "info": dict(self.info),
        }
