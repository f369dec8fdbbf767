"""What ``DiverseRetriever`` adds above the store's own search, per query, where a user feels
it, beside what LangChain's own MMR adds over the same store.

A LangChain ``DiverseRetriever`` (the default method, the words read) over a FAISS store of
real passages, k = 10 of fetch_k = 50, the bundled all-MiniLM-L6-v2's vectors (computed
once through ``vrsd_eval.disk_embeddings``' on-disk cache, then served from memory, so
that ``embed_query`` costs the same few microseconds on every side). The passages: the
vendored HotpotQA paragraphs (``vrsd_eval.evidence``), or with ``--chunk-chars N`` chunks
of about N characters, as a user's text splitter makes them (LangChain's
``CharacterTextSplitter`` at spaces, no overlap, over the paragraphs joined in order). For
each of the questions, interleaved in one process:

- the retriever: ``retriever.invoke(question)``;
- the store alone: ``embed_query(question)`` + ``store.similarity_search_with_score_by_vector(
  vector, k=50)``, what any retriever over this store pays;
- LangChain's MMR: ``embed_query(question)`` + ``store.max_marginal_relevance_search_by_vector(
  vector, k=10, fetch_k=50, lambda_mult=0.5)``.

What each adds is the difference of its median and the store's (per query, over questions
and rounds); the ratio of the two is the retriever's cost against the peer a user would
pick. BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``, set before numpy is imported);
the clock is elapsed time (``--clock cpu`` for the process's CPU time), the garbage
collector off while timing, each timed call after an untimed one.

Passages are tokenised once per process (``vrsd_kit.lexical.read_text``); by default the
timed call's passages were seen by its untimed twin, ``--first-seen`` empties what the
retriever keeps by a text's content (the readings of texts, and its re-embedding cache,
which a store with vectors, as FAISS, leaves empty) before each timed call: a pool never
seen before.

``--files``: the project's files (its ``vrsd_*`` packages) a warm ``invoke`` passes
through, counted with ``sys.setprofile``, and their names.

``--json FILE``: adds this run's figures to FILE (docs/results/retriever_overhead.json,
what docs/speed.md and the README show), one entry per kind of passage (the chunk size, or
the paragraphs) and pool (seen before, never seen), each with its command and the load
average before and after.

Run: ``OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python
benchmarks/retriever_overhead.py [--chunk-chars 500] [--passages 2000] [--questions 100]
[--rounds 5] [--clock cpu] [--files] [--first-seen]
[--json docs/results/retriever_overhead.json]``
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
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
LAMBDA_MULT = 0.5  # LangChain's default for its MMR


class Precomputed:
    """An ``Embeddings`` serving vectors computed once by the real model (a dict lookup)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[text]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]


def passages(chunk_chars: int | None, count: int) -> list[str]:
    """The store's first ``count`` passages: the HotpotQA paragraphs, or chunks of at most
    ``chunk_chars`` characters cut at spaces from the paragraphs joined in order."""
    from vrsd_eval.evidence import load_evidence_corpora

    paragraphs = load_evidence_corpora()[0].texts
    if chunk_chars is None:
        texts = paragraphs
    else:
        from langchain_text_splitters import CharacterTextSplitter

        splitter = CharacterTextSplitter(separator=" ", chunk_size=chunk_chars, chunk_overlap=0)
        texts = splitter.split_text("\n\n".join(paragraphs))
    if count > len(texts):
        raise SystemExit(f"--passages: {count} asked, the corpus makes {len(texts)}")
    return texts[:count]


def build(texts: list[str], questions: int) -> tuple[Any, Any, list[str]]:
    """(the FAISS store of ``texts``, its embeddings, the questions)."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_eval.evidence import load_evidence_corpora

    asked = load_evidence_corpora()[0].questions[:questions]
    model = cached_embeddings()
    vectors = dict(zip(texts, model.embed_documents(texts), strict=True))
    vectors.update(zip(asked, model.embed_documents(asked), strict=True))
    embeddings = type("PrecomputedEmbeddings", (Precomputed, Embeddings), {})(vectors)
    store = FAISS.from_embeddings([(t, vectors[t]) for t in texts], embeddings)
    return store, embeddings, asked


def forget_words(retriever: Any) -> None:
    """Empty what the retriever keeps by a text's content, as for passages never seen: the
    per-process readings of texts and its re-embedding cache."""
    from vrsd_kit import lexical

    lexical.read_text.cache_clear()
    retriever.cache.clear()


def timed(fn: Callable[[], Any], clock: Callable[[], float], forget: Callable[[], None] | None
          ) -> float:
    fn()  # untimed: warm
    if forget is not None:
        forget()
    start = clock()
    fn()
    return clock() - start


def overhead(store: Any, embeddings: Any, asked: list[str], rounds: int,
             clock: Callable[[], float], first_seen: bool) -> dict[str, float]:
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=store, k=K, fetch_k=FETCH_K)
    forget = (lambda: forget_words(retriever)) if first_seen else None
    calls: dict[str, Callable[[str], Any]] = {
        "retriever invoke": retriever.invoke,
        "store search + embed_query": lambda q: store.similarity_search_with_score_by_vector(
            embeddings.embed_query(q), k=FETCH_K),
        "LangChain MMR + embed_query": lambda q: store.max_marginal_relevance_search_by_vector(
            embeddings.embed_query(q), k=K, fetch_k=FETCH_K, lambda_mult=LAMBDA_MULT),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    gc.disable()
    try:
        for _ in range(rounds):
            for question in asked:
                for name, call in calls.items():
                    times[name].append(timed(functools.partial(call, question), clock, forget))
    finally:
        gc.enable()
    ms = {name: statistics.median(values) * 1000.0 for name, values in times.items()}
    store_ms = ms["store search + embed_query"]
    added = ms["retriever invoke"] - store_ms
    added_mmr = ms["LangChain MMR + embed_query"] - store_ms
    return {**ms, "added by the retriever": added, "added by LangChain's MMR": added_mmr}


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
    parser.add_argument("--chunk-chars", type=int, default=None,
                        help="the passages: chunks of at most this many characters, cut at "
                             "spaces (default: the HotpotQA paragraphs as they are)")
    parser.add_argument("--passages", type=int, default=2000, help="the store's size")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--files", action="store_true", help="count the files a call enters")
    parser.add_argument("--first-seen", action="store_true",
                        help="empty what the retriever keeps by a text's content before each "
                             "timed call, as for a pool of passages never seen before "
                             "(default: seen before)")
    parser.add_argument("--json", type=Path, default=None,
                        help="add the figures to this results file (docs/results/"
                             "retriever_overhead.json: what docs/speed.md shows)")
    args = parser.parse_args()
    if args.chunk_chars is not None and args.chunk_chars < 1:
        parser.error(f"--chunk-chars: expected a positive number, got {args.chunk_chars}")
    warnings.simplefilter("ignore", DeprecationWarning)
    texts = passages(args.chunk_chars, args.passages)
    mean_chars = statistics.mean(map(len, texts))
    store, embeddings, asked = build(texts, args.questions)
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
    ratio = figures["added by the retriever"] / figures["added by LangChain's MMR"]
    kind = "paragraphs" if args.chunk_chars is None else f"chunks of <= {args.chunk_chars} chars"
    print(f"FAISS store of {len(texts)} HotpotQA {kind} (mean {mean_chars:.0f} characters), "
          f"all-MiniLM-L6-v2, k={K} of fetch_k={FETCH_K}, {len(asked)} questions x "
          f"{args.rounds} rounds, {args.clock} clock, passages "
          f"{'never' if args.first_seen else 'already'} seen, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print("| per query | median ms |\n|---|---:|")
    for name, value in figures.items():
        print(f"| {name} | {value:.2f} |")
    print(f"added by the retriever / added by LangChain's MMR: {ratio:.2f}")
    print(f"load average {load_before:.1f} before, {load_after:.1f} after, on "
          f"{os.cpu_count()} CPUs")
    if args.json:
        data = json.loads(args.json.read_text(encoding="utf-8")) if args.json.exists() else {}
        passage = "paragraphs" if args.chunk_chars is None else str(args.chunk_chars)
        data.setdefault("runs", {}).setdefault(passage, {})[
            "never seen" if args.first_seen else "seen"] = {
            "command": shlex.join(["benchmarks/retriever_overhead.py", *sys.argv[1:]]),
            "chunk_chars": args.chunk_chars, "mean_chars": round(mean_chars),
            "passages": len(texts), "questions": len(asked), "rounds": args.rounds,
            "k": K, "fetch_k": FETCH_K, "lambda_mult": LAMBDA_MULT, "clock": args.clock,
            "cpus": os.cpu_count(), "load_before": round(load_before, 1),
            "load_after": round(load_after, 1), "median_ms": figures,
            "ratio_to_mmr": ratio}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
