"""The ```python blocks of the README and of every docs/ page run as written,
pasted line by line into an interactive interpreter (offline, quick), and
assert what they show; the README's links to docs/ pages resolve."""

from __future__ import annotations

import code
import os
import re
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)


BLOCKS = _python_blocks(README)
ALL_BLOCKS = [(page, block) for page in PAGES for block in _python_blocks(page)]


class _Console(code.InteractiveConsole):
    """``python``'s interactive loop, recording the errors it would show.

    Both hooks are overridden (not only ``write``): when another library has
    replaced ``sys.excepthook`` (ray does), the base class hands errors to it.
    """

    def __init__(self) -> None:
        super().__init__({"__name__": "__readme__"})
        self.errors: list[str] = []

    def showsyntaxerror(self, filename: str | None = None, **kwargs: object) -> None:
        self.errors.append("".join(traceback.format_exception_only(*sys.exc_info()[:2])))

    def showtraceback(self) -> None:
        self.errors.append(traceback.format_exc())


def paste(block: str) -> list[str]:
    """Feed ``block`` to an interactive console as a user pasting it would; the errors."""
    console = _Console()
    for line in block.splitlines():
        console.push(line)
    console.push("")  # the blank line that ends a last compound statement
    return console.errors


def test_readme_has_the_quickstarts():
    assert len(BLOCKS) >= 3
    joined = "\n".join(BLOCKS)
    for name in ("vrsd_core", "vrsd_langchain", "vrsd_llamaindex"):
        assert f"from {name} import" in joined


def test_a_missing_blank_line_after_a_loop_fails_when_pasted():
    # the mistake this file guards against: fine as a script, a SyntaxError in a REPL
    assert paste("for i in range(2):\n    x = i\nprint(x)")
    assert not paste("for i in range(2):\n    x = i\n\nprint(x)")


def test_the_docs_pages_exist_and_the_readme_links_resolve():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    assert {"docs/methods.md", "docs/stores.md", "docs/evaluation.md", "docs/speed.md",
            "docs/cli.md"} <= set(links)
    for link in links:
        assert (ROOT / link).exists(), link
    for page in PAGES[1:]:
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).exists(), f"{page.name}: {link}"


def test_the_readme_is_a_five_minute_read():
    # the reference material lives in docs/; the README is what, why, install, quick starts
    assert len(README.read_text(encoding="utf-8").splitlines()) < 260


def _block_id(page: Path, block: str) -> str:
    same_page = [b for p, b in ALL_BLOCKS if p == page]
    return f"{page.stem}-block{same_page.index(block)}"


@pytest.mark.parametrize(
    "block", [b for _, b in ALL_BLOCKS], ids=[_block_id(p, b) for p, b in ALL_BLOCKS]
)
def test_readme_block_runs_when_pasted(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    errors = paste(block)
    assert not errors, "".join(errors)
    assert capsys.readouterr().out.strip()  # every block prints what it shows
