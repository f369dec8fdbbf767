"""The ```python blocks of the README and of every docs/ page run as written,
pasted line by line into an interactive interpreter (offline, quick), and
assert what they show; the README's links to docs/ pages resolve."""

from __future__ import annotations

import code
import os
import re
import shlex
import sys
import traceback
from pathlib import Path

import pytest

from tests.helpers.extras import distributions, extras

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


# --- the install lines: what the README tells a user to install runs what it shows -------

# what a quick start's code needs installed, by what it mentions
NEEDS = {
    "langchain_core": "langchain-core",
    "llama_index.core": "llama-index-core",
    "default_embeddings()": "langchain-huggingface",
    "default_embed_model()": "llama-index-embeddings-huggingface",
}


def _install_line_above(block: str) -> str:
    text = README.read_text(encoding="utf-8")
    before = text[: text.index(block)]
    section = before[before.rindex("\n#"):]  # from the block's heading down to the block
    lines = re.findall(r'^pip install (?:-e )?"?(?:vrsd|\.)\[([^\]]+)\]"?', section, re.M)
    assert lines, f"no pip install line above the block in {section[:80]!r}"
    return lines[0]


@pytest.mark.parametrize("module", ["vrsd_langchain", "vrsd_llamaindex"])
def test_each_quick_start_has_the_install_line_that_runs_it(module):
    block = next(b for b in BLOCKS if f"from {module} import" in b)  # the quick start
    extras = {e.strip() for e in _install_line_above(block).split(",")}
    installed = distributions(extras)
    for mention, distribution in NEEDS.items():
        if mention in block:
            assert distribution in installed, (extras, distribution)
    assert "torch" not in installed  # no extra pulls torch: the README says how to get it


def test_no_install_line_promises_a_package_that_is_not_published():
    """vrsd is not on PyPI yet: the README installs it from a checkout (``.``) or a git
    URL, and says so where it says how to install."""
    text = README.read_text(encoding="utf-8")
    install = text[text.index("## Install"):text.index("| extra |")]
    assert 'pip install -e ".[langchain]"' in install
    assert 'pip install "vrsd[langchain] @ git+https://' in install
    commands = [m[1] for m in re.finditer(r"pip install ([^\n`#]+)(`? fails)?", text)
                if not m[2]]  # "`pip install vrsd` fails" says what does not work
    assert len(commands) >= 5
    for command in commands:
        for arg in shlex.split(command):
            if not arg.startswith("-") and "vrsd" in arg.split("@")[0]:
                assert "@ git+" in arg, f"pip install {command}: vrsd is not on PyPI"
            elif not arg.startswith("-"):
                assert arg == "torch" or arg.startswith((".", "https://")), command


def test_a_checkout_is_installed_editable_everywhere_the_docs_say_how():
    """``pip install ".[x]"`` after ``make demo`` replaced the editable install with a
    copy: every install line of a checkout, in the README, the docs and the examples,
    is ``pip install -e``."""
    pages = [*PAGES, *sorted((ROOT / "examples").glob("*.py"))]
    found = 0
    for page in pages:
        for line in re.findall(r"pip install ([^\n`#]+)", page.read_text(encoding="utf-8")):
            args = shlex.split(line)
            for i, arg in enumerate(args):
                if arg == "." or arg.startswith(".["):
                    found += 1
                    assert i > 0 and args[i - 1] == "-e", f"{page.name}: pip install {line}"
    assert found >= 8


def test_the_readme_says_what_every_extra_holds_and_how_to_get_cpu_torch():
    text = README.read_text(encoding="utf-8")
    stores = re.compile(r"(langchain|llamaindex)-(chroma|qdrant|postgres|milvus|lancedb|faiss)")
    for extra in extras():
        store = stores.fullmatch(extra)
        assert f"`{extra}`" in text or (store and f"`{store[2]}`" in text), extra
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in text
    assert not any("torch" in distributions({extra}) for extra in extras())


def test_the_methods_page_lists_every_registered_method_in_table_order():
    from vrsd_core import METHOD_INFO

    page = (ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\w+)` \|", page, re.M)
    assert listed == list(METHOD_INFO)


# --- the "Try it" block: every command runs after `make demo` ---------------------------


def _try_it_commands() -> list[list[str]]:
    """The commands of the README's "Try it" block, as argument lists."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"^## Try it\n+```bash\n(.*?)^```", text, re.M | re.S)
    assert block, "no bash block under '## Try it'"
    return [shlex.split(line.split("  #", 1)[0]) for line in block[1].splitlines()
            if line.strip()]


def _make_demo_extra() -> str:
    """The extra ``make demo`` installs, from the Makefile, and that it runs the demo."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^demo: \$\(VENV\)/\.installed-(\S+)\n\t(.+)$", makefile, re.M)
    assert target and target[2].strip() == "$(VENV)/bin/vrsd demo", "make demo's recipe"
    return target[1]


def test_every_try_it_command_runs_with_what_make_demo_installs(tmp_path, monkeypatch,
                                                                 capsys):
    """Each ``vrsd`` command of the block runs (``~/notes``: a folder of notes, offline),
    its dependency check seeing only what the extra ``make demo`` installs holds: a
    command that needs more exits 2, naming it (``vrsd inspect`` did: matplotlib)."""
    from vrsd_cli import cli

    commands = _try_it_commands()
    assert [c[:2] for c in commands[:2]] == [["make", "demo"], ["make", "test"]]
    assert [c[1] for c in commands[2:]] == ["index", "search", "inspect"]
    extra = _make_demo_extra()
    holds = distributions({extra})
    known = {module: dist for needs in (*cli.NEEDS.values(), cli._BUNDLED_MODEL,
                                        {"matplotlib": "matplotlib", "faiss": "faiss-cpu"})
             for module, dist in needs.items()}
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name, *a: None if (
        name in known and known[name] not in holds) else real(name, *a))
    assert cli.missing_dependencies("demo") == []  # make demo's own command
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("VRSD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VRSD_INDEX_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in {"plan.md": "We decided to move the launch to May.",
                       "copy.md": "We decided to move the launch to May.",
                       "page.html": "<p>The budget was approved on Friday.</p>"}.items():
        (notes / name).write_text(text, encoding="utf-8")
    for command in commands[2:]:
        assert command[0] == ".venv/bin/vrsd", command
        args = [os.path.expanduser(arg) for arg in command[1:]]
        code = cli.main(args)
        err = capsys.readouterr().err
        assert code == 0, (command, err)
    assert (tmp_path / "vrsd_inspect.html").is_file()
