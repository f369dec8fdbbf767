"""The ``vrsd index`` store at a given size: re-indexing one changed file, the disk, a
search, a new question.

For each size N (default 10^4 and 10^5 chunks of d = 384, the bundled model's, with
700-character texts, 10 chunks a file), an index of N random unit vectors is written
through the store's own commit (``vrsd_cli.flat_index.IndexWriter``) into a temporary
folder. Then, each in a fresh process (its peak memory is that process's):

- one changed file re-indexed: its 10 chunks replaced by 10 new ones in one commit
  (the store's part of ``vrsd index``: the walk, reading and encoding are not
  included), ``--rounds`` times, each a different file;
- a new question: from the process's start to its first results: it imports the
  store, opens the index and runs one search (the exact top ``--fetch-k``, with their
  records, texts and vectors);
  the question's encoding and the rerank are not included (they do not depend on N);
- searches: ``--repeats`` more questions in that process, on one core
  (``taskset -c 0`` where it exists, BLAS threads 1), median and slowest.

The files are in the page cache (they were just written). Run:
``.venv/bin/python benchmarks/index_search.py [--sizes 10000 100000] [--rounds 3]
[--repeats 5] [--json docs/results/index_search.json]`` (the JSON file is what
docs/cli.md's table shows).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_cli import flat_index

DIMENSION = 384
PER_FILE = 10
BATCH = 20_000
TEXT = ("A note on kettles, rivers and lanterns, kept for the benchmark of the index; "
        "it repeats until the chunk holds seven hundred characters. ") * 6


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIMENSION), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def chunk(i: int, tag: str = "") -> flat_index.NewChunk:
    text = f"chunk {i}{tag}: {TEXT}"[:700]
    return flat_index.NewChunk(f"/notes/file{i // PER_FILE}.md", i % PER_FILE, text,
                               flat_index.digest(text))


def build(where: Path, n: int) -> None:
    manifest: dict[str, Any] = {"model": None, "dimension": DIMENSION, "folders": {"/notes": {}}}
    with flat_index.IndexWriter(where) as store:
        for start in range(0, n, BATCH):
            part = range(start, min(n, start + BATCH))
            manifest = store.commit(manifest, [], [chunk(i) for i in part],
                                    unit_vectors(len(part), start))


def one_change(where: Path, n: int, round_: int) -> float:
    """Re-index one file as ``vrsd index`` does when one file changed: the other files
    kept unread, the changed one's rows out and 10 new chunks in, one commit
    (seconds)."""
    first = round_ * 7919 % n
    file = chunk(first).file
    kept = {chunk(i).file for i in range(0, n, PER_FILE)} - {file}
    start = time.perf_counter()
    with flat_index.IndexWriter(where) as store:
        records, _ = store.records_under("/notes", kept=kept)
        removed = [row for row, _, _, _ in records]
        base = first - first % PER_FILE
        added = [chunk(base + c, f" r{round_}") for c in range(PER_FILE)]
        assert store.manifest is not None
        store.commit(store.manifest, removed, added, unit_vectors(PER_FILE, 10**9 + round_))
    return time.perf_counter() - start


def searches(where: Path, repeats: int, fetch_k: int) -> tuple[float, list[float]]:
    """The first search of a fresh process (seconds since it started), then ``repeats``."""
    times = []
    for seed in range(repeats + 1):
        query = unit_vectors(1, 2 * 10**9 + seed)[0]
        start = time.perf_counter()
        with flat_index.open_flat(where) as index:  # type: ignore[union-attr]
            rows = index.top(query, fetch_k)
            index.records(rows)
            index.texts(rows)
            index.vectors(rows)
        times.append(time.perf_counter() - start)
    return times[0], times[1:]


def child(args: list[str], one_core: bool = False) -> tuple[float, float, str]:
    """``args`` run by this script in a fresh process: (wall seconds, peak MB, stdout)."""
    command = [sys.executable, __file__, *args]
    env = dict(os.environ)
    if one_core:
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        if shutil.which("taskset"):
            command = ["taskset", "-c", "0", *command]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(args)} failed ({status})")
    peak_kb = usage.ru_maxrss  # (KB on Linux)
    return time.perf_counter() - start, peak_kb / 1024, out


def measure(n: int, rounds: int, repeats: int, fetch_k: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        child(["--build", str(where), str(n)])
        changes = [child(["--change", str(where), str(n), str(r)])
                   for r in range(1, rounds + 1)]
        size = sum(p.stat().st_size for p in where.iterdir() if p.is_file())
        wall, peak, out = child(["--search", str(where), str(repeats), str(fetch_k)],
                                one_core=True)
        first, times = json.loads(out)
    return {"chunks": n, "disk_mb": round(size / 1e6),
            "change_s": round(statistics.median(json.loads(c[2]) for c in changes), 2),
            "change_process_s": round(statistics.median(c[0] for c in changes), 2),
            "change_peak_mb": round(max(c[1] for c in changes)),
            # the process's start to its first results: its wall less the later searches
            "new_question_s": round(wall - sum(times), 2), "first_search_ms": round(first * 1e3),
            "median_ms": round(statistics.median(times) * 1e3),
            "slowest_ms": round(max(times) * 1e3), "search_peak_mb": round(peak)}


def main() -> None:
    if sys.argv[1:2] == ["--build"]:
        build(Path(sys.argv[2]), int(sys.argv[3]))
        return
    if sys.argv[1:2] == ["--change"]:
        print(json.dumps(one_change(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        return
    if sys.argv[1:2] == ["--search"]:
        first, times = searches(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        print(json.dumps([first, times]))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--fetch-k", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures to this JSON file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load_before:.1f}; d = {DIMENSION}, "
          f"fetch_k = {args.fetch_k}, {args.rounds} changes, {args.repeats} questions a size")
    print()
    print("| chunks | on disk | one changed file (its process; peak) | new question | "
          "search: median (slowest), one core |")
    print("|---:|---:|---:|---:|---:|")
    rows = []
    for n in args.sizes:
        row = measure(n, args.rounds, args.repeats, args.fetch_k)
        rows.append(row)
        print(f"| {n:,} | {row['disk_mb']:,} MB | {row['change_s']} s ({row['change_process_s']} "
              f"s; {row['change_peak_mb']} MB) | {row['new_question_s']} s | "
              f"{row['median_ms']:,} ms ({row['slowest_ms']:,} ms) |")
    load = round(max(load_before, os.getloadavg()[0]), 1)
    print(f"\nload average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "command": " ".join(["benchmarks/index_search.py", *sys.argv[1:]]),
            "cpus": os.cpu_count(), "load_average": load, "dimension": DIMENSION,
            "fetch_k": args.fetch_k, "rounds": args.rounds, "repeats": args.repeats,
            "rows": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
