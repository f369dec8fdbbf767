"""The framework adapters, listed once.

Whatever enumerates the adapters reads ``ADAPTERS``: the docs' store table (one
column per adapter), the store tests (one set of real-store cases per adapter),
the checks of the private members each reads. Each adapter's ``__init__`` calls
``register(__name__)``, so the core skips its frames, and its framework's, when
it blames a warning on the user's line. A new adapter is a package
``vrsd_<name>`` with its row here, its extra in pyproject.toml, and its store
cases in ``tests/helpers/store_cases.py``.

Rows name modules as text: the kit imports no adapter.
"""

from __future__ import annotations

from dataclasses import dataclass

from vrsd_core import register_internal_package


@dataclass(frozen=True, kw_only=True)
class Adapter:
    """One framework adapter.

    Attributes:
        name: its extra (``pip install 'vrsd[<name>]'``) and its key in the store tests.
        package: the package, ``vrsd_<name>``.
        framework: the framework as the docs name it (the store table's column).
        frames: top-level modules a user's call passes through on its way to the core
            (the framework's, pydantic's), prefixes as in ``register_internal_package``.
        records: ``"module:NAME"``, its tuple of store records (``vrsd_kit.stores.StoreRecord``).
        fallback: what it does with a store it has no record for (the table's last row).
        compat: its one module of the framework's other private members, whose
            ``PRIVATE_MEMBERS`` lists them ("" = none).
    """

    name: str
    package: str
    framework: str
    frames: tuple[str, ...]
    records: str
    fallback: str
    compat: str = ""


ADAPTERS: tuple[Adapter, ...] = (
    Adapter(
        name="langchain", package="vrsd_langchain", framework="LangChain",
        frames=("langchain_core", "pydantic"), records="vrsd_langchain.stores:FAST_PATHS",
        fallback="`similarity_search_by_vector`, then the candidates' text re-embedded "
                 "(cached by content)",
        compat="vrsd_langchain._compat",
    ),
    Adapter(
        name="llamaindex", package="vrsd_llamaindex", framework="LlamaIndex",
        frames=("llama_index", "pydantic"), records="vrsd_llamaindex.stores:STORE_PATHS",
        fallback="`embed_model.get_text_embedding_batch` on the nodes without vectors",
        compat="vrsd_llamaindex._compat",
    ),
    Adapter(
        name="haystack", package="vrsd_haystack", framework="Haystack",
        frames=("haystack",), records="vrsd_haystack.stores:RETRIEVERS",
        fallback="any retriever that returns embeddings; documents without one need "
                 "`DiverseRanker(document_embedder=...)`",
    ),
)


def adapter(package: str) -> Adapter:
    """The row of ``package`` (``"vrsd_langchain"``), or ValueError naming it."""
    for row in ADAPTERS:
        if row.package == package:
            return row
    raise ValueError(
        f"package: {package!r} is not in vrsd_kit.adapters.ADAPTERS "
        f"({', '.join(row.package for row in ADAPTERS)})"
    )


def register(package: str) -> Adapter:
    """For an adapter's ``__init__``: its row, with its package and ``frames``
    registered with the core (``vrsd_core.register_internal_package``)."""
    row = adapter(package)
    register_internal_package(row.package, *row.frames)
    return row
