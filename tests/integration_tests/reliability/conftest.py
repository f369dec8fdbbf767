"""Fixtures for the reliability tests: the bundled model (loaded once), a small
real corpus, and Chroma's own server on 127.0.0.1 with a temporary data dir.

The server fixture is session-scoped: it is started once (``chroma run``),
waited for (heartbeat, bounded), and stopped at the end (SIGTERM, SIGKILL
after a timeout). Tests that stop or freeze it must leave it running.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Helper modules beside this file (pytest runs with --import-mode=importlib,
# which does not put test folders on sys.path).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chroma_server import ChromaServer, bounded_http_client  # noqa: E402

CORPUS_SIZE = 200
LC_COLLECTION = "vrsd-reliability-lc"
LI_COLLECTION = "vrsd-reliability-li"


@pytest.fixture(scope="session")
def corpus(arc_da) -> tuple[list[str], list[str], list[dict]]:
    """(ids, texts, metadatas): the first CORPUS_SIZE ARC-DA corpus records."""
    ids = list(arc_da.corpus_ids[:CORPUS_SIZE])
    texts = list(arc_da.corpus[:CORPUS_SIZE])
    metas = [{"source": "arc_da", "row": i} for i in range(CORPUS_SIZE)]
    return ids, texts, metas


@pytest.fixture(scope="session")
def queries(arc_da) -> list[str]:
    """A small set of distinct real queries, repeated by the load tests."""
    return list(arc_da.queries[:20])


@pytest.fixture(scope="session")
def hf_embeddings(model_path):
    """LangChain embeddings on the bundled model (loaded once per session)."""
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(model_name=model_path)


@pytest.fixture(scope="session")
def embeddings(hf_embeddings):
    """The real model behind LangChain's cache: each distinct text is encoded once,
    so query-heavy tests measure retrieval and reranking, not the encoder."""
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore

    return CacheBackedEmbeddings.from_bytes_store(
        hf_embeddings, InMemoryByteStore(), namespace="minilm", query_embedding_cache=True,
        key_encoder="sha256",
    )


@pytest.fixture(scope="session")
def li_embed_model(model_path):
    """LlamaIndex embeddings on the bundled model (loaded once per session)."""
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=model_path)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """Chroma's own server on 127.0.0.1:<free port>, data in a temporary dir."""
    server = ChromaServer(tmp_path_factory.mktemp("chroma") / "data")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def live_chroma(chroma_server):
    """The session server, guaranteed running (restarted if a test left it down)."""
    if not chroma_server.running:
        chroma_server.start()
    else:
        chroma_server.thaw()
    yield chroma_server
    if not chroma_server.running:
        chroma_server.start()
    else:
        chroma_server.thaw()


@pytest.fixture(scope="session")
def chroma_client(chroma_server):
    """An HttpClient whose requests time out (chromadb's default is never)."""
    return bounded_http_client(chroma_server)


@pytest.fixture(scope="session")
def lc_chroma(chroma_client, corpus, corpus_vectors, embeddings):
    """``langchain_chroma.Chroma`` over the server, the corpus added once (cosine space)."""
    from langchain_chroma import Chroma

    ids, texts, metas = corpus
    store = Chroma(
        collection_name=LC_COLLECTION,
        embedding_function=embeddings,
        client=chroma_client,
        collection_metadata={"hnsw:space": "cosine"},
    )
    store.add_texts(texts, metadatas=metas, ids=ids)  # vectors from the embeddings cache
    return store


@pytest.fixture(scope="session")
def corpus_vectors(corpus, embeddings) -> list[list[float]]:
    """The corpus embedded once by the bundled model (cached: stores built later reuse it)."""
    return embeddings.embed_documents(corpus[1])


@pytest.fixture(scope="session")
def in_memory_store(corpus, corpus_vectors, embeddings):
    """An embedded ``InMemoryVectorStore`` with the corpus (vectors from the cache).

    Shared by the session: tests must only read it."""
    from langchain_core.vectorstores import InMemoryVectorStore

    ids, texts, metas = corpus
    store = InMemoryVectorStore(embeddings)
    store.add_texts(texts, metadatas=metas, ids=ids)
    return store


@pytest.fixture(scope="session")
def query_bundles(queries, embeddings):
    """LlamaIndex QueryBundles carrying the same model's query vectors (no re-encoding)."""
    from llama_index.core.schema import QueryBundle

    return [QueryBundle(query_str=q, embedding=embeddings.embed_query(q)) for q in queries]


@pytest.fixture(scope="session")
def li_chroma_index(chroma_client, corpus, corpus_vectors, li_embed_model):
    """A LlamaIndex ``VectorStoreIndex`` over a ChromaVectorStore on the server.

    The nodes carry the corpus vectors already computed (same model), so the
    index embeds nothing at build time.
    """
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.chroma import ChromaVectorStore

    ids, texts, metas = corpus
    collection = chroma_client.get_or_create_collection(
        LI_COLLECTION, metadata={"hnsw:space": "cosine"}
    )
    vector_store = ChromaVectorStore(chroma_collection=collection)
    nodes = [
        TextNode(id_=i, text=t, metadata=m, embedding=v)
        for i, t, m, v in zip(ids, texts, metas, corpus_vectors, strict=True)
    ]
    storage = StorageContext.from_defaults(vector_store=vector_store)
    VectorStoreIndex(nodes, storage_context=storage, embed_model=li_embed_model)
    return VectorStoreIndex.from_vector_store(vector_store, embed_model=li_embed_model)


@pytest.fixture(scope="session")
def bounded_client_factory():
    """``bounded_http_client`` for tests that build their own clients."""
    return bounded_http_client
