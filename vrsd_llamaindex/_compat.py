"""Where the LlamaIndex adapter reaches past the public API outside its store records:
the settings' model and a vector index retriever's model and store. Each read is a
function below and an entry of ``PRIVATE_MEMBERS`` (``vrsd_kit.stores.PrivateMember``)."""

from __future__ import annotations

from typing import Any

from llama_index.core.indices.vector_store.retrievers.retriever import VectorIndexRetriever
from llama_index.core.settings import Settings

from vrsd_kit.stores import private_members

PRIVATE_MEMBERS = private_members("llama-index-core", "==0.14.25", {
    "Settings._embed_model": "whether a model was set: the public Settings.embed_model "
    "resolves an unset one to OpenAI (a network call, not the index's model); missing: "
    "taken as unset",
    "VectorIndexRetriever._embed_model": "the index's own model, the default embed_model of "
    "vrsd_llamaindex.DiverseRerankRetriever; missing: Settings.embed_model",
    "VectorIndexRetriever._vector_store": "the index's store, to read candidate vectors from "
    "and to query through a view that returns them; missing: the nodes are embedded again "
    "(reembed policy)",
})


def settings_embed_model_is_set() -> bool:
    """``Settings.embed_model`` was set (reading the public property would resolve an
    unset one to LlamaIndex's default)."""
    return getattr(Settings, "_embed_model", None) is not None


def index_embed_model(retriever: Any) -> Any:
    """The model of a ``VectorIndexRetriever`` (None for any other retriever)."""
    if not isinstance(retriever, VectorIndexRetriever):
        return None
    return getattr(retriever, "_embed_model", None)


def index_vector_store(retriever: Any) -> Any:
    """The store of a ``VectorIndexRetriever`` (None for any other retriever)."""
    if not isinstance(retriever, VectorIndexRetriever):
        return None
    return getattr(retriever, "_vector_store", None)


def replace_index_vector_store(retriever: VectorIndexRetriever, store: Any) -> None:
    """Make ``retriever`` (a per-call copy) query ``store``."""
    retriever._vector_store = store
