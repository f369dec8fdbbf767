"""vrsd_core: choose k of n retrieved vectors that are relevant *and* diverse.

Pure numpy. ``select(query, candidates, k, method=...)`` returns a
``Selection``; ``select_batch`` does B queries at once. Selection only: what
the adapters share beyond it (their metadata payload, store records, the
sync/async steps, token counting) is ``vrsd_kit``, one floor up.

Candidates 0 and 1 say almost the same thing; plain top-k returns both, the
default (``DEFAULT_METHOD``) keeps one and spends the other slot on candidate 2:

>>> import numpy as np
>>> from vrsd_core import select
>>> candidates = np.array([[1.0, 0.0], [0.98, 0.2], [0.6, 0.8]])
>>> select([1.0, 0.3], candidates, 2, method="similarity").indices.tolist()
[1, 0]
>>> picked = select([1.0, 0.3], candidates, 2)
>>> picked.method, picked.indices.tolist(), picked.relevance.round(3).tolist()
('complement', [1, 2], [0.996, 0.805])
"""

from . import metrics
from ._prepare import Links, pool_units
from .api import (
    Selection,
    check_count,
    check_options,
    method_defaults,
    method_options,
    select,
    select_batch,
)
from .callers import register_internal_package
from .options import OptionSpec
from .registry import (
    DEFAULT_METHOD,
    METHOD_INFO,
    MethodInfo,
    MethodName,
    method_info,
    methods_where,
)

__all__ = [
    "DEFAULT_METHOD",
    "Links",
    "METHOD_INFO",
    "MethodInfo",
    "MethodName",
    "OptionSpec",
    "Selection",
    "check_count",
    "check_options",
    "method_defaults",
    "method_info",
    "method_options",
    "methods_where",
    "metrics",
    "pool_units",
    "register_internal_package",
    "select",
    "select_batch",
]
