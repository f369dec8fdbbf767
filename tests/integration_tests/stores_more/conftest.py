"""Milvus Lite, LanceDB and (for LlamaIndex) Qdrant local: real embedded stores in a
temporary directory, each holding the first 200 ARC-DA texts with their vectors
computed once by the bundled model, and a spy on the model each store queries with."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from tests.helpers.fixtures import (  # noqa: F401  (fixtures, registered by name)
    arc_corpus_fixture,
    lc_embeddings_fixture,
    li_embed_model_fixture,
)
from tests.helpers.spies import SpyEmbeddings, make_li_spy, one_torch_thread
from tests.helpers.store_cases import cases_in

DIM = 384


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    with one_torch_thread():
        yield


@pytest.fixture(scope="session")
def corpus_vectors(corpus, lc_embeddings) -> np.ndarray:
    return np.asarray(lc_embeddings.embed_documents([d.page_content for d in corpus]))


@pytest.fixture(scope="session")
def queries(arc_da) -> list[str]:
    return arc_da.queries[:4]


# --- LangChain ------------------------------------------------------------------


@pytest.fixture(scope="session")
def lc_milvus(tmp_path_factory, corpus, corpus_vectors, lc_embeddings) -> Any:
    from langchain_milvus import Milvus

    uri = str(tmp_path_factory.mktemp("milvus") / "lc.db")
    store = Milvus(
        SpyEmbeddings(lc_embeddings),
        # db_name: langchain-milvus otherwise reads a database name out of the file path
        connection_args={"uri": uri, "db_name": "default"},
        collection_name="arc", auto_id=False, drop_old=True,
        index_params={"metric_type": "COSINE", "index_type": "FLAT"},
    )
    store.add_embeddings([d.page_content for d in corpus], corpus_vectors.tolist(),
                         [dict(d.metadata) for d in corpus], ids=[d.id for d in corpus])
    return store


@pytest.fixture(scope="session")
def lc_lancedb(tmp_path_factory, corpus, corpus_vectors, lc_embeddings) -> Any:
    from langchain_community.vectorstores import LanceDB

    spy = SpyEmbeddings(lc_embeddings)
    store = LanceDB(embedding=spy, uri=str(tmp_path_factory.mktemp("lancedb")),
                    table_name="arc", distance="cosine")
    # LanceDB.add_texts embeds through the store's embeddings: count it, then reset.
    store.add_texts([d.page_content for d in corpus], [dict(d.metadata) for d in corpus],
                    ids=[d.id for d in corpus])
    spy.reset()
    return store


def stored_vectors(kind, store, docs) -> np.ndarray:
    """The vectors ``docs`` have in the LangChain store (``kind`` "milvus" or "lancedb"),
    read through the store's own client, in the order of ``docs``."""
    if kind == "milvus":
        pks = [d.metadata["pk"] for d in docs]
        got = store.client.query(store.collection_name, filter=f"pk in {pks}",
                                 output_fields=["pk", "vector"])
        by_pk = {r["pk"]: r["vector"] for r in got}
        return np.asarray([by_pk[p] for p in pks], dtype=np.float64)
    table = store.get_table().to_arrow()
    by_row = {m["row"]: v for m, v in zip(table["metadata"].to_pylist(),
                                          table["vector"].to_pylist(), strict=True)}
    return np.asarray([by_row[d.metadata["row"]] for d in docs], dtype=np.float64)


# --- LlamaIndex -----------------------------------------------------------------


def _nodes(corpus, corpus_vectors):
    import uuid

    from llama_index.core.schema import TextNode

    return [
        TextNode(id_=str(uuid.uuid5(uuid.NAMESPACE_URL, d.id)), text=d.page_content,
                 metadata=dict(d.metadata), embedding=v.tolist())
        for d, v in zip(corpus, corpus_vectors, strict=True)
    ]


def _index(store, corpus, corpus_vectors, li_embed_model):
    from llama_index.core import VectorStoreIndex

    store.add(_nodes(corpus, corpus_vectors))
    spy = make_li_spy(li_embed_model)
    return VectorStoreIndex.from_vector_store(store, embed_model=spy), spy


@pytest.fixture(scope="session")
def li_qdrant(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(tmp_path_factory.mktemp("li_qdrant")))
    store = QdrantVectorStore(client=client, collection_name="arc")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(scope="session")
def li_lancedb(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    store = LanceDBVectorStore(uri=str(tmp_path_factory.mktemp("li_lancedb")), table_name="arc",
                               mode="overwrite")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(scope="session")
def li_milvus(tmp_path_factory, corpus, corpus_vectors, li_embed_model):
    from llama_index.vector_stores.milvus import MilvusVectorStore

    store = MilvusVectorStore(uri=str(tmp_path_factory.mktemp("li_milvus") / "li.db"),
                              dim=DIM, overwrite=True, collection_name="arc",
                              use_async_client=False,  # pymilvus 2.6: needs a running loop
                              db_name="default",  # else read out of the file path
                              similarity_metric="COSINE")
    return _index(store, corpus, corpus_vectors, li_embed_model)


@pytest.fixture(params=cases_in("llamaindex", "stores_more", prefix="li_"))
def li_case(request):
    index, spy = request.getfixturevalue(request.param)
    spy.reset()
    return request.param, index, spy
