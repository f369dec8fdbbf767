"""The store registries against everything that lists stores: the docs' store table,
the store tests' cases, the installed client versions, the private members recorded,
and the module/class each record names; the adapters' and the evaluation's other private
reads of the frameworks (their compat modules) likewise, and no such read anywhere else."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.helpers import store_cases
from vrsd_cli.store_table import adapter_registries, store_table
from vrsd_core.stores import PrivateMember, StoreRecord
from vrsd_eval._compat import PRIVATE_MEMBERS as EVAL_PRIVATE
from vrsd_haystack.stores import RETRIEVERS
from vrsd_langchain._compat import PRIVATE_MEMBERS as LC_PRIVATE
from vrsd_langchain.stores import FAST_PATHS
from vrsd_llamaindex import STORE_PATHS
from vrsd_llamaindex._compat import PRIVATE_MEMBERS as LI_PRIVATE

ROOT = Path(__file__).resolve().parents[2]
RECORDS: list[tuple[str, StoreRecord]] = [
    *(("langchain", r) for r in FAST_PATHS), *(("llamaindex", r) for r in STORE_PATHS),
    *(("haystack", r) for r in RETRIEVERS)]
IDS = [f"{adapter}-{r.name}" for adapter, r in RECORDS]
STORE_MODULES = {"langchain": ROOT / "vrsd_langchain" / "stores",
                 "llamaindex": ROOT / "vrsd_llamaindex" / "_stores.py",
                 "haystack": ROOT / "vrsd_haystack" / "stores.py"}
COMPAT_MODULES = {"langchain": ROOT / "vrsd_langchain" / "_compat.py",
                  "llamaindex": ROOT / "vrsd_llamaindex" / "_compat.py",
                  "eval": ROOT / "vrsd_eval" / "_compat.py"}
COMPAT: list[tuple[str, PrivateMember]] = [
    *(("langchain", m) for m in LC_PRIVATE), *(("llamaindex", m) for m in LI_PRIVATE),
    *(("eval", m) for m in EVAL_PRIVATE)]
COMPAT_IDS = [f"{adapter}-{m.member}" for adapter, m in COMPAT]


def test_docs_store_table_is_the_generated_one():
    page = (ROOT / "docs" / "stores.md").read_text()
    assert store_table() in page, "regenerate it: python -m vrsd_cli.store_table"


def test_every_record_has_a_real_store_test():
    assert set(store_cases.LANGCHAIN) == {r.name for r in FAST_PATHS}
    assert set(store_cases.LLAMAINDEX) == {r.name for r in STORE_PATHS}
    assert set(store_cases.HAYSTACK) == {r.name for r in RETRIEVERS}


def test_names_are_unique_per_adapter():
    for records in adapter_registries().values():
        names = [r.name for r in records]
        assert len(names) == len(set(names))


@pytest.mark.parametrize(("adapter", "record"), RECORDS, ids=IDS)
def test_record_names_a_real_store_class(adapter, record):
    cls = getattr(importlib.import_module(record.module), record.class_name)
    assert isinstance(cls, type)
    assert record.store_class() is cls


@pytest.mark.parametrize(("adapter", "record"), RECORDS, ids=IDS)
def test_installed_client_is_in_the_tested_range(adapter, record):
    installed = importlib.metadata.version(record.client)
    assert installed in SpecifierSet(record.tested), (
        f"{record.client} {installed} is outside {record.tested}: run the store tests on it "
        "and widen the record's range"
    )


def _package_sources() -> dict[Path, str]:
    return {path: path.read_text() for pkg in ("vrsd_core", "vrsd_langchain", "vrsd_llamaindex",
                                                 "vrsd_haystack", "vrsd_eval", "vrsd_cli")
            for path in (ROOT / pkg).rglob("*.py")}


def _is_store_module(path: Path) -> bool:
    return path in (STORE_MODULES["llamaindex"], STORE_MODULES["haystack"]) or path.is_relative_to(
        STORE_MODULES["langchain"])


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
def test_compat_member_exists_in_the_tested_version_and_is_read_there_only(adapter, record):
    installed = importlib.metadata.version(record.client)
    assert installed in SpecifierSet(record.tested), (
        f"{record.client} {installed} is outside {record.tested}: run the adapter tests on "
        "it and widen the record's range")
    owner, attr = record.member.split(".")
    assert hasattr(_owner(owner), attr), f"{record.member} is gone in {record.client} {installed}"
    sources = _package_sources()
    assert attr in sources[COMPAT_MODULES[adapter]]
    # a subclass defining the hook (``def _get_retriever_tags``) does not read it
    elsewhere = [path for path, text in sources.items() if not _may_read_privates(path)
                 and re.search(rf"(?<!self\.)(?<!def )\b{re.escape(attr)}\b", text)]
    assert not elsewhere, f"{record.member} is read outside {COMPAT_MODULES[adapter].name}"


# Reads of vrsd's own private members on objects other than ``self`` (same module).
OWN_PRIVATE_READS = {("vrsd_langchain/vectorstore.py", "retriever._embedder"),
                     ("vrsd_langchain/vectorstore.py", "retriever._plan")}


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
