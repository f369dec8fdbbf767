"""The per-source cap: ``groups`` (one label per candidate) and ``max_per_group``.

``select(..., groups=labels, max_per_group=m)`` lets no more than m picks share
a label (e.g. the document a chunk came from), for every method. Labels are
mapped to integer codes once, here; the methods then keep a per-group count
and mask out a group's candidates when it fills (``_constraints.Constraints``,
which also keeps the token budget), so the cap costs a few O(n) array
operations per pick, no loop over candidates.

With the cap at most ``feasible`` = sum over groups of min(m, group size)
candidates can be picked; the greedy methods return min(k, feasible) and
``vrsd_core.api`` says in ``Selection.info`` when the cap stopped a selection
short.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def group_codes(
    groups: Any, shape: tuple[int, int], valid: np.ndarray, batched: bool
) -> np.ndarray:
    """(B, n) int64 codes for the labels ``groups`` ((n,) or (B, n) as ``batched``).

    Equal labels (Python equality, as dict keys) get equal codes. Labels must be
    hashable and not None (nor NaN); at padding positions (``valid`` False) any
    label, None included, is accepted and ignored.
    """
    want = shape if batched else shape[1:]
    if isinstance(groups, np.ndarray) and groups.dtype != object:
        if groups.shape != want:
            raise ValueError(
                f"groups: expected shape {want} (one label per candidate), got {groups.shape}"
            )
        if groups.dtype.kind not in "biuUSfMm":
            raise ValueError(f"groups: labels of dtype {groups.dtype} are not supported")
        if groups.dtype.kind == "f" and np.isnan(groups[valid.reshape(want)]).any():
            raise ValueError("groups: a label is NaN (every candidate needs a label)")
        _, inverse = np.unique(groups.reshape(-1), return_inverse=True)
        return inverse.reshape(shape).astype(np.int64)
    labels = _flat_labels(groups, want)
    mapping: dict[Any, int] = {}
    try:
        codes = np.fromiter(
            (mapping.setdefault(label, len(mapping)) for label in labels),
            dtype=np.int64,
            count=len(labels),
        )
    except TypeError as exc:  # an unhashable label
        raise ValueError(f"groups: every label must be hashable ({exc})") from None
    codes = codes.reshape(shape)
    bad = [code for label, code in mapping.items() if label is None or _is_nan(label)]
    for code in bad:
        where = np.argwhere(valid & (codes == code))
        if len(where):
            b, i = where[0]
            at = f"candidate {i}" if not batched else f"set {b}, candidate {i}"
            raise ValueError(f"groups: {at} has no label ({labels[b * shape[1] + i]!r})")
    return codes


def _flat_labels(groups: Any, want: tuple[int, ...]) -> list[Any]:
    """The labels as one flat list, checking the nesting against ``want``."""
    if isinstance(groups, str | bytes) or not _is_sequence(groups):
        raise ValueError(f"groups: expected one label per candidate, got {type(groups).__name__}")
    rows = list(groups)
    if len(want) == 1:
        if len(rows) != want[0]:
            raise ValueError(
                f"groups: expected {want[0]} labels (one per candidate), got {len(rows)}"
            )
        return rows
    if len(rows) != want[0]:
        raise ValueError(f"groups: expected {want[0]} label rows (one per query), got {len(rows)}")
    flat: list[Any] = []
    for b, row in enumerate(rows):
        if isinstance(row, str | bytes) or not _is_sequence(row) or len(row) != want[1]:
            raise ValueError(f"groups: row {b} must hold {want[1]} labels (one per candidate)")
        flat.extend(row)
    return flat


def _is_sequence(value: Any) -> bool:
    return hasattr(value, "__len__") and hasattr(value, "__iter__")


def _is_nan(label: Any) -> bool:
    return isinstance(label, float | np.floating) and math.isnan(label)


def feasible_counts(codes: np.ndarray, valid: np.ndarray, cap: int) -> np.ndarray:
    """(B,) how many candidates the cap lets each query pick at most:
    sum over groups of min(cap, number of real candidates in the group)."""
    B = codes.shape[0]
    G = int(codes.max(initial=-1)) + 1
    flat = (np.arange(B)[:, None] * G + codes)[valid]
    sizes = np.bincount(flat, minlength=B * G).reshape(B, G)
    return np.minimum(sizes, cap).sum(axis=1)
