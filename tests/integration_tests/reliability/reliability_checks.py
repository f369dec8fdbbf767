"""Checks shared by the reliability tests: "a documented result or a ValueError
naming the argument, and nothing the caller passed is modified"."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

# Exceptions whose message the caller can act on. Everything else (IndexError,
# TypeError, OverflowError, FloatingPointError, LinAlgError, a store's own
# errors, ...) counts as a deep exception and fails the test.
ALLOWED = (ValueError,)


def call_checked(fn: Callable[[], Any], names: Iterable[str]) -> tuple[Any, ValueError | None]:
    """Run ``fn``: return (result, None), or (None, err) for a ValueError whose
    message names one of ``names`` (as ``name:`` or quoted/backticked ``name``).

    Any other exception propagates, so pytest shows where it came from; a
    ValueError that names none of the arguments fails with its message.
    """
    try:
        return fn(), None
    except ALLOWED as err:
        msg = str(err)
        if not any(_names(msg, name) for name in names):
            raise AssertionError(
                f"ValueError names none of {sorted(names)}: {type(err).__name__}: {msg}"
            ) from err
        return None, err


def _names(msg: str, name: str) -> bool:
    return bool(re.search(rf"(^|[\s'\"`(\[]){re.escape(name)}([\s'\"`:=)\]]|$)", msg))


def snapshot(value: Any) -> Any:
    """A deep copy to compare against after a call (arrays copied with their dtype)."""
    return copy.deepcopy(value)


def assert_unchanged(before: Any, after: Any, what: str = "argument") -> None:
    """Deep equality that treats NaN as equal to NaN and compares arrays exactly."""
    if isinstance(before, np.ndarray):
        assert isinstance(after, np.ndarray), f"{what}: type changed"
        assert before.dtype == after.dtype and before.shape == after.shape, f"{what}: changed"
        assert np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"), (
            f"{what}: values changed"
        )
        return
    if isinstance(before, dict):
        assert isinstance(after, dict) and list(before) == list(after), f"{what}: keys changed"
        for key in before:
            assert_unchanged(before[key], after[key], f"{what}[{key!r}]")
        return
    if isinstance(before, list | tuple):
        assert type(before) is type(after) and len(before) == len(after), f"{what}: changed"
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_unchanged(b, a, f"{what}[{i}]")
        return
    if isinstance(before, float) and np.isnan(before):
        assert isinstance(after, float) and np.isnan(after), f"{what}: changed"
        return
    assert before == after, f"{what}: changed from {before!r} to {after!r}"
