"""The bundled embedding model as a LangChain ``Embeddings``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_huggingface import HuggingFaceEmbeddings


def default_embeddings(**kwargs: Any) -> HuggingFaceEmbeddings:
    """``HuggingFaceEmbeddings`` on the bundled all-MiniLM-L6-v2 (offline, 384 dimensions).

    langchain-huggingface and the model are imported here, on first use, so
    ``import vrsd_langchain`` stays light. ``kwargs`` go to ``HuggingFaceEmbeddings``
    (e.g. ``encode_kwargs={"batch_size": 64}``).

    Raises:
        ImportError: with the install command, if an extra is missing.
    """
    from vrsd_kit.bundled_model import bundled_model_path, import_from_extra, quiet_model_loading

    hf = import_from_extra("langchain_huggingface", "default_embeddings", "langchain-embeddings")
    path = bundled_model_path()
    with quiet_model_loading():
        return hf.HuggingFaceEmbeddings(model_name=path, **kwargs)
