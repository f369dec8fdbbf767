"""A LlamaIndex query engine that keeps relevant *and* diverse nodes.

    python examples/llamaindex_query_engine.py ["your question"]

Install (from a checkout; torch first, as the README's Install says):

    pip install -e ".[llamaindex-embeddings]"

``VectorStoreIndex`` over the paraphrase corpus; the query engine retrieves
20 nodes by similarity and ``DiversePostprocessor`` keeps 4 with the recommended
default method (``vrsd_core.DEFAULT_METHOD``). The sources are printed with their
relevance and selection rank.

The LLM: ``MockLLM`` by default (offline; it echoes the prompt it was given,
so the output shows exactly what a real model would read). To use a real one
set ``VRSD_LLAMAINDEX_LLM`` to ``module:Class[:model]``, e.g.
``llama_index.llms.openai:OpenAI:gpt-4o-mini`` (with
``llama-index-llms-openai`` installed and ``OPENAI_API_KEY`` set).
"""

from __future__ import annotations

import os

# The bundled model loads from disk: no download, so no progress bars either.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import importlib
import sys

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.llms import LLM, MockLLM

from vrsd_cli.demo import load_corpus
from vrsd_llamaindex import DiversePostprocessor, default_embed_model

QUESTION = "Will an afternoon coffee keep me awake at night?"


def configured_llm() -> LLM:
    """The LLM named by ``VRSD_LLAMAINDEX_LLM`` (``module:Class[:model]``), else MockLLM."""
    spec = os.environ.get("VRSD_LLAMAINDEX_LLM")
    if not spec:
        return MockLLM()
    module, cls, *model = spec.split(":", 2)
    llm_class = getattr(importlib.import_module(module), cls)
    return llm_class(model=model[0]) if model else llm_class()


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else QUESTION
    embed_model = default_embed_model()
    docs = [Document(text=p.text, metadata={"id": p.id}) for p in load_corpus()]
    index = VectorStoreIndex.from_documents(docs, embed_model=embed_model)
    engine = index.as_query_engine(
        llm=configured_llm(),
        similarity_top_k=20,
        # vector_store: the candidates' stored vectors are read, not their text embedded again
        node_postprocessors=[DiversePostprocessor(top_n=4, embed_model=embed_model,
                                               vector_store=index.vector_store)],
    )
    response = engine.query(question)
    print(f"Question: {question}\n\nSources (DiversePostprocessor kept 4 of 20):")
    for hit in response.source_nodes:
        info = hit.node.metadata["vrsd"]
        print(f"  rank {info['rank']}  relevance {hit.score:+.3f} (cosine {info['cosine']:.3f}, "
              f"words {info['lexical']:.1f})  [{hit.node.metadata['id']}] "
              f"{hit.node.get_content()}")
    print(f"\nResponse:\n{response}")


if __name__ == "__main__":
    main()
