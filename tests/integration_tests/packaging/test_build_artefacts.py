"""Build the sdist and wheel like a release (``python -m build`` in a scratch copy),
check their metadata with ``twine check`` and the wheel's file list, then install the
*wheel* with the ``langchain`` extra into a fresh venv and run the README's core quick
start and its LangChain quick start there.

The README's LangChain quick start uses the bundled model (torch, sentence-transformers),
which the ``langchain`` extra does not install; here it runs over the toy deterministic
embeddings of ``toy_embeddings.py`` (as test_fresh_venv.py does) and checks the bundled
model asks for its extra. Needs the package index (pip, and build's isolated env).
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.helpers.venvs import Env, copy_checkout
from tests.integration_tests.packaging.test_fresh_venv import CASES, quickstart, readme_block

pytestmark = pytest.mark.slow

ALLOWED_TOP = {"vrsd_core", "vrsd_kit", "vrsd_langchain", "vrsd_llamaindex", "vrsd_haystack",
               "vrsd_eval", "vrsd_cli"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("build")
    source = copy_checkout(root / "vrsd")
    out = root / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return out


def test_twine_check_passes(dist):
    files = sorted(dist.iterdir())
    assert {p.suffix for p in files} == {".whl", ".gz"}
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_packages_their_data_and_the_licence_only(dist):
    names = zipfile.ZipFile(next(dist.glob("*.whl"))).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == ALLOWED_TOP
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert any(n.startswith("vrsd_eval/data/datasets/") and n.endswith(".gz") for n in names)
    assert any(n.startswith("vrsd_cli/data/") for n in names)
    assert not [n for n in names if "/tests/" in n or "/.venv/" in n or "results/" in n]


def test_the_wheel_installs_with_langchain_and_runs_the_quick_starts(dist, tmp_path):
    env = Env("langchain", tmp_path / "venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env.path)
    wheel = next(dist.glob("*.whl"))
    done = env.run(env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   f"{wheel}[langchain]", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    core = tmp_path / "core.py"
    core.write_text(readme_block("vrsd_core") + '\nprint("CORE OK")\n', encoding="utf-8")
    module, replacements = CASES["langchain"]
    lc = tmp_path / "lc.py"
    lc.write_text(quickstart(module, replacements), encoding="utf-8")
    for script, mark in ((core, "CORE OK"), (lc, "QUICKSTART OK")):
        ran = env.run(env.python, script, cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-4000:]
        assert mark in ran.stdout
