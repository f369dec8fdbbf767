"""vrsd_core: choose k of n retrieved vectors that are relevant *and* diverse.

Pure numpy. ``select(query, candidates, k, method=...)`` returns a
``Selection``; ``select_batch`` does B queries at once.
"""

from . import metrics
from .api import METHODS, check_count, check_options, method_defaults, select, select_batch
from .selection import Selection

__all__ = [
    "METHODS",
    "Selection",
    "check_count",
    "check_options",
    "method_defaults",
    "metrics",
    "select",
    "select_batch",
]
