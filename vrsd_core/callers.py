"""Which line a warning blames: the first frame outside vrsd and the frameworks it runs in.

A user reaches the core through layers whose depth differs per class and release
(an adapter's validators, a framework's own ``__init__``/``invoke``), so a fixed
``stacklevel`` would blame one of them. Each package that calls the core on a
user's behalf registers itself, and the frameworks it is called through, with
``register_internal_package`` when it is imported; the core names only itself.
"""

from __future__ import annotations

import sys
import threading

_internal: tuple[str, ...] = ("vrsd_core",)
_lock = threading.Lock()


def register_internal_package(*names: str) -> None:
    """Skip the frames of modules whose name starts with one of ``names`` (``"pkg"``
    covers ``pkg.sub`` and ``pkg_extras``) when a warning is attributed to the
    user's line. Registering a name twice changes nothing."""
    global _internal
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"names: expected module names, got {name!r}")
    with _lock:
        _internal = (*_internal, *(n for n in dict.fromkeys(names) if n not in _internal))


def internal_packages() -> tuple[str, ...]:
    """The registered module-name prefixes, ``"vrsd_core"`` first."""
    return _internal


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called in the caller of this function
    that names the first frame outside the registered packages."""
    frame = sys._getframe(2)  # the caller's caller: stacklevel 2 of the caller's warn
    level = 2
    internal = _internal
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(internal):
        frame, level = frame.f_back, level + 1
    return level
