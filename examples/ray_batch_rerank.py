"""Offline batch reranking with Ray Data: many queries' candidate lists, reranked in batches.

    python examples/ray_batch_rerank.py [--queries 2000] [--k 5] [--method NAME]

Install (from a checkout; no torch):

    pip install -e . "ray[data]"

A typical offline job: a retrieval step has already written, per query, its
over-fetched candidates and their vectors (here: synthetic, seeded, 10 to 40
candidates per query with near-duplicates among them, 64-d). Ray Data reads the
rows and ``map_batches`` reranks a batch of queries at a time with
``vrsd_core.select_batch`` (ragged candidate lists are padded and masked), which
gives the same picks as one ``vrsd_core.select`` call per query. The script checks
that on every query and prints the counts. Local mode, 2 CPUs, no dashboard.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from vrsd_core import DEFAULT_METHOD, select, select_batch

DIM = 64


def make_rows(n_queries: int, seed: int = 7) -> list[dict[str, Any]]:
    """Per query: its vector and a ragged candidate list (ids and vectors)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qid in range(n_queries):
        query = rng.normal(size=DIM)
        n = int(rng.integers(10, 41))
        base = query + rng.normal(scale=1.5, size=(n, DIM))
        dups = rng.integers(0, n, size=n // 4)  # near-duplicates of other candidates
        base[rng.integers(0, n, size=n // 4)] = base[dups] + rng.normal(scale=0.05,
                                                                         size=(n // 4, DIM))
        rows.append({
            "query_id": qid,
            "query": query.astype(np.float32),
            "cand_ids": np.arange(qid * 100, qid * 100 + n, dtype=np.int64),
            "cand_vecs": base.astype(np.float32),
        })
    return rows


def rerank_batch(batch: dict[str, np.ndarray], k: int, method: str,
                 **options: Any) -> dict[str, np.ndarray]:
    """One Ray Data batch (numpy format): pad the ragged candidate lists, mask the padding,
    ``select_batch``, and map positions back to candidate ids."""
    queries = np.stack(list(batch["query"])).astype(np.float64)
    cands = [np.asarray(c, dtype=np.float64) for c in batch["cand_vecs"]]
    width = max(len(c) for c in cands)
    padded = np.zeros((len(cands), width, queries.shape[1]))
    mask = np.zeros((len(cands), width), dtype=bool)
    for b, c in enumerate(cands):
        padded[b, : len(c)] = c
        mask[b, : len(c)] = True
    selections = select_batch(queries, padded, k, method=method, mask=mask, **options)
    picked = np.empty(len(cands), dtype=object)
    objective = np.empty(len(cands), dtype=np.float64)
    for b, sel in enumerate(selections):
        picked[b] = np.asarray(batch["cand_ids"][b])[sel.indices]
        objective[b] = sel.objective
    return {"query_id": np.asarray(batch["query_id"]), "picked": picked,
            "objective": objective}


def run(rows: list[dict[str, Any]], k: int, method: str, batch_size: int = 64,
        **options: Any) -> dict[int, list[int]]:
    """Rerank every row with Ray Data; {query_id: picked candidate ids}."""
    import ray

    ds = ray.data.from_items(rows)
    out = ds.map_batches(rerank_batch, batch_size=batch_size, batch_format="numpy",
                         fn_kwargs={"k": k, "method": method, **options})
    return {int(r["query_id"]): [int(i) for i in r["picked"]] for r in out.iter_rows()}


def single(row: dict[str, Any], k: int, method: str, **options: Any) -> list[int]:
    sel = select(np.asarray(row["query"], dtype=np.float64),
                 np.asarray(row["cand_vecs"], dtype=np.float64), k, method=method, **options)
    return [int(i) for i in row["cand_ids"][sel.indices]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--method", default=DEFAULT_METHOD,
                        help=f"a vrsd_core method (default: {DEFAULT_METHOD}, the recommendation)")
    args = parser.parse_args(argv)

    import ray

    rows = make_rows(args.queries)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        got = run(rows, args.k, args.method)
    finally:
        ray.shutdown()
    same = sum(got[r["query_id"]] == single(r, args.k, args.method) for r in rows)
    sizes = [len(r["cand_ids"]) for r in rows]
    print(f"{len(rows)} queries, {min(sizes)}-{max(sizes)} candidates each, "
          f"k={args.k}, method={args.method}")
    print(f"equal to one select() call per query: {same}/{len(rows)}")
    print(f"query 0 picks: {got[0]}")
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
