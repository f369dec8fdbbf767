"""The adapters' former class names, kept for one release with a warning.

``VRSDRetriever``, ``VRSDCompressor``, ``VRSDPostprocessor`` and ``VRSDRanker`` ran the
default (``complement``), not the paper's VRSD, and two unrelated classes shared the name
``VRSDRetriever``: "VRSD" now names the paper's method (and the package) only. Each
adapter package answers its former names through ``renamed``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def renamed(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module`` that answers each former name in ``names``
    (old -> new) with the new class and a ``DeprecationWarning`` naming it."""

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {module}.{new} (the same class); the former "
                      "name goes in the next release", DeprecationWarning, stacklevel=2)
        return getattr(sys.modules[module], new)

    return __getattr__
