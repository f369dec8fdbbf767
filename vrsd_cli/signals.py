"""SIGTERM and SIGHUP end a ``vrsd`` run the way Ctrl-C does.

Python turns SIGINT into ``KeyboardInterrupt``, so the ``finally`` blocks run: the
index's lock is released and its writer's record marked. A terminated process
(``kill``, a closing terminal, a service manager) would otherwise die on the spot.
``stopped_by_signals`` raises ``Stopped`` (a ``KeyboardInterrupt``) for them, so every
signal that ends a run ends it by the same path; the exit code is 128 + the signal's
number (130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """The run was ended by the signal ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(exc: KeyboardInterrupt) -> int:
    """128 + the number of the signal that ended the run (Ctrl-C: SIGINT, 130)."""
    return 128 + (exc.signum if isinstance(exc, Stopped) else signal.SIGINT)


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``Stopped`` while the block runs (from the main thread
    only, where Python delivers signals); the previous handlers are put back after. A
    second signal while the run is ending is ignored, so the clean-up finishes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        for each in SIGNALS:
            signal.signal(each, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {each: signal.signal(each, stop) for each in SIGNALS}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)
