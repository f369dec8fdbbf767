"""The bundled embedding model as a LangChain ``Embeddings``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_huggingface import HuggingFaceEmbeddings


def default_embeddings(**kwargs: Any) -> HuggingFaceEmbeddings:
    """``HuggingFaceEmbeddings`` on the bundled all-MiniLM-L6-v2 (offline, 384 dimensions).

    langchain-huggingface and the model are imported here, on first use, so
    ``import vrsd_langchain`` stays light. ``kwargs`` go to ``HuggingFaceEmbeddings``
    (e.g. ``encode_kwargs={"batch_size": 64}``). The model is read from its folder
    with ``local_files_only=True`` (in ``model_kwargs``, unless given there): no
    environment variable is set.

    Raises:
        ImportError: with the install command, if an extra is missing.
    """
    from vrsd_kit.bundled_model import bundled_model_path, import_from_extra, quiet_model_loading

    hf = import_from_extra("langchain_huggingface", "default_embeddings", "langchain-embeddings")
    path = bundled_model_path()
    model_kwargs = {"local_files_only": True, **(kwargs.pop("model_kwargs", None) or {})}
    with quiet_model_loading():
        return hf.HuggingFaceEmbeddings(model_name=path, model_kwargs=model_kwargs, **kwargs)


def warm_query_cache(
    embeddings: CacheBackedEmbeddings, queries: list[str], batch_size: int = 256
) -> int:
    """Put every uncached query of ``queries`` into the query cache; returns how many.

    ``embed_query`` encodes one text per call. When the underlying model embeds a
    query exactly like a document (``HuggingFaceEmbeddings`` without
    ``query_encode_kwargs``: the same ``encode`` call; or an embeddings object whose
    ``queries_as_documents`` is True), the missing queries are encoded in batches
    instead, which is many times faster on a CPU; otherwise they go through
    ``embed_query`` one by one.
    """
    store = embeddings.query_embedding_store
    if store is None or not queries:
        return 0
    unique = list(dict.fromkeys(queries))
    missing = [q for q, v in zip(unique, store.mget(unique), strict=True) if v is None]
    base = embeddings.underlying_embeddings
    same_path = getattr(base, "queries_as_documents", False) is True or (
        type(base).__name__ == "HuggingFaceEmbeddings"
        and not getattr(base, "query_encode_kwargs", None))
    for i in range(0, len(missing), batch_size):
        chunk = missing[i : i + batch_size]
        if same_path:
            store.mset(list(zip(chunk, base.embed_documents(chunk), strict=True)))
        else:
            for q in chunk:
                embeddings.embed_query(q)
    return len(missing)
