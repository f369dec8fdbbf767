"""pyproject.toml's extras, for the tests that check what an install line installs."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def extras() -> dict[str, list[str]]:
    """Extra name -> its requirement strings, as pyproject.toml declares them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["optional-dependencies"]


def distributions(names: set[str]) -> set[str]:
    """Every distribution the extras ``names`` install (nested ``vrsd[...]`` expanded),
    lower-case, without versions or their own extras."""
    table, seen, found = extras(), set(), set()
    todo = list(names)
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in table[extra]:
            nested = re.fullmatch(r"vrsd\[(.+)\]", requirement)
            if nested:
                todo.extend(e.strip() for e in nested[1].split(","))
            else:
                found.add(re.split(r"[<>=!\[; ]", requirement, maxsplit=1)[0].lower())
    return found
