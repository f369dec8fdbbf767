"""The selection core's speed targets on the pools retrievers really rerank.

(n, d, k) = (50, 384, 10), float32 unit rows shaped like a retriever's top 50 (``speed.py``'s
``retrieved_pool``), BLAS on one thread, every implementation called once per round
(interleaved), process CPU time, medians over rounds; a fresh pool per round. Three ratios,
beside their targets:

- ``select(..., method="similarity")`` against a bare ``np.argsort(-(C @ q))[:k]``:
  at most 5x (what ``select``'s checks, ties and result cost);
- the default (``complement``) without words against ``pyversity.dpp`` (diversity 0.5,
  given ``C @ q`` as its relevance): at most 1x;
- LangChain's ``maximal_marginal_relevance`` (lambda 0.5) against ``select(...,
  method="mmr")``: at least 10x.

One more row, for reading the first ratio: ``core checks`` is what every ``select`` does
before a method runs (``vrsd_core._prepare.prepare``: the inputs checked finite, non-zero
and in float range, the cosine geometry, each candidate's cosine to the query).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/core_targets.py [--repeats N]``.
Prints the medians, the ratios and the load average (a busy machine shifts every figure).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from speed import retrieved_pool

from vrsd_core import select
from vrsd_core._prepare import prepare

N, D, K = 50, 384, 10
POOLS = 64


def implementations() -> dict[str, Callable[[np.ndarray, np.ndarray], object]]:
    import pyversity
    from langchain_core.vectorstores.utils import maximal_marginal_relevance

    return {
        "bare argsort": lambda q, C: np.argsort(-(C @ q))[:K],
        "core similarity": lambda q, C: select(q, C, K, method="similarity"),
        "core checks": lambda q, C: prepare(q, C, batched=False),
        "core default (no words)": lambda q, C: select(q, C, K),
        "pyversity dpp": lambda q, C: pyversity.dpp(C, C @ q, K, diversity=0.5),
        "core mmr": lambda q, C: select(q, C, K, method="mmr"),
        "LangChain mmr": lambda q, C: maximal_marginal_relevance(q, C, lambda_mult=0.5, k=K),
    }


def medians(repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    pools = [retrieved_pool(rng, N, D) for _ in range(POOLS)]
    fns = implementations()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    gc.collect()
    gc.disable()
    try:
        for r in range(repeats):
            q, C = pools[r % POOLS]
            for name, fn in fns.items():
                fn(q, C)  # untimed: the pool in cache for every implementation alike
                start = time.process_time()
                fn(q, C)
                samples[name].append(time.process_time() - start)
    finally:
        gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    load_before = os.getloadavg()
    med = medians(args.repeats)
    print(f"n={N}, d={D}, k={K}, float32, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, {args.repeats} rounds\n")
    print("| implementation | median µs |\n|---|---:|")
    for name, seconds in med.items():
        print(f"| {name} | {seconds * 1e6:.1f} |")
    ratios = [
        ("core similarity / bare argsort", med["core similarity"] / med["bare argsort"],
         "<= 5"),
        ("core checks / bare argsort", med["core checks"] / med["bare argsort"], "-"),
        ("core default (no words) / pyversity dpp",
         med["core default (no words)"] / med["pyversity dpp"], "<= 1"),
        ("LangChain mmr / core mmr", med["LangChain mmr"] / med["core mmr"], ">= 10"),
    ]
    print("\n| ratio | measured | target |\n|---|---:|---|")
    for what, value, target in ratios:
        print(f"| {what} | {value:.2f} | {target} |")
    print(f"\nload average before: {load_before[0]:.2f}, after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
