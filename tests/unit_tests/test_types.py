"""The types tools read: mypy passes on every package (``make lint``), with the
configuration of ``pyproject.toml`` ([tool.mypy]), and that configuration names every
``vrsd_*`` package, the benchmarks and the scripts. Invariants are errors, not
``assert`` (which ``python -O`` removes): bad input a ValueError naming the argument, a
broken invariant a RuntimeError."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(path.name for path in ROOT.glob("vrsd_*") if (path / "__init__.py").exists())


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_mypy_covers_every_package_and_what_regenerates_the_figures():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert sorted(config["tool"]["mypy"]["files"]) == sorted([*PACKAGES, "benchmarks", "scripts"])


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_passes_on_every_package():
    # mypy's incremental cache (.mypy_cache, ignored by git) makes a re-run take seconds
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout


# asserts not yet turned into errors: file -> how many (in bodies being rewritten)
ASSERTS_LEFT: dict[str, int] = {}


def test_library_code_raises_instead_of_asserting():
    found: dict[str, list[int]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    extra = {name: lines for name, lines in found.items()
             if len(lines) > ASSERTS_LEFT.get(name, 0)}
    assert not extra, f"assert in library code (raise ValueError/RuntimeError): {extra}"
