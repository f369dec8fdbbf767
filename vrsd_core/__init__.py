"""vrsd_core: choose k of n retrieved vectors that are relevant *and* diverse.

Pure numpy. ``select(query, candidates, k, method=...)`` returns a
``Selection``; ``select_batch`` does B queries at once. Selection only: what
the adapters share beyond it (their metadata payload, store records, the
sync/async steps, token counting) is ``vrsd_kit``, one floor up.
"""

from . import metrics
from .api import check_count, check_options, method_defaults, select, select_batch
from .callers import register_internal_package
from .registry import (
    DEFAULT_METHOD,
    METHOD_ALIASES,
    METHOD_INFO,
    MethodInfo,
    MethodName,
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
    "MethodName",
    "Selection",
    "check_count",
    "check_options",
    "method_defaults",
    "method_info",
    "methods_where",
    "metrics",
    "register_internal_package",
    "resolve_method",
    "select",
    "select_batch",
]
