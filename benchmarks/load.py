"""Load: what reranking costs on top of the store, per query and under concurrency.

For each store (an embedded ``InMemoryVectorStore`` and Chroma's own server,
``chroma run`` on 127.0.0.1 with a temporary data directory, reached over HTTP)
the same real corpus (ARC-DA, the paper's protocol) is indexed once and the
same queries are sent through LangChain retrievers:

- ``similarity``: the store's own ``as_retriever(search_type="similarity")``,
  top-k straight from the store: the baseline every ratio is relative to;
- ``similarity+vectors``: ``DiverseRetriever(method="similarity")``: fetch_k
  candidates *with their vectors*, top-k by cosine (the fetch overhead alone);
- ``vrsd``, ``mmr``, ``dpp``: ``DiverseRetriever`` over the same fetch_k candidates;
- ``store mmr``: the store's own ``search_type="mmr"`` (LangChain's MMR), for reference.

``postgres``: a real Postgres + pgvector (the PyPI package ``pgserver``, started in a
temporary directory, unix socket only) behind langchain-postgres ``PGVector``; its
``store mmr`` is ``PGVector.max_marginal_relevance_search``.

Query vectors are precomputed: every query is embedded once by the bundled
all-MiniLM-L6-v2 before timing and served from LangChain's
``CacheBackedEmbeddings`` afterwards, so the timings are retrieval + rerank,
not the encoder. Each setting runs every query sequentially (latency p50/p99)
and then with ``--workers`` threads sharing one retriever (throughput, QPS, the
median of ``--qps-rounds`` runs). Retrievers are interleaved (query by query for
latency, run by run for QPS) so that drift on a shared machine hits them alike.
Wall-clock time; on a busy machine absolute numbers move, ratios much less. Prints a
table per store and plots p50 latency and QPS per method and store (``--plot``).

Run: ``.venv/bin/python benchmarks/load.py [--stores memory chroma postgres] [--corpus 500]
[--queries 100] [--workers 8] [--qps-rounds 3] [--k 4] [--fetch-k 20]
[--plot results/load.png]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

HERE = Path(__file__).resolve().parent
SERVER_HELPER = HERE.parent / "tests" / "integration_tests" / "reliability" / "chroma_server.py"

BASELINE = "similarity"


def load_server_helper() -> ModuleType:
    """The tests' ``chroma_server`` module (one implementation of start/stop/timeouts)."""
    spec = importlib.util.spec_from_file_location("vrsd_bench_chroma_server", SERVER_HELPER)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {SERVER_HELPER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def build_retrievers(store: Any, k: int, fetch_k: int) -> dict[str, Any]:
    from vrsd_langchain import DiverseRetriever

    return {
        "similarity": store.as_retriever(search_type="similarity", search_kwargs={"k": k}),
        "similarity+vectors": DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch_k,
                                            method="similarity"),
        "vrsd": DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch_k, method="vrsd"),
        "mmr": DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch_k, method="mmr",
                             method_kwargs={"lambda_mult": 0.5}),
        "dpp": DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch_k, method="dpp",
                             method_kwargs={"theta": 0.5}),
        "store mmr": store.as_retriever(search_type="mmr",
                                        search_kwargs={"k": k, "fetch_k": fetch_k,
                                                       "lambda_mult": 0.5}),
    }


def sequential_latencies(retrievers: dict[str, Any], queries: list[str],
                         rounds: int) -> dict[str, list[float]]:
    """Per retriever, one wall-clock latency per call; calls interleaved across retrievers."""
    out: dict[str, list[float]] = {name: [] for name in retrievers}
    for _ in range(rounds):
        for query in queries:
            for name, retriever in retrievers.items():
                start = time.perf_counter()
                docs = retriever.invoke(query)
                out[name].append(time.perf_counter() - start)
                if not docs:
                    raise RuntimeError(f"{name} returned nothing for {query!r}")
    return out


def throughput(retriever: Any, queries: list[str], workers: int, rounds: int) -> float:
    """Queries per second with ``workers`` threads sharing one retriever."""
    work = [q for _ in range(rounds) for q in queries]
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        start = time.perf_counter()
        for docs in pool.map(retriever.invoke, work):
            if not docs:
                raise RuntimeError("a concurrent call returned nothing")
        elapsed = time.perf_counter() - start
    return len(work) / elapsed


def table(store_name: str, lat: dict[str, list[float]], qps: dict[str, float],
          workers: int) -> list[str]:
    base_p50 = percentile(lat[BASELINE], 0.5)
    base_qps = qps[BASELINE]
    rows = [
        f"| {store_name} | method | p50 ms | p99 ms | p50 / similarity | "
        f"QPS ({workers} threads) | QPS / similarity |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, values in lat.items():
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        rows.append(
            f"| | {name} | {p50 * 1e3:.2f} | {p99 * 1e3:.2f} | {p50 / base_p50:.2f}x | "
            f"{qps[name]:.0f} | {qps[name] / base_qps:.2f}x |"
        )
    return rows


def run_store(store_name: str, store: Any, queries: list[str], args: argparse.Namespace,
              figures: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """The store's table; its p50 latency (ms) and QPS per method go into ``figures``."""
    retrievers = build_retrievers(store, args.k, args.fetch_k)
    for retriever in retrievers.values():  # warm-up: connections, caches, lazy imports
        retriever.invoke(queries[0])
    lat = sequential_latencies(retrievers, queries, args.rounds)
    # Throughput rounds alternate between retrievers too; the median round is reported.
    runs: dict[str, list[float]] = {name: [] for name in retrievers}
    for _ in range(args.qps_rounds):
        for name, retriever in retrievers.items():
            runs[name].append(throughput(retriever, queries, args.workers, 1))
    qps = {name: statistics.median(values) for name, values in runs.items()}
    figures["p50"][store_name] = {name: percentile(v, 0.5) * 1e3 for name, v in lat.items()}
    figures["qps"][store_name] = qps
    return table(store_name, lat, qps, args.workers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", nargs="+", choices=("memory", "chroma", "postgres"),
                        default=["memory", "chroma"])
    parser.add_argument("--corpus", type=int, default=500, help="indexed ARC-DA records")
    parser.add_argument("--queries", type=int, default=100, help="distinct ARC-DA queries")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the queries")
    parser.add_argument("--workers", type=int, default=8, help="threads for the QPS column")
    parser.add_argument("--qps-rounds", type=int, default=3,
                        help="throughput runs per retriever (median reported)")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--fetch-k", type=int, default=20)
    parser.add_argument("--plot", type=Path, default=HERE.parent / "results" / "load.png")
    args = parser.parse_args(argv)

    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_huggingface import HuggingFaceEmbeddings

    from vrsd_eval.datasets import load_dataset
    from vrsd_eval.report import bar_panels
    from vrsd_kit.bundled_model import bundled_model_path

    data = load_dataset("arc_da")
    texts = data.corpus[: args.corpus]
    ids = data.corpus_ids[: args.corpus]
    queries = data.queries[: args.queries]
    embeddings = CacheBackedEmbeddings.from_bytes_store(
        HuggingFaceEmbeddings(model_name=bundled_model_path()), InMemoryByteStore(),
        namespace="minilm", query_embedding_cache=True, key_encoder="sha256",
    )
    t0 = time.perf_counter()
    embeddings.embed_documents(texts)
    for q in queries:
        embeddings.embed_query(q)
    encode_s = time.perf_counter() - t0

    print(f"# Load: reranking over the store ({platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()})\n")
    print(f"ARC-DA corpus of {len(texts)} records, {len(queries)} distinct queries x "
          f"{args.rounds} rounds, k={args.k}, fetch_k={args.fetch_k}. Query and corpus "
          f"vectors precomputed once with all-MiniLM-L6-v2 ({encode_s:.1f} s, not timed) and "
          "served from CacheBackedEmbeddings: the timings are retrieval + rerank, not the "
          "encoder. Latency: sequential calls; QPS: "
          f"{args.workers} threads sharing one retriever, median of {args.qps_rounds} runs. "
          "Wall clock.\n")

    outputs: list[str] = []
    figures: dict[str, dict[str, dict[str, float]]] = {"p50": {}, "qps": {}}
    if "memory" in args.stores:
        store = InMemoryVectorStore(embeddings)
        store.add_texts(texts, ids=ids)
        outputs += run_store("InMemoryVectorStore", store, queries, args, figures) + [""]
    if "chroma" in args.stores:
        helper = load_server_helper()
        from langchain_chroma import Chroma

        with tempfile.TemporaryDirectory() as tmp, \
                helper.ChromaServer(Path(tmp) / "data") as server:
            client = helper.bounded_http_client(server, timeout=30.0)
            chroma = Chroma(collection_name="vrsd-load", embedding_function=embeddings,
                            client=client, collection_metadata={"hnsw:space": "cosine"})
            chroma.add_texts(texts, ids=ids)
            outputs += run_store("Chroma server (HTTP)", chroma, queries, args, figures) + [""]
    if "postgres" in args.stores:
        outputs += run_postgres(texts, ids, embeddings, queries, args, figures) + [""]
    print("\n".join(outputs))
    path = bar_panels([("p50 latency per query", "ms", figures["p50"]),
                       (f"throughput, {args.workers} threads", "queries per second",
                        figures["qps"])], args.plot)
    print(f"wrote {path}")
    return 0


def run_postgres(texts: list[str], ids: list[str], embeddings: Any, queries: list[str],
                 args: argparse.Namespace, figures: dict[str, dict[str, dict[str, float]]]
                 ) -> list[str]:
    """PGVector on a pgserver Postgres in a temporary directory, stopped afterwards."""
    import pgserver
    from langchain_postgres import PGVector

    with tempfile.TemporaryDirectory(prefix="vrsd-pg-") as tmp:
        server = pgserver.get_server(tmp, cleanup_mode="stop")
        try:
            server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
            url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
            store = PGVector(embeddings, connection=url, collection_name="vrsd-load",
                             use_jsonb=True, engine_args={"pool_size": args.workers})
            store.add_texts(texts, ids=ids)
            return run_store("Postgres + pgvector (PGVector, unix socket)", store, queries,
                             args, figures)
        finally:
            server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
