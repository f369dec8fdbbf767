"""Indexing throughput: ``vrsd index`` against the bundled model's raw encoding rate.

On a real folder (default ``/usr/share/doc``; ``--limit N``: its first N files,
copied to a temporary folder), with a fresh index and a fresh embedding cache:

1. ``index_folder`` (what ``vrsd index`` runs), the model already loaded, timed as a
   whole and by stage: reading and chunking, encoding (the numpy encoder's ``embed``
   for the bundled model, else the model's ``embed_documents``), writing the index
   (``vrsd_cli.flat_index.IndexWriter.commit``: the chunks and their vectors, in one
   transaction), the rest;
2. the raw rate: the same chunks' texts through the model's ``embed_documents`` in one
   call (sentence-transformers' own batching, sorted by length);
3. re-indexing the unchanged folder (every chunk skipped).

Prints both rates in chunks per second and their ratio. A chunk text that several
files share is encoded once by ``vrsd index`` (``LazyEmbeddings``), which the raw
rate does not do: the table gives the distinct texts too. Wall-clock time on a
machine others may share: the load average is printed beside it.

Run: ``.venv/bin/python benchmarks/indexing.py [FOLDER] [--limit 400]
[--chunk-size 800] [--chunk-overlap 100]``.

``--passages N [--rounds 3]``: start-up included, as a user runs it. A fresh folder of N
files, one short HotpotQA paragraph each (the vendored data; under 800 characters, so
one chunk a file), and, each in a new Python process, timed from its start to its exit:
``vrsd index`` (a fresh index and embedding cache), and the raw encoding of the same
texts by the same model, through sentence-transformers (its ``encode``, its own
batching) and through ``vrsd_kit.numpy_encoder`` (what ``vrsd index`` runs). The three
run in turn, the order rotating each round; every run's load average is printed beside
it, and the ratios are of each round's runs.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def timed(owner: Any, name: str, spent: dict[str, float], stage: str) -> None:
    """Wrap ``owner.name`` so that its wall time adds up in ``spent[stage]``."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[stage] += time.perf_counter() - start

    setattr(owner, name, wrapper)


def subset(folder: Path, limit: int | None, into: Path) -> Path:
    """``folder`` itself, or a copy of its first ``limit`` files (as ``vrsd index`` lists them)."""
    from vrsd_cli.indexing import find_files

    if limit is None:
        return folder
    for path in find_files(folder)[:limit]:
        target = into / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return into


# The raw encodings, each a new process: the texts of the folder's files (sorted, as
# ``vrsd index`` lists them, stripped as its splitter strips a chunk).
RAW = {
    "sentence-transformers": """
import sys
from pathlib import Path
from sentence_transformers import SentenceTransformer
from vrsd_kit.bundled_model import bundled_model_path
texts = [p.read_text(encoding="utf-8").strip() for p in sorted(Path(sys.argv[1]).iterdir())]
SentenceTransformer(bundled_model_path(), device="cpu").encode(texts)
""",
    "numpy encoder": """
import sys
from pathlib import Path
from vrsd_eval.lazy_embeddings import DOCUMENT_BATCH, DOCUMENT_THREADS
from vrsd_kit.numpy_encoder import bundled_numpy_encoder
texts = [p.read_text(encoding="utf-8").strip() for p in sorted(Path(sys.argv[1]).iterdir())]
bundled_numpy_encoder().embed(texts, batch_size=DOCUMENT_BATCH, threads=DOCUMENT_THREADS)
""",
}


def passages_folder(count: int, into: Path) -> Path:
    """``into`` with ``count`` files, one distinct HotpotQA paragraph (100 to 780
    characters) each."""
    from vrsd_eval.datasets import default_data_dir

    data = Path(default_data_dir()) / "hotpotqa_dev500" / "dev_subsampled.jsonl.gz"
    into.mkdir(parents=True)
    seen: set[str] = set()
    with gzip.open(data, "rt", encoding="utf-8") as lines:
        for line in lines:
            for context in json.loads(line)["contexts"]:
                text = context["paragraph_text"].strip()
                if text in seen or not 100 < len(text) < 780:
                    continue
                seen.add(text)
                (into / f"p{len(seen):05d}.txt").write_text(text + "\n", encoding="utf-8")
                if len(seen) == count:
                    return into
    raise SystemExit(f"--passages: the data holds only {len(seen)} such paragraphs")


def startup_included(count: int, rounds: int, json_path: Path | None) -> None:
    """``vrsd index`` of a fresh folder against the raw encodings, each a new process
    (``json_path``: the runs and ratios written there too)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    runs = {"vrsd index": None, **RAW}
    times: dict[str, list[float]] = {name: [] for name in runs}
    loads: dict[str, list[float]] = {name: [] for name in runs}
    with tempfile.TemporaryDirectory() as tmp:
        folder = passages_folder(count, Path(tmp) / "docs")
        print(f"{count} files, one passage each; {os.cpu_count()} CPUs, shared: wall-clock "
              "times, the load average (1 min) before each run beside it")
        print()
        print("| round | run | seconds | load |")
        print("|---:|---|---:|---:|")
        for round_ in range(rounds):
            names = list(runs)
            names = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in names:
                if name == "vrsd index":
                    command = [sys.executable, "-m", "vrsd_cli.cli", "index", str(folder),
                               "--index-dir", f"{tmp}/index{round_}", "--cache-dir",
                               f"{tmp}/cache{round_}", "--no-progress"]
                else:
                    command = [sys.executable, "-c", RAW[name], str(folder)]
                load = os.getloadavg()[0]
                start = time.perf_counter()
                subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - start)
                loads[name].append(round(load, 1))
                print(f"| {round_ + 1} | {name} | {times[name][-1]:.1f} | {load:.1f} |",
                      flush=True)
    print()
    print("| vrsd index against | ratio per round | median |")
    print("|---|---|---:|")
    ratios = {name: [a / b for a, b in zip(times["vrsd index"], times[name], strict=True)]
              for name in RAW}
    for name, each in ratios.items():
        print(f"| {name}, same texts, start-up included | "
              f"{', '.join(f'{r:.2f}' for r in each)} | {statistics.median(each):.2f} |")
    if json_path is not None:
        invocation = " ".join(["benchmarks/indexing.py", *sys.argv[1:]])
        json_path.write_text(json.dumps({
            "command": invocation, "files": count, "cpus": os.cpu_count(),
            "seconds": {name: [round(t, 1) for t in each] for name, each in times.items()},
            "loads": loads,
            "ratios": {name: [round(r, 3) for r in each] for name, each in ratios.items()},
            "median": {name: round(statistics.median(each), 3)
                       for name, each in ratios.items()}}, indent=1) + "\n",
            encoding="utf-8")
        print(f"wrote {json_path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="/usr/share/doc")
    parser.add_argument("--passages", type=int, default=None,
                        help="start-up included: a fresh folder of N one-passage files")
    parser.add_argument("--rounds", type=int, default=3, help="with --passages (3)")
    parser.add_argument("--limit", type=int, default=None, help="the first N files only")
    parser.add_argument("--chunk-size", type=int, default=800)
    parser.add_argument("--chunk-overlap", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures to this JSON file (docs/results/"
                        "indexing.json, with --passages indexing_startup.json: what "
                        "docs/speed.md shows)")
    args = parser.parse_args()
    if args.passages is not None:
        startup_included(args.passages, args.rounds, args.json)
        return

    from langchain_huggingface import HuggingFaceEmbeddings

    import vrsd_cli.flat_index as flat_index
    import vrsd_cli.indexing as indexing
    from vrsd_eval.disk_embeddings import base_embeddings
    from vrsd_kit.numpy_encoder import NumpyEncoder

    spent: dict[str, float] = defaultdict(float)
    timed(indexing, "read_chunks", spent, "reading and chunking")
    timed(HuggingFaceEmbeddings, "embed_documents", spent, "encoding")
    timed(NumpyEncoder, "embed", spent, "encoding")  # the bundled model's path
    timed(flat_index.IndexWriter, "commit", spent, "writing the index")

    model = base_embeddings()
    model.embed_documents(["warm-up"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = subset(Path(args.folder), args.limit, Path(tmp) / "docs")
        index_dir, cache = Path(tmp) / "index", Path(tmp) / "cache"
        spent.clear()
        start = time.perf_counter()
        report = indexing.index_folder(folder, index_dir=index_dir, cache_dir=cache,
                                       chunk_size=args.chunk_size,
                                       chunk_overlap=args.chunk_overlap)
        total = time.perf_counter() - start
        stages = dict(spent)
        start = time.perf_counter()
        again = indexing.index_folder(folder, index_dir=index_dir, cache_dir=cache,
                                      chunk_size=args.chunk_size,
                                      chunk_overlap=args.chunk_overlap)
        reindex = time.perf_counter() - start
        chunks, _ = indexing.load_chunks(folder, indexing.find_files(folder, index_dir),
                                         args.chunk_size, args.chunk_overlap)
    texts = [chunk.page_content for chunk in chunks]
    start = time.perf_counter()
    model.embed_documents(texts)
    raw = time.perf_counter() - start

    stages["the rest"] = total - sum(stages.values())
    print(f"{args.folder}{f' (first {args.limit} files)' if args.limit else ''}: "
          f"{report.files} files read, {len(report.skipped)} skipped, {report.chunks} chunks "
          f"({len(set(texts))} distinct texts); load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} CPUs")
    print()
    print("| stage of vrsd index | seconds | share |")
    print("|---|---:|---:|")
    for stage, seconds in stages.items():
        print(f"| {stage} | {seconds:.1f} | {seconds / total:.0%} |")
    print(f"| **total** | **{total:.1f}** | |")
    print()
    index_rate, raw_rate = report.chunks / total, len(texts) / raw
    print("| rate | chunks/s |")
    print("|---|---:|")
    print(f"| vrsd index (model loaded) | {index_rate:.1f} |")
    print(f"| the model's raw encoding, same chunks, one call | {raw_rate:.1f} |")
    print(f"| ratio | {index_rate / raw_rate:.0%} |")
    print()
    print(f"re-indexing the unchanged folder: {reindex:.1f} s ({again.unchanged} unchanged)")
    if args.json is not None:
        command = " ".join(["benchmarks/indexing.py", *sys.argv[1:]])
        args.json.write_text(json.dumps({
            "command": command, "files": report.files, "skipped": len(report.skipped),
            "chunks": report.chunks, "distinct": len(set(texts)), "cpus": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 1),
            "stages": {stage: round(seconds, 2) for stage, seconds in stages.items()},
            "total": round(total, 2), "index_rate": round(index_rate, 2),
            "raw_rate": round(raw_rate, 2), "reindex": round(reindex, 2)}, indent=1) + "\n",
            encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
