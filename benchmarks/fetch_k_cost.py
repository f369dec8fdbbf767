"""What a larger pool costs where a user feels it: ``DiverseRetriever.invoke`` at fetch_k 20, 50
and 100, on a store that hands out its vectors and on one that makes the retriever
re-embed the candidates.

A LangChain ``DiverseRetriever`` (the default method, k = 4) with the bundled
all-MiniLM-L6-v2 (``vrsd_langchain.default_embeddings()``, run for real: every query is
embedded, and so is every re-embedded candidate) over 2,000 HotpotQA passages
(``vrsd_eval.evidence``; their stored vectors are the same model's, from
``vrsd_eval.disk_embeddings``' cache), in three stores:

- ``FAISS`` (flat index) and ``InMemoryVectorStore``: their fast paths read the
  candidates' stored vectors (``vrsd_langchain.stores``), so only the query is embedded;
- ``FAISS`` over an IVF index without a direct map (the same vectors, every list
  probed): it cannot hand out its vectors, so the retriever re-embeds the fetched
  candidates' texts (``vrsd_langchain.candidates``' fallback) through its cache
  (``vrsd_langchain.EmbeddingCache``, keyed by content).

Two cases per store: a **new question** (the re-embedding cache and the per-process
caches of tokenised texts emptied before the call, as for passages never seen) and a
**repeated question** (the same call just made: cached vectors and words). Every
question runs every (store, fetch_k, case) interleaved in one process, in a rotating
order; BLAS and torch on one thread; the garbage collector off while timing; wall clock.
Reported: median milliseconds per call, and the ratio of each fetch_k's median to
fetch_k 20's; the load average before and after.

    .venv/bin/python benchmarks/fetch_k_cost.py --json docs/results/fetch_k_cost.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from langchain_core.embeddings import Embeddings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's packages, whatever the environment installed

FETCH_KS = (20, 50, 100)
K = 4
CASES = ("new question", "repeated question")
STORES = ("FAISS (vectors returned)", "InMemoryVectorStore (vectors returned)",
          "FAISS IVF (re-embeds)")


class Stored(Embeddings):
    """The passages' vectors, computed once by the same model, to build the stores with
    (the retrievers embed with the model itself)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError("the retrievers embed the query with the model")


def build_stores(passages: int) -> tuple[dict[str, Any], list[str]]:
    """(store label -> store, the questions): the three stores over the same passages."""
    import faiss
    import numpy as np
    from langchain_community.vectorstores import FAISS
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_eval.evidence import load_evidence_corpora

    plain = load_evidence_corpora()[0]
    texts = plain.texts[:passages]
    vectors = np.asarray(cached_embeddings().embed_documents(texts), dtype=np.float32)
    lookup = Stored(dict(zip(texts, vectors.tolist(), strict=True)))
    flat = FAISS.from_texts(texts, lookup)
    memory = InMemoryVectorStore(embedding=lookup)
    memory.add_texts(texts)
    ivf = FAISS.from_texts(texts, lookup)
    lists = 32
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(vectors.shape[1]), vectors.shape[1], lists)
    index.train(vectors)
    index.add(vectors)  # the same order: index_to_docstore_id still maps position -> doc
    index.nprobe = lists  # every list probed: the same top-n as the flat index
    ivf.index = index
    stores = dict(zip(STORES, (flat, memory, ivf), strict=True))
    return stores, plain.questions


def forget(retriever: Any) -> None:
    """A question never seen: the re-embedding cache and the tokenised-text caches emptied."""
    from vrsd_kit import lexical

    retriever.cache.clear()
    lexical.read_text.cache_clear()


def measure(stores: dict[str, Any], questions: list[str], embeddings: Any
            ) -> dict[tuple[str, int, str], list[float]]:
    from vrsd_langchain import DiverseRetriever

    retrievers = {(store, n): DiverseRetriever(vectorstore=stores[store], embeddings=embeddings,
                                               k=K, fetch_k=n, reembed="allow")
                  for store in stores for n in FETCH_KS}
    configs = [(store, n, case) for store in stores for n in FETCH_KS for case in CASES]
    times: dict[tuple[str, int, str], list[float]] = {c: [] for c in configs}
    for retriever in retrievers.values():  # every path warm once (imports, first calls)
        retriever.invoke(questions[-1])
    gc.disable()
    try:
        for qi, question in enumerate(questions):
            shift = qi % len(configs)
            for store, n, case in configs[shift:] + configs[:shift]:
                retriever = retrievers[store, n]
                if case == "new question":
                    forget(retriever)
                else:
                    retriever.invoke(question)  # untimed: the same question just asked
                start = time.perf_counter()
                retriever.invoke(question)
                times[store, n, case].append(time.perf_counter() - start)
    finally:
        gc.enable()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results file (docs/results/fetch_k_cost.json)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch

    from vrsd_langchain import default_embeddings

    torch.set_num_threads(1)
    embeddings = default_embeddings()
    stores, questions = build_stores(args.passages)
    load_before = os.getloadavg()
    times = measure(stores, questions[: args.questions], embeddings)
    load_after = os.getloadavg()
    ms = {key: statistics.median(values) * 1000 for key, values in times.items()}
    rows: list[dict[str, Any]] = []
    for store in STORES:
        for case in CASES:
            at = {n: ms[store, n, case] for n in FETCH_KS}
            rows.append({"store": store, "case": case,
                         "ms": {str(n): round(at[n], 2) for n in FETCH_KS},
                         "ratio": {str(n): round(at[n] / at[FETCH_KS[0]], 2)
                                   for n in FETCH_KS[1:]}})
    print(f"DiverseRetriever.invoke, k={K}, bundled all-MiniLM-L6-v2, {args.passages} passages, "
          f"{min(args.questions, len(questions))} questions interleaved, one BLAS/torch thread; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    print("| store | case | " + " | ".join(f"fetch_k {n} (ms)" for n in FETCH_KS) + " | "
          + " | ".join(f"{n} / {FETCH_KS[0]}" for n in FETCH_KS[1:]) + " |")
    print("|---|---|" + "---:|" * (2 * len(FETCH_KS) - 1))
    for row in rows:
        print(f"| {row['store']} | {row['case']} | "
              + " | ".join(f"{row['ms'][str(n)]:.1f}" for n in FETCH_KS) + " | "
              + " | ".join(f"{row['ratio'][str(n)]:.2f}×" for n in FETCH_KS[1:]) + " |")
    if args.json is not None:
        data = {"command": f".venv/bin/python benchmarks/fetch_k_cost.py --json {args.json}",
                "k": K, "fetch_ks": list(FETCH_KS), "passages": args.passages,
                "questions": min(args.questions, len(questions)),
                "load_average": [round(load_before[0], 2), round(load_after[0], 2)],
                "cpus": os.cpu_count(), "rows": rows}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
