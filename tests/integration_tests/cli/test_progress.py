"""``vrsd eval`` draws progress bars only on a terminal: a log file, a pipe or CI gets
none (each refresh of a bar would be a line of its own there)."""

from __future__ import annotations

import argparse
import io

import pytest

from vrsd_cli import cli


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("tty", "no_progress", "shown"), [
    (True, False, True), (True, True, False), (False, False, False), (False, True, False)])
def test_bars_only_on_a_terminal_and_without_no_progress(monkeypatch, tty, no_progress, shown):
    monkeypatch.setattr(cli.sys, "stderr", Terminal() if tty else io.StringIO())
    assert cli.show_progress(argparse.Namespace(no_progress=no_progress)) is shown


def test_eval_into_a_log_has_no_progress_bar(vrsd, tmp_path, data_dir):
    """No --no-progress: stderr is captured (not a terminal), so no bar is drawn."""
    run = vrsd("eval", "--data-dir", data_dir, "--datasets", "arc_da", "--limit", 5,
               "--corpus-limit", 150, "--k", 6, "--fetch-k", 20, "--methods", "vrsd",
               "--out", tmp_path)
    assert run.code == 0, run.err
    assert "it/s" not in run.err and "%|" not in run.err and "\r" not in run.err, run.err
    assert "arc_da: 5 queries" in run.err  # the summary line is still there
