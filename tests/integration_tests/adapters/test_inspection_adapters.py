"""Each adapter inspects its own framework's stores, below the command line:
``vrsd_langchain.inspect_store``, ``vrsd_llamaindex.inspect_index`` and
``vrsd_haystack.inspect_store`` read a store as their retrievers do and hand the
candidates to ``vrsd_kit.inspection`` (the figures and the reports), without importing
``vrsd_cli`` or ``vrsd_eval``; the command line's any-store call gives the same."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from vrsd_cli.demo import ORDINARY_QUESTIONS, fact_of, load_corpus
from vrsd_kit.settings import DEFAULT_FETCH_K

QUESTIONS = list(ORDINARY_QUESTIONS[:8])


def held(found):
    return [[(q.top_k[h.rank - 1].passage.id, h.rank, h.kept, h.relation)
             for h in q.held_back] for q in found.questions]


def crowded(found):
    return [[(c.rank, c.by, c.relation) for c in q.crowded_slots] for q in found.questions]


@pytest.fixture(scope="module")
def passages():
    return load_corpus()


@pytest.fixture(scope="module")
def lc_store(passages, lc_embeddings):
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(lc_embeddings)
    store.add_texts([p.text for p in passages], ids=[p.id for p in passages],
                    metadatas=[{"source": fact_of(p.id)} for p in passages])
    return store


def test_langchain(lc_store):
    from vrsd_cli.inspection import inspect_store as any_store
    from vrsd_langchain import inspect_store

    # a cap of one passage per source (a fact's paraphrases share one): past it is crowded
    found = inspect_store(lc_store, QUESTIONS, k=5, max_per_group=1)
    same = any_store(lc_store, QUESTIONS, k=5, max_per_group=1)
    assert (found.k, found.fetch_k, len(found.questions)) == (5, DEFAULT_FETCH_K, len(QUESTIONS))
    assert held(found) == held(same) and crowded(found) == crowded(same)
    assert any(crowded(found)) and any(held(found))
    # without a cap, paraphrases sharing a source are not crowding (their words differ)
    assert not any(crowded(inspect_store(lc_store, QUESTIONS, k=5)))
    with pytest.raises(ValueError, match=r"^store: expected a LangChain VectorStore"):
        inspect_store(object(), QUESTIONS)
    with pytest.raises(ValueError, match=r"^k: "):
        inspect_store(lc_store, QUESTIONS, k=0)


def test_llamaindex(passages, li_embed_model):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from vrsd_cli.inspection import inspect_store as any_store
    from vrsd_llamaindex import inspect_index

    nodes = [TextNode(id_=p.id, text=p.text, metadata={"file_path": fact_of(p.id)},
                      excluded_embed_metadata_keys=["file_path"]) for p in passages]
    index = VectorStoreIndex(nodes, embed_model=li_embed_model)
    # its source: "file_path", LlamaIndex's readers'
    found = inspect_index(index, QUESTIONS, max_per_group=1)
    same = any_store(index, QUESTIONS, source="file_path", max_per_group=1)
    assert held(found) == held(same) and crowded(found) == crowded(same)
    assert any(crowded(found))
    assert found.has_sources
    with pytest.raises(ValueError, match=r"^index: expected a LlamaIndex index"):
        inspect_index(object(), QUESTIONS)


def test_haystack(passages, lc_embeddings):
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    from vrsd_cli.inspection import inspect_store as any_store
    from vrsd_haystack import inspect_store

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([
        Document(id=p.id, content=p.text, embedding=vec, meta={"file_path": fact_of(p.id)})
        for p, vec in zip(passages, lc_embeddings.embed_documents([p.text for p in passages]),
                          strict=True)])
    found = inspect_store(store, QUESTIONS, embedder=lc_embeddings.embed_query,
                          max_per_group=1)
    same = any_store(store, QUESTIONS, embedder=lc_embeddings.embed_query,
                     source="file_path", max_per_group=1)
    assert held(found) == held(same) and crowded(found) == crowded(same)
    assert any(crowded(found))
    with pytest.raises(ValueError, match=r"^embedder: a Haystack store needs"):
        inspect_store(store, QUESTIONS)


def test_an_adapters_inspection_imports_neither_the_command_line_nor_the_evaluation(tmp_path):
    script = textwrap.dedent('''
        import sys
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_core.vectorstores import InMemoryVectorStore
        from vrsd_kit.inspection import format_table, write_html
        from vrsd_langchain import inspect_store

        store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        texts = ["a cat sat on the mat", "a cat sat on the mat today", "dogs bark",
                 "the sun is a star", "rain falls", "the moon orbits the earth"]
        store.add_texts(texts, metadatas=[{"source": str(i // 2)} for i in range(6)])
        found = inspect_store(store, ["cat", "sky"], k=3, fetch_k=6)
        print(format_table(found).splitlines()[0][:14])
        write_html(found, sys.argv[1])
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("vrsd_cli", "vrsd_eval")))
    ''')
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["vrsd inspect: ", "[]"]
    assert (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
