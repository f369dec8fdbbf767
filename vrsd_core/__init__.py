"""vrsd_core: choose k of n retrieved vectors that are relevant *and* diverse.

Pure numpy. ``select(query, candidates, k, method=...)`` returns a
``Selection``; ``select_batch`` does B queries at once.
"""

from . import contract, metrics, tokens
from .api import check_count, check_options, method_defaults, select, select_batch
from .registry import (
    DEFAULT_METHOD,
    METHOD_INFO,
    METHODS,
    MethodInfo,
    method_info,
    methods_where,
)
from .selection import Selection

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "METHOD_INFO",
    "MethodInfo",
    "Selection",
    "check_count",
    "check_options",
    "contract",
    "method_defaults",
    "method_info",
    "methods_where",
    "metrics",
    "select",
    "select_batch",
    "tokens",
]
