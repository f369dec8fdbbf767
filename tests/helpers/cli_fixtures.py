"""Fixtures of the command-line and evaluation tests: a private embedding cache and
in-process ``vrsd`` calls.

The CLI runs in this process (``vrsd_cli.cli.main``), so the embedding model is loaded
once for the whole session (``vrsd_eval.disk_embeddings.base_embeddings`` keeps it);
only the examples' smoke tests start subprocesses. A conftest that wants them imports
them by the names below (as ``tests/helpers/fixtures.py``'s).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory) -> Iterator[str]:
    """A session-wide ``$VRSD_CACHE_DIR``, so tests never touch ~/.cache/vrsd."""
    path = str(tmp_path_factory.mktemp("vrsd_cache"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VRSD_CACHE_DIR", path)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.delenv("VRSD_INDEX_DIR", raising=False)
        mp.delenv("VRSD_DEBUG", raising=False)
        yield path


@dataclass
class Run:
    """One ``vrsd`` call: exit code, stdout, stderr."""

    code: int
    out: str
    err: str


@pytest.fixture
def vrsd(capsys):
    """``vrsd(*args) -> Run``: the CLI in-process, argparse exits included."""
    from vrsd_cli.cli import main

    def run(*args: str) -> Run:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def embeddings(cache_dir):
    """The cached bundled model, the one the CLI uses."""
    from vrsd_eval.disk_embeddings import cached_embeddings

    assert os.environ["VRSD_CACHE_DIR"] == cache_dir
    return cached_embeddings()


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    """``folder`` with ``files`` (relative name -> text, written as UTF-8, or bytes)."""
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return folder


def stored(index_dir: Path) -> list[tuple[str, int, str]]:
    """(source, chunk, text) of every chunk an index holds, sorted."""
    from vrsd_cli.indexing import documents, open_index

    index = open_index(index_dir)
    try:
        docs = documents(index, index.rows())
    finally:
        index.close()
    return sorted((d.metadata["source"], d.metadata["chunk"], d.page_content) for d in docs)


def as_a_terminal_starts_it() -> None:
    """``preexec_fn`` of a ``vrsd`` process a test sends SIGINT: SIGINT's default action, as
    a terminal starts a command (a suite run in the background inherits SIGINT ignored,
    and Python then raises no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
