"""Fresh virtual environments for the packaging tests: a copy of the checkout, venvs
built in a temporary folder with pip (from the package index and pip's cache), and
commands run in them as a user would (no PYTHONPATH, no active venv, offline model)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]

# what a clone holds, without the local state (pip builds in the source folder: a copy
# keeps build/ and *.egg-info out of the checkout)
_NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "*.egg-info", "build", "dist", ".vrsd",
                                     "results", "__pycache__", ".*_cache", ".hypothesis")


def copy_checkout(dest: Path) -> Path:
    """A copy of this checkout at ``dest`` (what a fresh clone holds)."""
    shutil.copytree(ROOT, dest, ignore=_NOT_SOURCE)
    return dest


@dataclass
class Env:
    extra: str
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def run(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["HF_HUB_OFFLINE"] = "1"
        return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=600)

    def packages(self) -> dict[str, str]:
        done = self.run(self.python, "-m", "pip", "list", "--format=json", cwd=self.path)
        assert done.returncode == 0, done.stderr
        return {p["name"].lower().replace("_", "-"): p["version"]
                for p in json.loads(done.stdout)}

    @property
    def site_packages(self) -> Path:
        return self.path / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" \
            / "site-packages"

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file()
                   and not f.is_symlink())


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def link_installed(env: Env, name: str) -> list[str]:
    """Put the distribution ``name`` and what it requires, as this environment has them,
    into ``env`` (hard links, else copies): what ``pip install`` would unpack, without
    its minute of unpacking a large wheel such as torch. Distributions ``env`` already
    has are left alone. Returns the names put in."""
    site = env.site_packages
    present = {_normalized(p.name.split("-")[0]) for p in site.glob("*.dist-info")}
    done: list[str] = []
    todo = [name]
    while todo:
        dist = distribution(todo.pop())
        key = _normalized(dist.metadata["Name"])
        if key in present or key in done:
            continue
        done.append(key)
        for requirement in map(Requirement, dist.requires or []):
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if str(file).startswith("..") or not source.is_file():
                continue  # scripts outside site-packages; files the RECORD lists but lacks
            target = site / file
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
    return done
