"""What ``DiverseRetriever`` adds above the store's own search, per query, where a user feels it.

A LangChain ``DiverseRetriever`` (the default method, the words read) over a FAISS store of
2,000 real passages (the vendored HotpotQA paragraphs, ``vrsd_eval.evidence``), k = 10
of fetch_k = 50, the bundled all-MiniLM-L6-v2's vectors (computed once through
``vrsd_eval.disk_embeddings``' on-disk cache, then served from memory, so that
``embed_query`` costs the same few microseconds on both sides). For each of the
questions, interleaved in one process:

- the retriever: ``retriever.invoke(question)``;
- the store alone: ``embed_query(question)`` + ``store.similarity_search_with_score_by_vector(
  vector, k=50)``, what any retriever over this store pays.

The overhead is the difference of their medians (per query, over questions and rounds).
BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``, set before numpy is imported); the
clock is elapsed time (``--clock cpu`` for the process's CPU time), the garbage
collector off while timing, each timed call after an untimed one.

Passages are tokenised once per process (``vrsd_kit.lexical.read_text``); by default the
timed call's passages were seen by its untimed twin, ``--first-seen`` empties those caches
before each timed call (a pool never seen before).

``--files``: the project's files (its ``vrsd_*`` packages) a warm ``invoke`` passes
through, counted with ``sys.setprofile``, and their names.

``--json FILE``: adds this run's figures to FILE (docs/results/retriever_overhead.json,
what docs/speed.md shows), one entry per kind of pool (passages seen before, never seen),
each with its command and the load average before and after.

Run: ``OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python
benchmarks/retriever_overhead.py [--passages 2000] [--questions 100] [--rounds 5] [--files]
[--first-seen] [--json docs/results/retriever_overhead.json]``
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's packages, whatever the environment installed
FETCH_K, K = 50, 10


class Precomputed:
    """An ``Embeddings`` serving vectors computed once by the real model (a dict lookup)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[text]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]


def build(passages: int, questions: int) -> tuple[Any, Any, list[str]]:
    """(the FAISS store, its embeddings, the questions)."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_eval.evidence import load_evidence_corpora

    plain = load_evidence_corpora()[0]
    texts, asked = plain.texts[:passages], plain.questions[:questions]
    model = cached_embeddings()
    vectors = dict(zip(texts, model.embed_documents(texts), strict=True))
    vectors.update(zip(asked, model.embed_documents(asked), strict=True))
    embeddings = type("PrecomputedEmbeddings", (Precomputed, Embeddings), {})(vectors)
    store = FAISS.from_embeddings([(t, vectors[t]) for t in texts], embeddings)
    return store, embeddings, asked


def forget_words() -> None:
    """Empty the per-process caches of tokenised texts, as for passages never seen."""
    from vrsd_kit import lexical

    lexical.read_text.cache_clear()


def timed(fn: Callable[[], Any], clock: Callable[[], float], first_seen: bool) -> float:
    fn()  # untimed: warm
    if first_seen:
        forget_words()
    start = clock()
    fn()
    return clock() - start


def overhead(store: Any, embeddings: Any, asked: list[str], rounds: int,
             clock: Callable[[], float], first_seen: bool) -> dict[str, float]:
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    inner: list[float] = []
    outer: list[float] = []
    gc.disable()
    try:
        for _ in range(rounds):
            for question in asked:
                outer.append(timed(lambda q=question: retriever.invoke(q), clock, first_seen))
                inner.append(timed(lambda q=question: store.similarity_search_with_score_by_vector(
                    embeddings.embed_query(q), k=FETCH_K), clock, first_seen))
    finally:
        gc.enable()
    ms = 1000.0
    return {"retriever invoke": statistics.median(outer) * ms,
            "store search + embed_query": statistics.median(inner) * ms,
            "added by the retriever": (statistics.median(outer) - statistics.median(inner)) * ms}


def files_passed(store: Any, question: str) -> dict[str, int]:
    """The project's files a warm ``invoke`` enters, with how many calls each."""
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    retriever.invoke(question)
    packages = tuple(str(path) + os.sep for path in ROOT.glob("vrsd_*") if path.is_dir())
    seen: dict[str, int] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(packages):
                seen[name] = seen.get(name, 0) + 1

    sys.setprofile(profile)
    try:
        retriever.invoke(question)
    finally:
        sys.setprofile(None)
    return {str(Path(f).relative_to(ROOT)): n for f, n in sorted(seen.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--files", action="store_true", help="count the files a call enters")
    parser.add_argument("--first-seen", action="store_true",
                        help="empty the tokenised-text caches before each timed call, as for "
                             "a pool of passages never seen before (default: seen before)")
    parser.add_argument("--json", type=Path, default=None,
                        help="add the figures to this results file (docs/results/"
                             "retriever_overhead.json: what docs/speed.md shows)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    store, embeddings, asked = build(args.passages, args.questions)
    if args.files:
        found = files_passed(store, asked[0])
        print(f"a warm DiverseRetriever.invoke passes through {len(found)} of the project's files")
        for name, calls in found.items():
            print(f"  {name}  ({calls} calls)")
        return
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    load_before = os.getloadavg()[0]
    figures = overhead(store, embeddings, asked, args.rounds, clock, args.first_seen)
    load_after = os.getloadavg()[0]
    print(f"FAISS store of {args.passages} HotpotQA passages, all-MiniLM-L6-v2, k={K} of "
          f"fetch_k={FETCH_K}, {len(asked)} questions x {args.rounds} rounds, "
          f"{args.clock} clock, passages {'never' if args.first_seen else 'already'} seen, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print("| per query | median ms |\n|---|---:|")
    for name, value in figures.items():
        print(f"| {name} | {value:.2f} |")
    print(f"load average {load_before:.1f} before, {load_after:.1f} after, on "
          f"{os.cpu_count()} CPUs")
    if args.json:
        data = json.loads(args.json.read_text(encoding="utf-8")) if args.json.exists() else {}
        data.setdefault("runs", {})["never seen" if args.first_seen else "seen"] = {
            "command": shlex.join(["benchmarks/retriever_overhead.py", *sys.argv[1:]]),
            "passages": args.passages, "questions": len(asked), "rounds": args.rounds,
            "k": K, "fetch_k": FETCH_K, "clock": args.clock, "cpus": os.cpu_count(),
            "load_before": round(load_before, 1), "load_after": round(load_after, 1),
            "median_ms": figures}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
