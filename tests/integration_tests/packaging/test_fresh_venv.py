"""Install like a user: ``pip install "<repo>[langchain]"`` and ``"<repo>[llamaindex]"``
into fresh virtual environments, then run the README's quick start for that framework
there, over an embedded store (InMemoryVectorStore; VectorStoreIndex's
SimpleVectorStore) with small deterministic embeddings in place of the bundled model.

Each environment must hold no torch and no database client, and stay under 400 MB; in
the LangChain one the ``vrsd`` command's subcommands that need more say which extra to
install, in one line with exit code 2. The environments are built once per session
(pip's cache keeps this to about a minute each once warm). Needs the package index.
"""

from __future__ import annotations

import re
import venv
from pathlib import Path

import pytest

from tests.helpers.venvs import ROOT, Env, copy_checkout

pytestmark = pytest.mark.slow

TOY = (Path(__file__).parent / "toy_embeddings.py").read_text(encoding="utf-8")
LIMIT_BYTES = 400 * 1024 * 1024

# Neither adapter extra may bring these: the model stack, or any store's client.
HEAVY = {"torch", "sentence-transformers", "transformers"}
DATABASE_CLIENTS = {
    "chromadb", "qdrant-client", "pymilvus", "milvus-lite", "lancedb", "pylance", "pyarrow",
    "psycopg", "psycopg-binary", "psycopg2-binary", "asyncpg", "pgvector", "faiss-cpu",
    "langchain-chroma", "langchain-qdrant", "langchain-milvus", "langchain-postgres",
    "langchain-community", "llama-index-vector-stores-chroma",
    "llama-index-vector-stores-qdrant", "llama-index-vector-stores-postgres",
    "llama-index-vector-stores-milvus", "llama-index-vector-stores-lancedb",
}


def _build(root: Path, source: Path, extra: str) -> Env:
    env = Env(extra, root / f"venv-{extra}")
    venv.EnvBuilder(with_pip=True, clear=True).create(env.path)
    done = env.run(env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   f"{source}[{extra}]", cwd=root)
    assert done.returncode == 0, f"pip install .[{extra}] failed:\n{done.stderr[-3000:]}"
    return env


@pytest.fixture(scope="session")
def fresh(tmp_path_factory) -> dict[str, Env]:
    root = tmp_path_factory.mktemp("fresh_venvs")
    source = copy_checkout(root / "vrsd")
    return {extra: _build(root, source, extra) for extra in ("langchain", "llamaindex")}


def readme_block(module: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.M | re.S)
    return next(b for b in blocks if f"from {module} import" in b)  # the first: quick start


def quickstart(module: str, replacements: dict[str, str]) -> str:
    """The README's block for ``module`` with the bundled model swapped for the toy one,
    then checks that the bundled model asks for its extra and that torch never loaded."""
    block = readme_block(module)
    for old, new in replacements.items():
        assert old in block, f"the README's {module} block no longer has {old!r}"
        block = block.replace(old, new)
    return f"""{TOY}

{block}

import sys
try:
    {"default_embeddings" if module == "vrsd_langchain" else "default_embed_model"}()
except ImportError as exc:
    assert "pip install 'vrsd[{module.split('_')[1]}-embeddings]'" in str(exc), exc
else:
    raise AssertionError("the bundled model loaded without its extra")
assert "torch" not in sys.modules, "importing the adapter loaded torch"
print("QUICKSTART OK")
"""


CASES = {
    "langchain": ("vrsd_langchain", {
        "InMemoryVectorStore(default_embeddings())": "InMemoryVectorStore(langchain_embeddings())",
    }),
    "llamaindex": ("vrsd_llamaindex", {
        "embed_model = default_embed_model()": "embed_model = llamaindex_embed_model()",
    }),
}


@pytest.mark.parametrize("extra", list(CASES))
def test_the_quick_start_runs_with_only_its_extra(fresh, extra, tmp_path):
    env = fresh[extra]
    module, replacements = CASES[extra]
    script = tmp_path / "quickstart.py"
    script.write_text(quickstart(module, replacements), encoding="utf-8")
    done = env.run(env.python, script, cwd=tmp_path)  # not the repository: the installed vrsd
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "QUICKSTART OK" in done.stdout
    where = env.run(env.python, "-c", f"import {module}; print({module}.__file__)", cwd=tmp_path)
    assert str(env.path) in where.stdout  # it ran the installed package


@pytest.mark.parametrize("extra", list(CASES))
def test_the_environment_is_small_with_no_torch_and_no_database_client(fresh, extra):
    env = fresh[extra]
    packages = env.packages()
    size = env.size()
    print(f"\n[{extra}] {len(packages)} packages, {size / 2**20:.0f} MB")  # for the report
    assert not HEAVY & set(packages), sorted(HEAVY & set(packages))
    assert not DATABASE_CLIENTS & set(packages), sorted(DATABASE_CLIENTS & set(packages))
    assert size < LIMIT_BYTES, f"{size / 2**20:.0f} MB"
    framework = "langchain-core" if extra == "langchain" else "llama-index-core"
    assert framework in packages and "vrsd" in packages and "numpy" in packages


@pytest.mark.parametrize(("args", "needs"), [
    (["index", "notes"], "langchain-text-splitters"),
    (["search", "what did I decide?"], "langchain-classic"),
    (["eval", "evidence"], "pyversity"),
    (["demo"], "langchain-huggingface"),
])
def test_the_command_says_which_extra_a_subcommand_needs(fresh, tmp_path, args, needs):
    """Measured before: `vrsd index notes` died with a traceback, and `eval --protocol
    evidence` after six minutes of work."""
    env = fresh["langchain"]
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("A note.")
    assert env.run(env.path / "bin" / "vrsd", "--help", cwd=tmp_path).returncode == 0
    done = env.run(env.path / "bin" / "vrsd", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    extra = {"eval": "eval"}.get(args[0], "demo")  # the README's Try it commands: demo
    assert needs in lines[0] and f"pip install 'vrsd[{extra}]'" in lines[0], lines[0]
    assert not (tmp_path / ".vrsd").exists()
