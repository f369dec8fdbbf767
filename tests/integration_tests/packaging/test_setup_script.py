"""``scripts/setup.sh`` installs the CPU build of torch: from PyTorch's CPU index on an
ordinary machine, from pip's configured sources (the wheel on disk) when that index
cannot be reached, never a CUDA build without saying so; the README says the same.

The venv's ``python`` is a stub that logs every call and plays the part of pip and
torch, so each path of the script runs in milliseconds and installs nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "setup.sh"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

STUB = r"""#!/usr/bin/env bash
echo "$*" >> "$STUB_LOG"
here=$(dirname "$0")
case "$*" in
  "-c "*"import torch"*)  # torch_build
    [ -f "$here/torch" ] || exit 1
    cat "$here/torch"; exit 0 ;;
  *"install --quiet --upgrade pip"*|*"install --quiet -e "*) exit 0 ;;
  *"torch=="*"--index-url $CPU_INDEX"*)
    [ "$STUB_CPU_INDEX" = reachable ] || exit 1
    echo "$STUB_BUILD" > "$here/torch"; exit 0 ;;
  *"torch=="*)
    echo "$STUB_BUILD" > "$here/torch"; exit 0 ;;
esac
echo "unexpected call: $*" >&2; exit 3
"""


def setup(tmp_path: Path, *, has_torch: str | None = None, cpu_index: str = "reachable",
          build: str = "2.13.0+cpu CPU") -> tuple[subprocess.CompletedProcess, list[str]]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(STUB)
    python.chmod(0o755)
    if has_torch:
        (venv / "bin" / "torch").write_text(has_torch + "\n")
    log = tmp_path / "calls.log"
    env = {**os.environ, "VENV": str(venv), "EXTRAS": "demo", "STUB_LOG": str(log),
           "STUB_CPU_INDEX": cpu_index, "STUB_BUILD": build, "CPU_INDEX": CPU_INDEX}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "unexpected call" not in done.stderr
    return done, log.read_text().splitlines()


def torch_installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("-m pip install") and "torch==" in c]


def test_an_ordinary_machine_gets_the_cpu_build_from_pytorchs_cpu_index(tmp_path):
    done, calls = setup(tmp_path)
    [install] = torch_installs(calls)
    assert "torch==2.13.0" in install and f"--index-url {CPU_INDEX}" in install
    assert "--extra-index-url https://pypi.org/simple" in install  # torch's dependencies
    assert calls[-1] == "-m pip install --quiet -e .[demo]"  # torch first, then vrsd
    assert "torch: installed 2.13.0+cpu CPU" in done.stdout
    assert done.stdout.strip().endswith("(extras: demo; torch 2.13.0+cpu CPU)")


def test_without_the_cpu_index_the_configured_sources_give_the_wheel_on_disk(tmp_path):
    done, calls = setup(tmp_path, cpu_index="unreachable")
    first, fallback = torch_installs(calls)
    assert CPU_INDEX in first
    assert fallback == "-m pip install --quiet torch==2.13.0"  # pip.conf: find-links, ...
    assert "PyTorch's CPU index could not be used" in done.stderr
    assert "torch: installed 2.13.0+cpu CPU" in done.stdout


def test_a_cuda_build_is_never_installed_silently(tmp_path):
    done, _ = setup(tmp_path, cpu_index="unreachable", build="2.13.0 CUDA 12.8")
    assert "WARNING: torch 2.13.0 CUDA 12.8 is a CUDA build" in done.stderr
    assert f"--force-reinstall torch==2.13.0 --index-url {CPU_INDEX}" in done.stderr


@pytest.mark.parametrize("build", ["2.13.0+cpu CPU", "2.5.1 CUDA 12.1"])
def test_a_torch_that_imports_is_kept(tmp_path, build):
    done, calls = setup(tmp_path, has_torch=build)
    assert torch_installs(calls) == []
    assert f"torch: kept the one already installed ({build})" in done.stdout


def test_the_readme_says_what_the_script_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    script = SCRIPT.read_text(encoding="utf-8")
    version = re.search(r"TORCH_VERSION:-([\d.]+)", script)[1]
    install = readme[readme.index("## Install"):readme.index("## Quick start")]
    assert f"pip install torch --index-url {CPU_INDEX}" in install  # by hand
    assert "scripts/setup.sh" in install and f"torch=={version}" in install  # make demo/test
    for step in ("already imports", "configured sources", "CUDA"):
        assert step in install, step
