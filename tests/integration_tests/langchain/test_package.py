"""The package surface: exports, a light import, the bundled embeddings."""

from __future__ import annotations

import inspect
import subprocess
import sys

import vrsd_langchain
from vrsd_langchain import candidates


def test_exports():
    assert set(vrsd_langchain.__all__) >= {
        "DiverseRetriever", "DiverseVectorStore", "DiverseVectorStoreRetriever",
        "DiverseCompressor", "default_embeddings", "METADATA_KEY", "EmbeddingCache",
    }
    assert vrsd_langchain.METADATA_KEY == "vrsd"
    for name in vrsd_langchain.__all__:
        assert getattr(vrsd_langchain, name) is not None


def test_fetch_candidates_takes_its_steps_parameters():
    """The sync entry point spells out its steps body's parameters (a real signature,
    not ``*args``), all of them, with the same defaults."""
    assert inspect.signature(candidates.fetch_candidates).parameters == \
        inspect.signature(candidates.candidate_steps).parameters


def test_import_is_light():
    heavy = ["torch", "sentence_transformers", "langchain_huggingface", "chromadb",
             "qdrant_client", "faiss", "langchain_community"]
    code = (
        "import sys, vrsd_langchain; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_default_embeddings_is_the_bundled_model(hf_embeddings, model_path):
    """The session's embeddings are ``default_embeddings()`` (see conftest)."""
    from langchain_huggingface import HuggingFaceEmbeddings

    emb = hf_embeddings
    assert isinstance(emb, HuggingFaceEmbeddings)
    assert emb.model_name == model_path
    vec = emb.embed_query("a kit fox")
    assert len(vec) == 384
