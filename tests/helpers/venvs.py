"""Fresh virtual environments for the packaging tests: a copy of the checkout, venvs
built in a temporary folder with pip (from the package index and pip's cache), and
commands run in them as a user would (no PYTHONPATH, no active venv, offline model)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

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

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file()
                   and not f.is_symlink())
