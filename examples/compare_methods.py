"""Every selection method side by side, through the usual ``as_retriever`` call.

    python examples/compare_methods.py ["your question"]

Install (from a checkout; torch first, as the README's Install says):

    pip install -e ".[langchain-embeddings]"

``DiverseVectorStore(store).as_retriever(search_type=..., search_kwargs=...)``
is LangChain's familiar retriever call with the ``vrsd_core`` methods as extra
search types. For one question over the paraphrase corpus this prints, per
method, the set's Sim. (cosine of the sum of the picked vectors with the query;
higher is more relevant as a whole), Div. (mean pairwise cosine; lower is more
diverse) and the picked passage ids.
"""

from __future__ import annotations

import os

# The bundled model loads from disk: no download, so no progress bars either.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys

import numpy as np
from langchain_core.vectorstores import InMemoryVectorStore

from vrsd_cli.demo import load_corpus
from vrsd_core import metrics
from vrsd_langchain import DiverseVectorStore, default_embeddings

QUESTION = "What happens to my sleep when I drink coffee or alcohol?"
K, FETCH_K = 5, 20
# search_type="complement" is the library's recommendation; "vrsd" the paper's greedy,
# with refine="swap" its 1-swap refinement (the same names as method= everywhere).
SEARCHES = [
    ("similarity", {}),
    ("complement", {}),
    ("vrsd", {}),
    ("vrsd", {"refine": "swap"}),
    ("mmr", {"lambda_mult": 0.3}),
    ("mmr", {"lambda_mult": 0.5}),
    ("mmr", {"lambda_mult": 0.7}),
    ("dpp", {"theta": 0.5}),
]


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else QUESTION
    embeddings = default_embeddings()
    passages = load_corpus()
    texts = [p.text for p in passages]
    vectors = dict(zip((p.id for p in passages), embeddings.embed_documents(texts), strict=True))
    store = DiverseVectorStore(InMemoryVectorStore(embeddings))
    store.add_texts(texts, ids=[p.id for p in passages])
    query = np.asarray(embeddings.embed_query(question))

    print(f"Question: {question}\n")
    print(f"{'search':<30} {'Sim.':>6} {'Div.':>6}  picked (in selection order)")
    for search_type, options in SEARCHES:
        if search_type == "similarity":  # the store's own search: vectors from our table
            kwargs = {"k": K}
        else:
            kwargs = {"k": K, "fetch_k": FETCH_K, **options}
        retriever = store.as_retriever(search_type=search_type, search_kwargs=kwargs)
        docs = retriever.invoke(question)
        picked = np.asarray([vectors[d.id] for d in docs])
        label = search_type + (" " if options else "") + ",".join(
            f"{k}={v}" for k, v in options.items())
        print(f"{label:<30} {metrics.sum_vector_similarity(query, picked):6.3f} "
              f"{metrics.intra_list_similarity(picked):6.3f}  {', '.join(d.id for d in docs)}")


if __name__ == "__main__":
    main()
