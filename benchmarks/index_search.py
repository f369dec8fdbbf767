"""Exact search in the ``vrsd index`` store: how its time grows with the chunks.

For each size N (default 10^4 and 10^5 chunks of d = 384, the bundled model's), an
index of N random unit vectors with short chunk records is written through the
store's own commit (``vrsd_cli.flat_index.commit``) into a temporary folder; then,
for ``--repeats`` random questions, the time of what ``vrsd search`` does with the
index once the question's vector is known: open the current generation, the exact
top ``--fetch-k`` (one matrix product over every vector), and reading those chunks'
records and texts. The median and the slowest are printed (the files are in the
page cache after the first question; the first is printed apart). The question's
embedding and the rerank are not included: they do not depend on N.

Run: ``.venv/bin/python benchmarks/index_search.py [--sizes 10000 100000]
[--fetch-k 20] [--repeats 20] [--json docs/results/index_search.json]`` (the JSON file is
what docs/cli.md's table shows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vrsd_cli import flat_index

DIMENSION = 384


def build(where: Path, n: int, rng: np.random.Generator) -> None:
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [flat_index.NewChunk(f"/notes/file{i // 10}.md", i % 10, f"chunk text {i} " * 40,
                                  flat_index.digest(f"chunk text {i} " * 40)) for i in range(n)]
    manifest = {"format": flat_index.FORMAT, "model": None, "dimension": DIMENSION,
                "generation": 0, "folders": {"/notes": {}}}
    flat_index.commit(where, manifest, chunks, vectors)


def search_once(where: Path, query: np.ndarray, fetch_k: int) -> float:
    start = time.perf_counter()
    with flat_index.open_flat(where) as index:  # type: ignore[union-attr]
        rows = index.top(query, fetch_k)
        index.records(rows)
        index.texts(rows)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--fetch-k", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures to this JSON file")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    load = round(os.getloadavg()[0], 1)
    print(f"{os.cpu_count()} CPUs, load average {load}; d = {DIMENSION}, "
          f"fetch_k = {args.fetch_k}, {args.repeats} questions per size")
    print()
    print("| chunks | vectors on disk | first question | median | slowest |")
    print("|---:|---:|---:|---:|---:|")
    rows = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(tmp)
            build(where, n, rng)
            size = sum(p.stat().st_size for p in where.rglob(flat_index.VECTORS))
            queries = rng.standard_normal((args.repeats + 1, DIMENSION)).astype(np.float32)
            first = search_once(where, queries[0], args.fetch_k)
            times = [search_once(where, q, args.fetch_k) for q in queries[1:]]
            row = {"chunks": n, "disk_mb": round(size / 1e6), "first_ms": round(first * 1e3),
                   "median_ms": round(statistics.median(times) * 1e3),
                   "slowest_ms": round(max(times) * 1e3)}
            rows.append(row)
            print(f"| {n:,} | {row['disk_mb']} MB | {row['first_ms']} ms | "
                  f"{row['median_ms']} ms | {row['slowest_ms']} ms |")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "command": " ".join(["benchmarks/index_search.py", *sys.argv[1:]]),
            "cpus": os.cpu_count(), "load_average": load, "dimension": DIMENSION,
            "fetch_k": args.fetch_k, "repeats": args.repeats, "rows": rows}, indent=1) + "\n",
            encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
