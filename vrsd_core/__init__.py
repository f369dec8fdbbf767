"""vrsd_core: choose k of n retrieved vectors that are relevant *and* diverse.

Pure numpy. ``select(query, candidates, k, method=...)`` returns a
``Selection``; ``select_batch`` does B queries at once.
"""

from . import contract, metrics, tokens
from .api import check_count, check_options, method_defaults, select, select_batch
from .registry import (
    DEFAULT_METHOD,
    METHOD_ALIASES,
    METHOD_INFO,
    MethodInfo,
    method_info,
    methods_where,
    resolve_method,
)
from .selection import Selection

__all__ = [
    "DEFAULT_METHOD",
    "METHOD_ALIASES",
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
    "resolve_method",
    "select",
    "select_batch",
    "tokens",
]
