"""Each example runs after exactly the install line it documents (and the docs agree).

Measured before: ``python examples/haystack_pipeline.py`` after the documented
``pip install "vrsd[haystack,embeddings]"`` failed with ``No module named
'haystack_integrations'`` (sentence-transformers-haystack came only with ``[cli]``).

Every example's docstring says ``pip install ...`` (from a checkout, torch first as the
README says). Here: every module an example imports is provided by what that line
installs (fast, every example), and the Haystack example runs in a fresh venv built
from its line (slow: the model and Haystack are installed).
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
import venv
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import pytest

from tests.helpers.extras import distributions, extras
from tests.helpers.venvs import ROOT, Env, copy_checkout, link_installed

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def install_line(example: Path) -> str:
    """The ``pip install`` arguments the example's docstring gives."""
    doc = ast.get_docstring(ast.parse(example.read_text(encoding="utf-8"))) or ""
    found = re.search(r"^    pip install (.+)$", doc, re.M)
    assert found, f"{example.name}: no '    pip install ...' line in its docstring"
    return found[1]


def installed_by(line: str) -> set[str]:
    """The distributions ``pip install <line>`` brings by name (a checkout's extras
    expanded, other requirements by name), plus vrsd itself and its numpy."""
    names = {"vrsd", "numpy"}
    for arg in shlex.split(line):
        extra = re.fullmatch(r"\.\[(.+)\]", arg)
        if extra:
            wanted = {e.strip() for e in extra[1].split(",")}
            assert wanted <= set(extras()), f"unknown extra in {line!r}"
            names |= distributions(wanted)
        elif arg != "." and not arg.startswith("-"):  # (-e: editable)
            names.add(re.split(r"[\[<>=!; ]", arg, maxsplit=1)[0].lower())
    return names


def imported_modules(example: Path) -> set[str]:
    """The modules the example imports, except optional ones (inside a ``try``)."""
    tree = ast.parse(example.read_text(encoding="utf-8"))
    optional = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for n in ast.walk(t)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def provider(module: str) -> str:
    """The distribution whose files hold ``module`` in this (the dev) environment."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return "<stdlib>"
    if top.startswith("vrsd_"):
        return "vrsd"
    candidates = packages_distributions().get(top, [])
    path = module.replace(".", "/")
    for name in candidates:  # a namespace shared by several (haystack_integrations)
        files = [str(f) for f in distribution(name).files or []]
        if len(candidates) == 1 or any(f.startswith(path + "/") or f == path + ".py"
                                       for f in files):
            return name.lower().replace("_", "-")
    raise AssertionError(f"no installed distribution provides {module}")


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_module_an_example_imports_comes_with_its_install_line(example):
    allowed = installed_by(install_line(example)) | {"<stdlib>"}
    for module in sorted(imported_modules(example)):
        assert provider(module) in allowed, (example.name, module, install_line(example))


def test_the_old_haystack_line_would_be_caught():
    """The check sees the measured failure: [haystack,embeddings] has no embedders."""
    module = "haystack_integrations.components.embedders.sentence_transformers"
    assert provider(module) == "sentence-transformers-haystack"
    assert provider(module) not in installed_by('".[haystack,embeddings]"')
    assert provider(module) in installed_by('".[haystack-embeddings]"')


def test_the_docs_give_the_examples_lines():
    haystack = install_line(ROOT / "examples" / "haystack_pipeline.py")
    adapters = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    assert f"pip install {haystack}" in adapters  # the Haystack quick start's line
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"\| `haystack-embeddings` \|.*examples/haystack_pipeline\.py", readme)
    for example in ("langchain_rag.py", "compare_methods.py"):
        assert install_line(ROOT / "examples" / example) == '-e ".[langchain-embeddings]"'
    assert 'pip install -e ".[langchain-embeddings]"' in readme  # the LangChain quick start


@pytest.mark.slow
def test_the_haystack_example_runs_after_exactly_its_install_line(tmp_path_factory):
    """torch, the prerequisite the README installs first (and test_setup_script.py holds
    how setup.sh gets it), is this environment's CPU build, linked in rather than
    unpacked again; then exactly the example's line, in a copy of the checkout."""
    root = tmp_path_factory.mktemp("example_venv")
    source = copy_checkout(root / "vrsd")
    env = Env("haystack-embeddings", root / "venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env.path)
    assert "torch" in link_installed(env, "torch")
    example = source / "examples" / "haystack_pipeline.py"
    done = env.run(env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   *shlex.split(install_line(example)), cwd=source)
    assert done.returncode == 0, done.stderr[-3000:]
    done = env.run(env.python, example, cwd=root)  # the installed vrsd, not the checkout's
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "Saved as YAML and loaded back: same picks" in done.stdout
    assert "cuda" not in env.packages()["torch"]  # pip kept the CPU build it found
