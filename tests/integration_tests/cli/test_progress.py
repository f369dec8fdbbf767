"""``vrsd eval`` draws progress bars only on a terminal: a log file, a pipe or CI gets
none (each refresh of a bar would be a line of its own there)."""

from __future__ import annotations

import argparse
import io

import pytest

from tests.helpers.cli_fixtures import write
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
    run = vrsd("eval", "paper", "--data-dir", data_dir, "--datasets", "arc_da", "--limit", 5,
               "--corpus-limit", 150, "--k", 6, "--fetch-k", 20, "--methods", "vrsd",
               "--out", tmp_path)
    assert run.code == 0, run.err
    assert "it/s" not in run.err and "%|" not in run.err and "\r" not in run.err, run.err
    assert "arc_da: 5 queries" in run.err  # the summary line is still there


def test_index_shows_chunks_embedded_per_second_and_files_done_on_a_terminal_only(
        vrsd, tmp_path, monkeypatch):
    """The bar counts the chunks to embed, not those the index holds (they cost nothing:
    counted, they made the rate a fiction), and the files they come from."""
    docs = write(tmp_path / "docs", {f"note{i}.txt": f"Note {i}: " + "words " * 60
                                     for i in range(3)})
    logged = vrsd("index", docs, "--index-dir", tmp_path / "index", "--chunk-size", "100",
                  "--chunk-overlap", "0")
    assert logged.code == 0, logged.err
    assert "chunk/s" not in logged.err and "\r" not in logged.err
    terminal = Terminal()
    monkeypatch.setattr(cli.sys, "stderr", terminal)
    (docs / "note3.txt").write_text("One more note, on a terminal.")
    (docs / "note4.txt").write_text("And another one, in two chunks: " + "more words " * 12)
    shown = vrsd("index", docs, "--index-dir", tmp_path / "index", "--chunk-size", "100",
                 "--chunk-overlap", "0")
    assert shown.code == 0
    bar = terminal.getvalue()
    added = int(shown.out.split(" added")[0].split("(")[-1])
    assert 3 <= added < int(shown.out.split(" chunks")[0].split()[-1])
    assert "embedding" in bar and "chunk/s" in bar and f"{added}/{added}" in bar, bar
    assert "2/2 files" in bar, bar
