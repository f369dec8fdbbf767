"""``inspect_store`` for any store the command line meets: a ``vrsd index`` folder, or a
LangChain, LlamaIndex or Haystack store, each read by its adapter's own inspection
(``vrsd_langchain.inspect_store``, ``vrsd_llamaindex.inspect_index``,
``vrsd_haystack.inspect_store``). Frameworks are recognised only once their modules
are imported (by the caller, who built the store), so inspecting a LangChain store
never imports LlamaIndex."""

from __future__ import annotations

import os
import sys
from typing import Any

from vrsd_kit.inspection import DEFAULT_SAMPLE, Inspection, Source, SourceSpec, inspect_source
from vrsd_kit.inspection.run import Questions


def _is(obj: Any, module: str, name: str) -> bool:
    """Whether ``obj`` is a ``module.name``, the module being imported already."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def source_for(store: Any, embedder: Any, k: int | None, fetch_k: int | None,
               source: SourceSpec, cache_dir: str | os.PathLike[str] | None = None) -> Source:
    """The adapter's source reading ``store``; ValueError naming ``store`` for anything
    else."""
    if isinstance(store, str | os.PathLike):
        if embedder is not None:
            raise ValueError("embedder: a vrsd index folder records its model; give none")
        from ..indexing import IndexSource

        return IndexSource(store, k, fetch_k, source, cache_dir)
    if (_is(store, "vrsd_langchain.retriever", "DiverseRetriever")
            or _is(store, "langchain_core.vectorstores.base", "VectorStore")):
        from vrsd_langchain.inspection import langchain_source

        return langchain_source(store, embedder, k, fetch_k, source)
    if _is(store, "llama_index.core.indices.base", "BaseIndex"):
        from vrsd_llamaindex.inspection import LlamaIndexSource

        return LlamaIndexSource(store, embedder, k, fetch_k, source)
    if "haystack" in sys.modules:
        from vrsd_haystack.inspection import HaystackSource, is_haystack_store

        if is_haystack_store(store):
            return HaystackSource(store, embedder, k, fetch_k, source)
    raise ValueError(
        f"store: expected a vrsd index folder, a LangChain VectorStore or DiverseRetriever, a "
        f"LlamaIndex index, or a Haystack InMemoryDocumentStore or embedding retriever; got "
        f"{type(store).__name__}")


def inspect_store(
    store: Any,
    questions: Questions = None,
    *,
    k: int | None = None,
    fetch_k: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    source: SourceSpec = "source",
    embedder: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    max_per_group: int | None = None,
) -> Inspection:
    """Top-k against the default (``vrsd_core.DEFAULT_METHOD``) on ``store``'s candidates
    for every question: how crowded top-k is and what the default changes.

    Args:
        store: a folder built by ``vrsd index`` (a path); a LangChain ``VectorStore``
            or ``vrsd_langchain.DiverseRetriever``; a LlamaIndex index; a Haystack
            ``InMemoryDocumentStore`` or the embedding retriever of a pipeline (what
            each adapter's own inspection takes).
        questions, k, fetch_k, sample, seed, source, embedder, progress,
            max_per_group: as the adapters' (``vrsd_langchain.inspect_store``);
            ``source`` defaults to ``"source"``, what ``vrsd index`` records.
        cache_dir: the embedding cache of a ``vrsd index`` folder (see ``vrsd index``).

    Raises:
        ValueError: naming the argument, as the adapters' calls do.
    """
    return inspect_source(lambda: source_for(store, embedder, k, fetch_k, source, cache_dir),
                          questions, k=k, fetch_k=fetch_k, sample=sample, seed=seed,
                          progress=progress, max_per_group=max_per_group)
