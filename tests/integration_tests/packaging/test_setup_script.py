"""``scripts/setup.sh`` installs the CPU build of torch: a local wheel in pip's configured
sources when there is one (no network), else from PyTorch's CPU index, else pip's
configured sources, never a CUDA build without saying so. It probes once and quietly,
and says which source gave torch; the README says the same.

The venv's ``python`` is a stub that logs every call and plays the part of pip (its
``--dry-run --report`` included) and torch, so each path of the script runs in
milliseconds and installs nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "setup.sh"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
LOCAL = "/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
CPU_URL = f"{CPU_INDEX}/torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl"
PYPI_URL = "https://files.pythonhosted.org/packages/torch-2.13.0-cp311-manylinux_2_28.whl"

# STUB_LOCAL: a wheel in pip's configured sources (find-links) or empty; STUB_CPU_INDEX,
# STUB_PYPI: reachable or not. An unreachable index makes pip complain on stderr, as it
# does offline: the script must keep that to itself.
STUB = r"""#!/usr/bin/env bash
echo "$*" >> "$STUB_LOG"
here=$(dirname "$0")
report() {  # the url pip's resolver would pick, written as pip's --report
    local file=$1 url=$2
    printf '{"install": [{"download_info": {"url": "%s"}}]}' "$url" > "$file"
}
case "$*" in
  *"-c import torch"*)  # torch_build
    [ -f "$here/torch" ] || exit 1
    cat "$here/torch"; exit 0 ;;
  "-c import json"*) exec "$REAL_PYTHON" "$@" ;;  # reading the report
  *"install --quiet --retries 0 --upgrade pip"*)
    [ "$STUB_PYPI" = reachable ] || { echo "WARNING: Retrying ... pypi" >&2; exit 1; }
    exit 0 ;;
  *"install --dry-run"*)
    file=$(echo "$*" | sed 's/.*--report \([^ ]*\).*/\1/')
    [ "$STUB_PYPI" = reachable ] || echo "WARNING: Retrying ... Failed to resolve pypi" >&2
    if [ -n "$STUB_LOCAL" ]; then report "$file" "file://$STUB_LOCAL"; exit 0; fi
    case "$*" in *"--index-url $CPU_INDEX"*)
      [ "$STUB_CPU_INDEX" = reachable ] && { report "$file" "$CPU_URL"; exit 0; }
      echo "WARNING: Retrying ... Failed to resolve download.pytorch.org" >&2 ;;
    esac
    [ "$STUB_PYPI" = reachable ] && { report "$file" "$PYPI_URL"; exit 0; }
    echo "ERROR: No matching distribution found for torch" >&2; exit 1 ;;
  *"install --quiet -e "*) exit 0 ;;
  *"install --quiet torch=="*)
    echo "WARNING: a warning pip prints on the way" >&2
    echo "$STUB_BUILD" > "$here/torch"; exit 0 ;;
esac
echo "unexpected call: $*" >&2; exit 3
"""


def setup(tmp_path: Path, *, has_torch: str | None = None, local: str = "",
          cpu_index: str = "reachable", pypi: str = "reachable",
          build: str = "2.13.0+cpu CPU", code: int = 0
          ) -> tuple[subprocess.CompletedProcess, list[str]]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(STUB)
    python.chmod(0o755)
    if has_torch:
        (venv / "bin" / "torch").write_text(has_torch + "\n")
    log = tmp_path / "calls.log"
    env = {**os.environ, "VENV": str(venv), "EXTRAS": "demo", "STUB_LOG": str(log),
           "STUB_LOCAL": local, "STUB_CPU_INDEX": cpu_index, "STUB_PYPI": pypi,
           "STUB_BUILD": build, "CPU_INDEX": CPU_INDEX, "CPU_URL": CPU_URL,
           "PYPI_URL": PYPI_URL, "REAL_PYTHON": sys.executable}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == code, done.stderr
    assert "unexpected call" not in done.stderr
    return done, log.read_text().splitlines()


def torch_installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("-m pip install --quiet torch==")]


def probes(calls: list[str]) -> list[str]:
    return [c for c in calls if "--dry-run" in c]


def test_an_ordinary_machine_gets_the_cpu_build_from_pytorchs_cpu_index(tmp_path):
    done, calls = setup(tmp_path)
    [install] = torch_installs(calls)
    assert "torch==2.13.0" in install and f"--index-url {CPU_INDEX}" in install
    assert "--extra-index-url https://pypi.org/simple" in install  # torch's dependencies
    assert calls[-1] == "-m pip install --quiet -e .[demo]"  # torch first, then vrsd
    said = f"torch: installed 2.13.0+cpu CPU from PyTorch's CPU index, {unquote(CPU_URL)}"
    assert said in done.stdout  # (the URL readable: %2B is +)
    assert done.stdout.strip().endswith("(extras: demo; torch 2.13.0+cpu CPU)")
    assert done.stderr == ""  # quiet: pip's warnings kept aside when it succeeds


def test_a_local_wheel_is_used_without_asking_any_index_and_named(tmp_path):
    done, calls = setup(tmp_path, local=LOCAL, cpu_index="unreachable", pypi="unreachable")
    assert len(probes(calls)) == 1  # found locally: PyTorch's index never asked
    [install] = torch_installs(calls)
    assert install == "-m pip install --quiet torch==2.13.0"  # pip.conf: find-links, ...
    assert f"torch: installed 2.13.0+cpu CPU from a local wheel, {LOCAL}" in done.stdout
    assert CPU_INDEX not in done.stdout
    assert done.stderr == ""  # no retry after retry when offline
    assert all("--retries 0" in probe for probe in probes(calls))


def test_offline_without_a_local_wheel_is_one_line_and_a_failure(tmp_path):
    done, calls = setup(tmp_path, cpu_index="unreachable", pypi="unreachable", code=1)
    assert torch_installs(calls) == []
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("torch: torch==2.13.0 is in none of pip's configured sources")
    assert "Retrying" not in done.stderr


def test_a_cuda_build_is_never_installed_silently(tmp_path):
    done, calls = setup(tmp_path, cpu_index="unreachable", build="2.13.0 CUDA 12.8")
    [install] = torch_installs(calls)
    assert CPU_INDEX not in install
    assert f"from pip's configured sources, {PYPI_URL}" in done.stdout
    assert "WARNING: torch 2.13.0 CUDA 12.8 is a CUDA build" in done.stderr
    assert f"--force-reinstall torch==2.13.0 --index-url {CPU_INDEX}" in done.stderr


@pytest.mark.parametrize("build", ["2.13.0+cpu CPU", "2.5.1 CUDA 12.1"])
def test_a_torch_that_imports_is_kept(tmp_path, build):
    done, calls = setup(tmp_path, has_torch=build)
    assert torch_installs(calls) == [] and probes(calls) == []
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
