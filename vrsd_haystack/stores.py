"""The Haystack retrievers whose documents ``DiverseRanker`` was tested on, as store records
(``vrsd_kit.stores.StoreRecord``, the shape both other adapters use).

The ranker reads nothing from a store: it takes the embeddings the retriever returns
with the documents. A record says how to ask each retriever for them and which
client version the tests ran against; the docs' store table shows them as the
Haystack column. A retriever not listed works the same if it returns embeddings.
"""

from __future__ import annotations

from vrsd_kit.stores import StoreRecord

RETRIEVERS: tuple[StoreRecord, ...] = (
    StoreRecord(
        name="in_memory", family="in memory",
        module="haystack.components.retrievers.in_memory.embedding_retriever",
        class_name="InMemoryEmbeddingRetriever", client="haystack-ai", tested="==3.4.0",
        vectors="`return_embedding=True`",
    ),
    StoreRecord(
        name="qdrant", family="Qdrant",
        module="haystack_integrations.components.retrievers.qdrant.retriever",
        class_name="QdrantEmbeddingRetriever", client="qdrant-haystack", tested="==13.1.0",
        vectors="`return_embedding=True`", tested_on="local mode",
    ),
    StoreRecord(
        name="chroma", family="Chroma",
        module="haystack_integrations.components.retrievers.chroma.retriever",
        class_name="ChromaEmbeddingRetriever", client="chroma-haystack", tested="==5.0.0",
        vectors="always returned with the documents",
    ),
)
