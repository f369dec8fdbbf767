"""The adapters' table and store registries against everything that lists them: the
extras, the docs' store table, the store tests' cases, the private members recorded,
and the module/class each record names; the adapters' and the evaluation's other private
reads of the frameworks (their compat modules) likewise, and no such read anywhere else."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import re
from pathlib import Path

import pytest

from tests.helpers import store_cases
from tests.helpers.extras import extras
from vrsd_cli.store_table import adapter_registries, store_records, store_table
from vrsd_core.callers import internal_packages
from vrsd_eval._compat import PRIVATE_MEMBERS as EVAL_PRIVATE
from vrsd_kit.adapters import ADAPTERS, Adapter
from vrsd_kit.stores import PrivateMember, StoreRecord

ROOT = Path(__file__).resolve().parents[3]


def _source(module: str) -> Path:
    """Where ``module`` is: its file, or its folder for a package (every file in it)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    path = Path(spec.origin).resolve()
    return path.parent if path.name == "__init__.py" else path


RECORDS: list[tuple[str, StoreRecord]] = [
    (adapter.name, record) for adapter in ADAPTERS for record in store_records(adapter)]
IDS = [f"{adapter}-{r.name}" for adapter, r in RECORDS]
STORE_MODULES = {adapter.name: _source(adapter.records.split(":")[0]) for adapter in ADAPTERS}
COMPAT_MODULES = {**{adapter.name: _source(adapter.compat) for adapter in ADAPTERS
                     if adapter.compat},
                  "eval": ROOT / "vrsd_eval" / "_compat.py"}
COMPAT: list[tuple[str, PrivateMember]] = [
    *((adapter.name, member) for adapter in ADAPTERS if adapter.compat
      for member in importlib.import_module(adapter.compat).PRIVATE_MEMBERS),
    *(("eval", member) for member in EVAL_PRIVATE)]
COMPAT_IDS = [f"{adapter}-{m.member}" for adapter, m in COMPAT]


def test_docs_store_table_is_the_generated_one():
    page = (ROOT / "docs" / "stores.md").read_text()
    assert store_table() in page, "regenerate it: python -m vrsd_cli.store_table"


def test_every_adapter_and_record_has_a_real_store_test():
    assert set(store_cases.CASES) == {adapter.name for adapter in ADAPTERS}
    for adapter in ADAPTERS:
        assert set(store_cases.CASES[adapter.name]) == {r.name for r in store_records(adapter)}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=[a.name for a in ADAPTERS])
def test_each_adapter_is_an_extra_and_a_typed_package_that_registers_itself(adapter: Adapter):
    assert adapter.name in extras()  # pip install 'vrsd[<name>]'
    assert adapter.package == f"vrsd_{adapter.name}"
    assert (ROOT / adapter.package / "py.typed").is_file()
    importlib.import_module(adapter.package)
    assert {adapter.package, *adapter.frames} <= set(internal_packages())


def test_names_are_unique_per_adapter():
    for records in adapter_registries().values():
        names = [r.name for r in records]
        assert len(names) == len(set(names))


@pytest.mark.parametrize(("adapter", "record"), RECORDS, ids=IDS)
def test_record_names_a_real_store_class(adapter, record):
    cls = getattr(importlib.import_module(record.module), record.class_name)
    assert isinstance(cls, type)
    assert record.store_class() is cls


def _package_sources() -> dict[Path, str]:
    return {path: path.read_text() for pkg in ROOT.glob("vrsd_*") if pkg.is_dir()
            for path in pkg.rglob("*.py")}


def _is_store_module(path: Path) -> bool:
    return any(path == mine or path.is_relative_to(mine) for mine in STORE_MODULES.values())


def _may_read_privates(path: Path) -> bool:
    return _is_store_module(path) or path in COMPAT_MODULES.values()


@pytest.mark.parametrize(("adapter", "record"), RECORDS, ids=IDS)
def test_private_members_are_read_in_the_store_modules_only(adapter, record):
    # by attribute name; ``self.<name>`` is an object's own attribute, not another library's
    sources = _package_sources()
    mine = STORE_MODULES[adapter]
    own = "".join(text for path, text in sources.items()
                  if path == mine or path.is_relative_to(mine))
    for member in record.private:
        attr = member.split()[0].split(".")[-1]
        assert attr in own, f"{member} is recorded but read in no {adapter} store module"
        elsewhere = [path for path, text in sources.items() if not _is_store_module(path)
                     and re.search(rf"(?<!self\.)\b{re.escape(attr)}\b", text)]
        assert not elsewhere, f"{member} is read outside the store modules: {elsewhere}"


def _owner(name: str) -> object:
    """An object of the class a compat record names (instance attributes need one)."""
    if name == "VectorStore":
        from langchain_core.vectorstores import VectorStore

        return VectorStore
    if name == "Settings":
        from llama_index.core.settings import Settings

        return Settings
    if name == "SentenceTransformersDiversityRanker":
        from haystack_integrations.components.rankers.sentence_transformers import (
            SentenceTransformersDiversityRanker,
        )

        return SentenceTransformersDiversityRanker
    assert name == "VectorIndexRetriever", name
    from llama_index.core import MockEmbedding, VectorStoreIndex

    return VectorStoreIndex([], embed_model=MockEmbedding(embed_dim=4)).as_retriever()


@pytest.mark.parametrize(("adapter", "record"), COMPAT, ids=COMPAT_IDS)
def test_compat_member_exists_and_is_read_there_only(adapter, record):
    owner, attr = record.member.split(".")
    installed = importlib.metadata.version(record.client)
    assert hasattr(_owner(owner), attr), f"{record.member} is gone in {record.client} {installed}"
    sources = _package_sources()
    assert attr in sources[COMPAT_MODULES[adapter]]
    # a subclass defining the hook (``def _get_retriever_tags``) does not read it
    elsewhere = [path for path, text in sources.items() if not _may_read_privates(path)
                 and re.search(rf"(?<!self\.)(?<!def )\b{re.escape(attr)}\b", text)]
    assert not elsewhere, f"{record.member} is read outside {COMPAT_MODULES[adapter].name}"


# Reads of vrsd's own private members on objects other than ``self`` (same module).
OWN_PRIVATE_READS = {("vrsd_langchain/vectorstore.py", "retriever._embedder"),
                     ("vrsd_langchain/vectorstore.py", "retriever._core_settings")}


def test_no_private_member_is_read_outside_the_store_and_compat_modules():
    # ``x._name`` or getattr(x, "_name") on anything but self/cls, super() (overriding
    # a framework's hook is not reading its internals) and sys (_getframe is documented)
    found = set()
    for path, text in _package_sources().items():
        if _may_read_privates(path):
            continue
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute):
                name, owner = node.attr, node.value
                if (isinstance(owner, ast.Name) and owner.id in ("self", "cls", "sys")) or (
                        isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super"):
                    continue
            elif (isinstance(node, ast.Call) and ast.unparse(node.func) in ("getattr", "setattr")
                  and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                name = str(node.args[1].value)
            else:
                continue
            if name.startswith("_") and not name.startswith("__"):
                found.add((rel, ast.unparse(node)))
    assert found <= OWN_PRIVATE_READS, sorted(found - OWN_PRIVATE_READS)
