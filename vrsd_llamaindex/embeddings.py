"""The bundled embedding model as a LlamaIndex ``BaseEmbedding``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vrsd_kit.bundled_model import bundled_model_path, import_from_extra, quiet_model_loading

if TYPE_CHECKING:  # the import loads sentence-transformers and torch
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding


def default_embed_model(**kwargs: Any) -> HuggingFaceEmbedding:
    """``HuggingFaceEmbedding`` on the bundled all-MiniLM-L6-v2 (offline).

    Keyword arguments go to ``HuggingFaceEmbedding`` (e.g. ``embed_batch_size``).
    Imported lazily: importing ``vrsd_llamaindex`` does not load torch. The model is
    read from its folder with ``local_files_only=True`` (unless given): no environment
    variable is set.
    """
    hf = import_from_extra("llama_index.embeddings.huggingface", "default_embed_model",
                           "llamaindex-embeddings")
    path = bundled_model_path()
    with quiet_model_loading():
        return hf.HuggingFaceEmbedding(model_name=path, **{"local_files_only": True, **kwargs})
