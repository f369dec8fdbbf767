"""Session fixtures shared by the store conftests (Postgres, Milvus/LanceDB/Qdrant).

A conftest that wants them imports them by the names below; pytest registers them
under their ``name`` (``lc_embeddings``, ``li_embed_model``, ``corpus``), once per
conftest that imports them, exactly as if that conftest defined them itself.
"""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from tests.helpers.corpus import arc_documents
from tests.helpers.spies import cached_embeddings

ARC_CORPUS_SIZE = 200


@pytest.fixture(scope="session", name="lc_embeddings")
def lc_embeddings_fixture() -> Embeddings:
    """``vrsd_langchain.default_embeddings()`` behind an in-memory embeddings cache."""
    return cached_embeddings()


@pytest.fixture(scope="session", name="li_embed_model")
def li_embed_model_fixture():
    """``vrsd_llamaindex.default_embed_model()``: the bundled model for LlamaIndex."""
    from vrsd_llamaindex import default_embed_model

    return default_embed_model()


@pytest.fixture(scope="session", name="corpus")
def arc_corpus_fixture(arc_da) -> list[Document]:
    """The first ARC_CORPUS_SIZE ARC-DA texts as Documents (metadata ``row``, ``split``)."""
    return arc_documents(arc_da, ARC_CORPUS_SIZE)
