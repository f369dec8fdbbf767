"""``vrsd_cli.signals``: SIGTERM ends a run as Ctrl-C does, only while a run lasts, and
only from the main thread (the real-process test is in
tests/integration_tests/cli/test_cli_reliability.py)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from vrsd_cli.signals import Stopped, exit_code, stopped_by_signals


def test_sigterm_raises_stopped_and_the_handler_is_put_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped) as caught, stopped_by_signals():
        os.kill(os.getpid(), signal.SIGTERM)
    assert isinstance(caught.value, KeyboardInterrupt)
    assert exit_code(caught.value) == 128 + signal.SIGTERM
    assert exit_code(KeyboardInterrupt()) == 130
    assert signal.getsignal(signal.SIGTERM) is before


def test_outside_the_main_thread_nothing_is_installed():
    seen = []

    def run() -> None:
        with stopped_by_signals():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [before]
