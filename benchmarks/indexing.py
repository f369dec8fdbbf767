"""Indexing throughput: ``vrsd index`` against the bundled model's raw encoding rate.

On a real folder (default ``/usr/share/doc``; ``--limit N``: its first N files,
copied to a temporary folder), with a fresh index and a fresh embedding cache:

1. ``index_folder`` (what ``vrsd index`` runs), the model already loaded, timed as a
   whole and by stage: reading and chunking, encoding (the model's
   ``embed_documents``), writing the index (``vrsd_cli.flat_index.IndexWriter.commit``:
   the chunks and their vectors, in one transaction), the rest;
2. the raw rate: the same chunks' texts through the model's ``embed_documents`` in one
   call (sentence-transformers' own batching, sorted by length);
3. re-indexing the unchanged folder (every chunk skipped).

Prints both rates in chunks per second and their ratio. A chunk text that several
files share is encoded once by ``vrsd index`` (``LazyEmbeddings``), which the raw
rate does not do: the table gives the distinct texts too. Wall-clock time on a
machine others may share: the load average is printed beside it.

Run: ``.venv/bin/python benchmarks/indexing.py [FOLDER] [--limit 400]
[--chunk-size 800] [--chunk-overlap 100]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def timed(owner: type, name: str, spent: dict[str, float], stage: str) -> None:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="/usr/share/doc")
    parser.add_argument("--limit", type=int, default=None, help="the first N files only")
    parser.add_argument("--chunk-size", type=int, default=800)
    parser.add_argument("--chunk-overlap", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures to this JSON file (docs/results/"
                        "indexing.json: what docs/speed.md shows)")
    args = parser.parse_args()

    from langchain_huggingface import HuggingFaceEmbeddings

    import vrsd_cli.flat_index as flat_index
    import vrsd_cli.indexing as indexing
    from vrsd_eval.disk_embeddings import base_embeddings

    spent: dict[str, float] = defaultdict(float)
    timed(indexing, "read_chunks", spent, "reading and chunking")
    timed(HuggingFaceEmbeddings, "embed_documents", spent, "encoding")
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
