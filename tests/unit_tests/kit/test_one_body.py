"""The selection runs in one place: the adapter packages call no selection function of the
core (``vrsd_kit.rerank`` does) and decide nothing by comparing a method with the
default's name (a method's declared capabilities decide, ``vrsd_kit.rerank.reads_words``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from vrsd_kit.adapters import ADAPTERS

ROOT = Path(__file__).resolve().parents[3]
SELECTION = {"select", "select_batch"}
PACKAGES = [a.package for a in ADAPTERS]


def findings(package: str) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        where = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module.split(".")[0] == "vrsd_core":
                if node.module.startswith("vrsd_core.methods"):
                    found.append(f"{where}:{node.lineno} imports {node.module}")
                found += [f"{where}:{node.lineno} imports {a.name}" for a in node.names
                          if a.name in SELECTION]
            if isinstance(node, ast.Compare):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                if "DEFAULT_METHOD" in names:
                    found.append(f"{where}:{node.lineno} compares with DEFAULT_METHOD")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_an_adapter_calls_no_selection_function_and_compares_no_default_name(package):
    assert findings(package) == []


def test_the_kit_calls_the_selection_in_one_module():
    where = {f.split(":")[0] for f in findings("vrsd_kit") if "imports select" in f}
    assert where == {"vrsd_kit/rerank.py"}
