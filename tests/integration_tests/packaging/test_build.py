"""Ready to publish: ``python -m build`` makes a wheel and an sdist of a copy of the
checkout, ``twine check`` passes their metadata, the wheel holds the packages, the data
the commands read and the licences and nothing else, and the wheel installed with the
``langchain`` extra into a fresh venv runs the README's LangChain quick start.

Slow: the build backend and the extra's packages come from the package index (pip's
cache keeps this to about a minute once warm)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import tomllib

from tests.helpers.venvs import ROOT, Env, copy_checkout
from tests.integration_tests.packaging.test_fresh_venv import CASES, quickstart, readme_block

pytestmark = pytest.mark.slow

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DATA = ("vrsd_cli/data", "vrsd_eval/data", "vrsd_kit/data")  # what the package reads
WHEEL_LIMIT = 4 * 2**20


def tracked_data() -> set[str]:
    """The data files of the checkout that the commands read (tracked by git)."""
    done = subprocess.run(["git", "ls-files", *DATA], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return set(done.stdout.split())


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("build")
    source = copy_checkout(root / "vrsd")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(root / "dist"),
                           str(source)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return root / "dist"


def artefacts(dist: Path) -> tuple[Path, Path]:
    version = PROJECT["version"]
    wheel, sdist = dist / f"vrsd-{version}-py3-none-any.whl", dist / f"vrsd-{version}.tar.gz"
    assert sorted(dist.iterdir()) == sorted([wheel, sdist])
    return wheel, sdist


def test_twine_check_passes_both(dist):
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           *map(str, artefacts(dist))], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_packages_data_and_licences_and_nothing_heavy(dist):
    wheel, _ = artefacts(dist)
    assert wheel.stat().st_size < WHEEL_LIMIT
    info = f"vrsd-{PROJECT['version']}.dist-info"
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"{info}/licenses/{name}" for name in PROJECT["license-files"]} <= names
    assert tracked_data() <= names  # every file a command reads
    code = {n for n in names if n.endswith(".py")}
    typed = {n for n in names if n.endswith("/py.typed")}
    licences = {n for n in names if n.startswith(f"{info}/licenses/")}
    meta = {n for n in names if n.startswith(f"{info}/")} - licences
    other = names - code - typed - tracked_data() - licences - meta
    assert not other, sorted(other)
    assert {n.split("/")[0] for n in code} == {
        "vrsd_core", "vrsd_kit", "vrsd_langchain", "vrsd_llamaindex", "vrsd_haystack",
        "vrsd_eval", "vrsd_cli"}
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode())
    assert metadata["Version"] == PROJECT["version"]
    assert metadata["License-Expression"] == PROJECT["license"]
    extras = set(metadata.get_all("Provides-Extra"))
    assert {"langchain", "cli", "html", "pdf", "dev"} <= extras
    assert metadata["Description-Content-Type"] == "text/markdown"


def test_the_sdist_holds_the_licences_and_the_changelog_but_not_the_tests(dist):
    _, sdist = artefacts(dist)
    top = f"vrsd-{PROJECT['version']}"
    names = set(tarfile.open(sdist).getnames())
    for name in ("LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml",
                 "vrsd_eval/data/datasets/README.md", *tracked_data()):
        assert f"{top}/{name}" in names, name
    assert not any(n.startswith(f"{top}/tests") for n in names)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(PROJECT['version'])}\b", changelog, re.M)


def test_the_wheel_with_the_langchain_extra_runs_the_quick_starts(dist, tmp_path):
    wheel, _ = artefacts(dist)
    env = Env("langchain", tmp_path / "venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env.path)
    done = env.run(env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   f"vrsd[langchain] @ {wheel.as_uri()}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    module, replacements = CASES["langchain"]
    core, langchain = tmp_path / "core.py", tmp_path / "quickstart.py"
    core.write_text(readme_block("vrsd_core") + '\nprint("CORE OK")\n', encoding="utf-8")
    langchain.write_text(quickstart(module, replacements), encoding="utf-8")
    for script, mark in ((core, "CORE OK"), (langchain, "QUICKSTART OK")):
        done = env.run(env.python, script, cwd=tmp_path)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        assert mark in done.stdout
    version = env.run(env.path / "bin" / "vrsd", "--version", cwd=tmp_path)
    assert version.stdout.strip() == f"vrsd {PROJECT['version']}"
