"""LlamaIndex over Qdrant local, LanceDB and Milvus Lite: where the candidates' vectors come
from, measured as texts re-embedded per query (0 everywhere), and the picks equal
``vrsd_core.select`` on the same candidates with the model's own vectors.

* Qdrant: ``DiverseRerankRetriever`` queries through ``stores.with_vectors`` (``query_points``
  with ``with_vectors``): vectors in the same request.
* LanceDB: the store's own query already puts each row's vector on ``node.embedding``.
* Milvus: its query returns nodes without vectors; the retriever reads them from the
  store by id (``get_nodes``), one more request, no re-embedding.
"""

from __future__ import annotations

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode

from tests.helpers.words import default_selection
from vrsd_llamaindex import DiverseRerankRetriever

pytestmark = pytest.mark.slow

K, FETCH_K = 4, 20


def test_only_the_query_is_embedded_and_picks_equal_core(li_case, queries, corpus_vectors):
    name, index, spy = li_case
    retriever = DiverseRerankRetriever(index.as_retriever(), top_n=K, fetch_k=FETCH_K)
    plain = index.as_retriever(similarity_top_k=FETCH_K, embed_model=spy._inner)
    for query in queries[:3]:
        spy.reset()
        got = retriever.retrieve(query)
        assert spy.counts == (1, 0), name  # (queries embedded, texts re-embedded)
        hits = plain.retrieve(query)
        qvec = np.asarray(spy._inner.get_query_embedding(query))
        vecs = corpus_vectors[[h.node.metadata["row"] for h in hits]]
        texts = [h.node.get_content(metadata_mode=MetadataMode.NONE) for h in hits]
        sel = default_selection(query, texts, qvec, vecs, K)
        assert [h.node.metadata["row"] for h in got] == [
            hits[i].node.metadata["row"] for i in sel.indices
        ]


def test_where_the_vectors_come_from(li_case, queries):
    from vrsd_llamaindex.stores import VectorsAlongside, with_vectors

    name, index, _ = li_case
    store = index.vector_store
    one_request = isinstance(with_vectors(store), VectorsAlongside) or name == "li_lancedb"
    assert one_request == (name in ("li_qdrant", "li_lancedb"))
    if name == "li_lancedb":  # the store's own nodes carry their vectors
        hits = index.as_retriever(similarity_top_k=3).retrieve(queries[0])
        assert all(h.node.embedding for h in hits)
