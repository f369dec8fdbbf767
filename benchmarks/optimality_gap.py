"""How far the VRSD heuristics are from the optimum, on real data.

VRSD is NP-complete, so the greedy (the paper's Algorithm 1) and its 1-swap
refinement are heuristics. ``vrsd_exact`` enumerates every k-subset, which is
affordable for a small candidate pool, and so certifies them: for each ARC-DA
query (the paper's protocol, bundled all-MiniLM-L6-v2, from the embedding cache
``vrsd eval`` fills) the n nearest corpus items are the candidates. Prints, per k,
how often greedy and swap reach the optimum of cos(sum of the set, query) and their
mean and worst gap; plots the share at the optimum and the mean gap against k.

Usage::

    .venv/bin/python benchmarks/optimality_gap.py [--n 20] [--k 3 4 5 6 8] [--limit N]
        [--plot results/optimality_gap.png]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from vrsd_core import select
from vrsd_eval.datasets import load_dataset
from vrsd_eval.disk_embeddings import cached_embeddings
from vrsd_eval.report import bar_panels
from vrsd_langchain.embeddings import warm_query_cache

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent


def unit(rows: list[list[float]]) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="candidates per query (default 20)")
    ap.add_argument("--k", type=int, nargs="+", default=[3, 4, 5, 6, 8])
    ap.add_argument("--limit", type=int, default=None, help="first N queries only")
    ap.add_argument("--plot", type=Path, default=ROOT / "results" / "optimality_gap.png")
    ap.add_argument("--json", type=Path, default=None,
                    help="also write the table to this JSON file (docs/results/"
                    "optimality_gap.json: what docs/evaluation.md shows)")
    args = ap.parse_args()

    data = load_dataset("arc_da")
    embeddings = cached_embeddings()
    queries = data.queries[: args.limit]
    warm_query_cache(embeddings, queries)
    Q = unit([embeddings.embed_query(q) for q in queries])
    C = unit(embeddings.embed_documents(data.corpus))
    top = np.argsort(-(Q @ C.T), axis=1, kind="stable")[:, : args.n]
    print(f"ARC-DA, all-MiniLM-L6-v2: {len(Q)} queries, n = {args.n} nearest candidates each\n")
    print("| k | subsets per query | greedy optimal | swap optimal | greedy mean gap "
          "| greedy worst gap | swap mean gap | swap worst gap | exact s/query |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    optimal: dict[str, dict[str, float]] = {}
    mean_gap: dict[str, dict[str, float]] = {}
    rows = []
    for k in args.k:
        gaps: dict[str, list[float]] = {"vrsd": [], "swap": []}
        t_exact = 0.0
        for q, idx in zip(Q, top, strict=True):
            cands = C[idx]
            t0 = time.perf_counter()
            best = select(q, cands, k, method="vrsd_exact").objective
            t_exact += time.perf_counter() - t0
            gaps["vrsd"].append(best - select(q, cands, k, method="vrsd").objective)
            gaps["swap"].append(
                best - select(q, cands, k, method="vrsd", refine="swap").objective)
        g, s = np.asarray(gaps["vrsd"]), np.asarray(gaps["swap"])
        tol = 1e-9
        print(f"| {k} | {math.comb(args.n, k):,} | {np.mean(g <= tol):.3f} "
              f"| {np.mean(s <= tol):.3f} | {g.mean():.2e} | {g.max():.2e} "
              f"| {s.mean():.2e} | {s.max():.2e} "
              f"| {t_exact / len(Q):.3f} |")
        optimal[f"k={k}"] = {"greedy": float(np.mean(g <= tol)), "swap": float(np.mean(s <= tol))}
        mean_gap[f"k={k}"] = {"greedy": float(g.mean()), "swap": float(s.mean())}
        rows.append({"k": k, "subsets": math.comb(args.n, k),
                     "greedy_optimal": float(np.mean(g <= tol)),
                     "swap_optimal": float(np.mean(s <= tol)),
                     "greedy_mean_gap": float(g.mean()), "greedy_worst_gap": float(g.max()),
                     "swap_mean_gap": float(s.mean()), "swap_worst_gap": float(s.max())})
    print("\ngap = exact optimum - heuristic objective (cosine units); 'optimal' = gap <= 1e-9.")
    path = bar_panels([("share of queries at the optimum", "share", optimal),
                       ("mean gap to the optimum", "cosine units", mean_gap)], args.plot)
    print(f"wrote {path}")
    if args.json is not None:
        command = " ".join(["benchmarks/optimality_gap.py", *sys.argv[1:]])
        args.json.write_text(json.dumps({"command": command, "queries": len(Q), "n": args.n,
                                         "rows": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
