"""Both adapters against Chroma's own server (``chroma run``), over HTTP on loopback.

The reference for each result is ``vrsd_core.select`` run directly on what the
server returns for the same query vector (``collection.query`` with
embeddings): the adapters must add nothing and lose nothing on the way.
"""

from __future__ import annotations

import socket

import numpy as np
import pytest

from vrsd_core import select

pytestmark = pytest.mark.slow

QUERY_COUNT = 6


def _reference_ids(collection, qvec, k, fetch_k, method, **options):
    res = collection.query(query_embeddings=[qvec], n_results=fetch_k,
                           include=["embeddings", "documents"])
    ids = res["ids"][0]
    sel = select(np.asarray(qvec), np.asarray(res["embeddings"][0]), k, method=method,
                 **options)
    return [ids[i] for i in sel.indices], sel


def _listening_addresses(port: int) -> list[str]:
    """Local addresses of the sockets LISTENing on ``port`` (Linux /proc/net/tcp, tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            addr, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.append(addr)
    return found


def test_server_listens_on_loopback_only(chroma_server):
    assert chroma_server.host == "127.0.0.1"
    assert chroma_server.running and chroma_server.heartbeat()
    with socket.create_connection(("127.0.0.1", chroma_server.port), timeout=2):
        pass
    addresses = _listening_addresses(chroma_server.port)
    if not addresses:
        pytest.skip("no /proc/net/tcp here to read the listening address from")
    # 0100007F is 127.0.0.1 in /proc's little-endian hex: nothing on 0.0.0.0 or ::.
    assert set(addresses) == {"0100007F"}


@pytest.mark.parametrize(
    ("method", "options"),
    [("vrsd", {}), ("vrsd", {"refine": "swap"}), ("mmr", {"lambda_mult": 0.5}),
     ("dpp", {"theta": 0.5}), ("similarity", {})],
)
def test_langchain_retriever_over_chroma_server(lc_chroma, embeddings, queries, method,
                                                options):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=lc_chroma, k=4, fetch_k=20, method=method,
                              method_kwargs=options)
    for query in queries[:QUERY_COUNT]:
        docs = retriever.invoke(query)
        want, sel = _reference_ids(lc_chroma._collection, embeddings.embed_query(query), 4, 20,
                                   method, **options)
        assert [d.id for d in docs] == want
        ranks = [d.metadata["vrsd"]["rank"] for d in docs]
        assert ranks == list(range(1, len(docs) + 1)) or ranks == list(range(len(docs)))
        np.testing.assert_allclose([d.metadata["vrsd"]["relevance"] for d in docs],
                                   sel.relevance, atol=1e-5)
        assert all(d.metadata["source"] == "arc_da" for d in docs)


@pytest.mark.parametrize("method", ["vrsd", "mmr", "dpp"])
def test_llamaindex_postprocessor_over_chroma_server(li_chroma_index, li_embed_model,
                                                     query_bundles, method):
    from vrsd_llamaindex import DiversePostprocessor

    retriever = li_chroma_index.as_retriever(similarity_top_k=20)
    post = DiversePostprocessor(top_n=4, method=method, embed_model=li_embed_model,
                             vector_store=li_chroma_index.vector_store)
    collection = li_chroma_index.vector_store.client
    for bundle in query_bundles[:QUERY_COUNT]:
        nodes = retriever.retrieve(bundle)
        assert len(nodes) == 20
        out = post.postprocess_nodes(nodes, query_bundle=bundle)
        got = collection.get(ids=[n.node.node_id for n in nodes], include=["embeddings"])
        by_id = dict(zip(got["ids"], got["embeddings"], strict=True))
        vectors = np.asarray([by_id[n.node.node_id] for n in nodes])
        sel = select(np.asarray(bundle.embedding), vectors, 4, method=method)
        assert [n.node.node_id for n in out] == [nodes[i].node.node_id for i in sel.indices]
        np.testing.assert_allclose([n.score for n in out], sel.relevance, atol=1e-5)
        assert all(n.node.metadata["vrsd"]["method"] == method for n in out)
        assert all("vrsd" not in n.node.metadata for n in nodes)


def test_llamaindex_vrsd_retriever_over_chroma_server(li_chroma_index, li_embed_model,
                                                      query_bundles):
    """``vrsd_llamaindex.DiverseRerankRetriever`` wrapping the index's retriever: the same picks
    as the postprocessor on that retriever's fetch_k nodes."""
    from vrsd_llamaindex import DiversePostprocessor, DiverseRerankRetriever

    base = li_chroma_index.as_retriever(similarity_top_k=2)
    wrapped = DiverseRerankRetriever(base, top_n=3, fetch_k=15, embed_model=li_embed_model)
    post = DiversePostprocessor(top_n=3, embed_model=li_embed_model,
                             vector_store=li_chroma_index.vector_store)
    wide = li_chroma_index.as_retriever(similarity_top_k=15)
    for bundle in query_bundles[:QUERY_COUNT]:
        got = wrapped.retrieve(bundle)
        want = post.postprocess_nodes(wide.retrieve(bundle), query_bundle=bundle)
        assert [n.node.node_id for n in got] == [n.node.node_id for n in want]
        assert base.similarity_top_k == 2  # the caller's retriever is not changed
