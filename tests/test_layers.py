"""The floors, read from the code's imports: ``vrsd_core`` (selection) <- ``vrsd_kit``
(what the adapters share) <- the adapters of ``vrsd_kit.adapters.ADAPTERS`` <- the
evaluation (``vrsd_eval``) <- the applications (``vrsd_cli`` and any other ``vrsd_*``
package). Nothing imports upward,
no adapter imports another, and neither the core nor the kit imports a framework; the
core does not even name an adapter or a framework (adapters register themselves)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from vrsd_kit.adapters import ADAPTERS

ROOT = Path(__file__).resolve().parents[1]
FLOORS = {"vrsd_core": 1, "vrsd_kit": 2, **{adapter.package: 3 for adapter in ADAPTERS},
          "vrsd_eval": 4}
APPLICATION = 5
FRAMEWORKS = {frame for adapter in ADAPTERS for frame in adapter.frames}
PACKAGES = sorted(path.name for path in ROOT.glob("vrsd_*") if (path / "__init__.py").exists())


def imported(path: Path) -> set[str]:
    """The top-level names of the modules ``path`` imports (at any depth, lazily too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_floors_are_the_packages():
    assert {"vrsd_core", "vrsd_kit", "vrsd_cli"} <= set(PACKAGES)
    assert {adapter.package for adapter in ADAPTERS} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_only_go_down(package):
    floor = FLOORS.get(package, APPLICATION)
    for path in (ROOT / package).rglob("*.py"):
        for name in imported(path) - {package}:
            if name in PACKAGES:
                other = FLOORS.get(name, APPLICATION)
                assert other < floor or other == floor == APPLICATION, (
                    f"{path.relative_to(ROOT)} imports {name}, on floor {other} of {floor}")
            if floor < 3:
                assert name not in FRAMEWORKS, f"{path.relative_to(ROOT)} imports {name}"


def test_the_core_names_no_adapter_and_no_framework():
    names = {adapter.package for adapter in ADAPTERS} | FRAMEWORKS
    for path in (ROOT / "vrsd_core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named = sorted(name for name in names if re.search(rf"\b{name}\b", text))
        assert not named, f"{path.relative_to(ROOT)} names {named}"
