"""Method options as data: each option's name, kind, range or choices and default,
declared once beside its method (``OPTIONS`` in each ``vrsd_core.methods`` module;
the prior's and the profiles' here, read by
``_prior`` and ``_prepare.with_word_profiles``) and checked by one checker,
``OptionSpec.check``.

``vrsd_core.method_options(method)`` lists a method's specs (the adapters and the
command line build their settings from them); ``check_options`` checks a whole set
without running anything; the methods call the same ``check`` on their arguments.

>>> from vrsd_core import method_options
>>> [(o.name, o.default) for o in method_options("mmr")]
[('lambda_mult', 0.5), ('prior', None), ('prior_weight', 0.0)]
>>> method_options("mmr")[0].check(1.5)
Traceback (most recent call last):
ValueError: lambda_mult: must be in [0, 1], got 1.5
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ._prepare import check_int, check_real, check_unit

OptionKind = Literal["unit", "real", "integer", "choice", "flag", "seed", "per_candidate"]


@dataclass(frozen=True)
class OptionSpec:
    """One method option.

    Attributes:
        name: the keyword.
        kind: ``"unit"`` (a number in [0, 1], or [0, 1) with ``high_open``),
            ``"real"`` (a number in [low, high]; (low, high] with ``low_open``; inf
            allowed with ``allow_inf``), ``"integer"`` (>= low; None allowed with
            ``allow_none``), ``"choice"`` (one of ``choices``), ``"flag"`` (True or
            False), ``"seed"`` (None, an integer >= 0 or a numpy Generator) or
            ``"per_candidate"`` (an array, one row per candidate, or None: its shape
            is checked against the candidates at query time).
        default: the value when the option is not given.
        summary: one line for help texts.
    """

    name: str
    kind: OptionKind
    default: Any
    summary: str = ""
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    allow_none: bool = False
    choices: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "unit":  # the range, as data, for readers of the spec
            object.__setattr__(self, "low", 0.0)
            object.__setattr__(self, "high", 1.0)

    def check(self, value: Any) -> Any:
        """``value`` checked (and, for numbers, as a float or an int), or a ValueError
        naming the option."""
        name = self.name
        if self.kind == "unit":
            return check_unit(value, name, closed_right=not self.high_open)
        if self.kind == "real":
            return check_real(value, name, low=self.low, high=self.high,
                              low_open=self.low_open, allow_inf=self.allow_inf)
        if self.kind == "integer":
            return check_int(value, name, low=int(self.low), allow_none=self.allow_none)
        if self.kind == "choice":
            if not any(value is c or (type(value) is type(c) and value == c)
                       for c in self.choices):
                shown = " or ".join(map(repr, self.choices))
                raise ValueError(f"{name}: expected {shown}, got {value!r}")
            return value
        if self.kind == "flag":
            if not isinstance(value, bool | np.bool_):
                raise ValueError(f"{name}: expected True or False, got {value!r}")
            return bool(value)
        if self.kind == "seed":
            if value is None or isinstance(value, np.random.Generator):
                return value
            check_seed_integer(value, name)
            return int(value)
        return value  # per_candidate: checked against the candidates at query time


def check_seed_integer(value: Any, name: str = "seed") -> None:
    """ValueError unless ``value`` is an integer >= 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(
            f"{name}: expected None, an integer >= 0 or a numpy Generator, got {value!r}"
        )


def seed_option(default: Any) -> OptionSpec:
    """The ``seed`` option of the sampling and clustering methods."""
    return OptionSpec("seed", "seed", default,
                      "None (fresh entropy), an integer >= 0 or a numpy Generator")


PRIOR_OPTIONS = (
    OptionSpec("prior", "per_candidate", None, "one quality score per candidate (RAGSys)"),
    OptionSpec("prior_weight", "unit", 0.0, "w: relevance becomes (1 - w) rel + w prior"),
)
"""The quality prior's options (``_prior``), of every method with ``takes_prior``."""

PROFILES_OPTION = OptionSpec("profiles", "per_candidate", None,
                             "a second description of each candidate (its words' profile), "
                             "read by the similarity between candidates")
"""The option of every method with ``takes_profiles`` (``_prepare.with_word_profiles``)."""
