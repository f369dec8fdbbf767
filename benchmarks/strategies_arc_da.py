"""Every selection strategy side by side on ARC-DA (the VRSD paper's protocol).

Queries and corpus are cut the paper's way (``vrsd_cli.datasets``), encoded
with the bundled all-MiniLM-L6-v2 (normalised), and for each query the n
nearest corpus items by cosine are the candidates. Each method picks k of them
with ``select_batch``; the table shows the mean over queries of

- Sim. = cos(sum of the k picked vectors, query)  (higher: better aligned)
- Div. = mean pairwise cosine of the k picks      (lower: more diverse)

The quality prior for ``mmr+prior`` is each corpus item's *typicality*: the
mean cosine to its 10 nearest other corpus items. RAGSys uses a popularity
proxy (how familiar the demonstration is to the LLM); how densely the corpus
covers an item's neighbourhood is the closest proxy available without an LLM,
and it is computed from the corpus alone (never from the query). It runs at
RAGSys's published settings, lambda_d = 0.75 and lambda_b = 0.95
(prior_weight 0.05), next to plain MMR at the same lambda.

Embeddings are cached under ``.vrsd/cache/`` (gitignored), so a rerun skips
encoding. Usage::

    .venv/bin/python benchmarks/strategies_arc_da.py [--n 50] [--k 6] [--plot PATH]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_cli.datasets import load_dataset
from vrsd_core import metrics, select_batch
from vrsd_kit.bundled_model import bundled_model_path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".vrsd" / "cache"
NEIGHBOURS = 10  # typicality prior: mean cosine to this many nearest corpus items


@functools.cache
def _model() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(bundled_model_path(), device="cpu")


def encode(texts: list[str], tag: str) -> np.ndarray:
    """Unit-length MiniLM embeddings of ``texts``, cached by a hash of the texts."""
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"minilm_{tag}_{digest}.npy"
    if path.exists():
        return np.load(path)
    vecs = _model().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs.astype(np.float32))
    return vecs.astype(np.float32)


def typicality(corpus: np.ndarray, neighbours: int = NEIGHBOURS) -> np.ndarray:
    """Per corpus item, the mean cosine to its ``neighbours`` nearest other items."""
    out = np.empty(len(corpus))
    for start in range(0, len(corpus), 512):
        sims = corpus[start:start + 512] @ corpus.T
        rows = np.arange(sims.shape[0])
        sims[rows, start + rows] = -np.inf  # not itself
        top = np.partition(sims, -neighbours, axis=1)[:, -neighbours:]
        out[start:start + 512] = top.mean(axis=1)
    return out


def runs(prior: np.ndarray, n: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, method, options): defaults unless stated, seeded for repeatability."""
    return [
        ("similarity", "similarity", {}),
        ("vrsd", "vrsd", {}),
        ("mmr (lambda 0.5)", "mmr", {"lambda_mult": 0.5}),
        ("mmr (lambda 0.75)", "mmr", {"lambda_mult": 0.75}),
        ("mmr+prior (RAGSys: lambda 0.75, prior_weight 0.05)", "mmr",
         {"lambda_mult": 0.75, "prior": prior, "prior_weight": 0.05}),
        ("mmr+prior (lambda 0.75, prior_weight 0.3)", "mmr",
         {"lambda_mult": 0.75, "prior": prior, "prior_weight": 0.3}),
        ("dpp (theta 0.5)", "dpp", {}),
        ("threshold (m 2k, 0.9)", "threshold", {"seed": 0}),
        ("threshold (m n, 0.7)", "threshold", {"m": n, "threshold": 0.7, "seed": 0}),
        ("top_m (m 2k, T 0.1)", "top_m", {"seed": 0}),
        ("top_p (p 0.9, T 0.1)", "top_p", {"seed": 0}),
        ("cluster", "cluster", {}),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50, help="candidates per query (default 50)")
    ap.add_argument("--k", type=int, default=6, help="picks per query (default 6)")
    ap.add_argument("--plot", type=Path, default=ROOT / "results" / "strategies_arc_da.png",
                    help="where to write the Sim./Div. plot (PNG)")
    args = ap.parse_args()

    data = load_dataset("arc_da")
    t0 = time.perf_counter()
    Q = encode(data.queries, "arc_da_queries")
    C = encode(data.corpus, "arc_da_corpus")
    print(f"ARC-DA: {len(Q)} queries, {len(C)} corpus items "
          f"(embeddings ready in {time.perf_counter() - t0:.1f} s)")

    sims = Q @ C.T  # (queries, corpus): one product
    nearest = np.argsort(-sims, axis=1, kind="stable")[:, : args.n]
    cands = C[nearest]  # (B, n, d)
    prior_all = typicality(C)
    prior = prior_all[nearest]  # (B, n), aligned with the candidates

    rows = []
    for label, method, options in runs(prior, args.n):
        t0 = time.perf_counter()
        sels = select_batch(Q, cands, args.k, method=method, **options)
        took = time.perf_counter() - t0
        sim = [metrics.sum_vector_similarity(Q[b], cands[b, s.indices]) for b, s in enumerate(sels)]
        div = [metrics.intra_list_similarity(cands[b, s.indices]) for b, s in enumerate(sels)]
        size = np.mean([len(s) for s in sels])
        rows.append((label, float(np.mean(sim)), float(np.mean(div)), float(size), took))

    print(f"\nARC-DA, all-MiniLM-L6-v2, n={args.n}, k={args.k}, {len(Q)} queries\n")
    print("| method | Sim. (higher = more aligned) | Div. (lower = more diverse) "
          "| mean picks | time (s) |")
    print("|---|---|---|---|---|")
    for label, sim, div, size, took in rows:
        print(f"| {label} | {sim:.4f} | {div:.4f} | {size:.2f} | {took:.2f} |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for label, sim, div, _, _ in rows:
        ax.scatter(div, sim)
        short = label.replace("lambda ", "").replace("prior_weight ", "w ")
        short = short.replace("RAGSys: ", "").replace("(", "").replace(")", "")
        ax.annotate(short, (div, sim), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("Div. (mean pairwise cosine, lower = more diverse)")
    ax.set_ylabel("Sim. (cos of sum vector to query)")
    ax.set_title(f"ARC-DA, all-MiniLM-L6-v2, n={args.n}, k={args.k}")
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=120, bbox_inches="tight")
    print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
