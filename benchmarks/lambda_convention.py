"""The same ``lambda_mult`` on four stores: the project's MMR against each store's own.

    .venv/bin/python benchmarks/lambda_convention.py ["question"] [--plot PATH]

The demo corpus goes into InMemoryVectorStore, FAISS, Chroma and Qdrant (local
mode). For lambda_mult in 0, 0.5, 1 it prints the ids picked by
``DiverseVectorStore(store).as_retriever(search_type="mmr")`` (the core's MMR,
LangChain's meaning: 1 = relevance only) and by the store's own
``max_marginal_relevance_search`` with the same value, and plots how many of each
set's picks plain top-k also picks (LangChain's meaning: all of them at 1).

    --plot PATH    the plot (default: results/lambda_convention.png)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from vrsd_cli.demo import load_corpus  # noqa: E402
from vrsd_eval.report import bar_panels  # noqa: E402
from vrsd_langchain import DiverseVectorStore, default_embeddings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

QUESTION = "Will an afternoon coffee keep me awake at night?"
K, FETCH_K = 4, 12
LAMBDAS = (0.0, 0.5, 1.0)


def build_stores(texts: list[str], ids: list[str], embeddings: Any, tmp: str) -> dict[str, Any]:
    import uuid

    from langchain_chroma import Chroma
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient, models

    metas = [{"pid": i} for i in ids]
    memory = InMemoryVectorStore(embeddings)
    memory.add_texts(texts, metadatas=metas, ids=ids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        faiss = FAISS.from_texts(texts, embeddings, metadatas=metas, ids=ids,
                                 distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
                                 normalize_L2=True)
    chroma = Chroma("lam", embeddings, persist_directory=os.path.join(tmp, "chroma"),
                    collection_metadata={"hnsw:space": "cosine"})
    chroma.add_texts(texts, metadatas=metas, ids=ids)
    client = QdrantClient(path=os.path.join(tmp, "qdrant"))
    client.create_collection("lam", vectors_config=models.VectorParams(
        size=384, distance=models.Distance.COSINE))
    qdrant = QdrantVectorStore(client=client, collection_name="lam", embedding=embeddings)
    qdrant.add_texts(texts, metadatas=metas,
                     ids=[str(uuid.uuid5(uuid.NAMESPACE_URL, i)) for i in ids])
    return {"InMemory": memory, "FAISS": faiss, "Chroma": chroma, "Qdrant local": qdrant}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("question", nargs="?", default=QUESTION)
    ap.add_argument("--plot", type=Path, default=ROOT / "results" / "lambda_convention.png")
    args = ap.parse_args()
    question = args.question
    passages = load_corpus()
    embeddings = default_embeddings()
    shared: dict[str, dict[str, float]] = {}  # "store, lambda" -> row -> picks in top-k
    with tempfile.TemporaryDirectory() as tmp:
        stores = build_stores([p.text for p in passages], [p.id for p in passages],
                              embeddings, tmp)
        ranked = [d.metadata["pid"] for d in stores["InMemory"].similarity_search(question, k=K)]
        top = set(ranked)
        print(f"Question: {question}\nk={K}, fetch_k={FETCH_K}; ids in selection order\n")
        print("| store | lambda_mult | this project's MMR (vrsd_core) "
              "| store's own max_marginal_relevance_search |")
        print("|---|---:|---|---|")
        for name, store in stores.items():
            for lam in LAMBDAS:
                ours = DiverseVectorStore(store).as_retriever(
                    search_type="mmr",
                    search_kwargs={"k": K, "fetch_k": FETCH_K, "lambda_mult": lam},
                ).invoke(question)
                own = store.max_marginal_relevance_search(
                    question, k=K, fetch_k=FETCH_K, lambda_mult=lam)
                print(f"| {name} | {lam} | {', '.join(d.metadata['pid'] for d in ours)} "
                      f"| {', '.join(d.metadata['pid'] for d in own)} |")
                shared[f"{name}, {lam}"] = {
                    "this project's MMR": len(top & {d.metadata["pid"] for d in ours}),
                    "store's own MMR": len(top & {d.metadata["pid"] for d in own})}
        print(f"\nplain top-{K}: {', '.join(ranked)}")
    path = bar_panels([(f"picks shared with plain top-{K}, by store and lambda_mult",
                        "picks", shared)], args.plot)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
