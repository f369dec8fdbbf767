"""Speed of the selection core against the implementations people use today.

Same float32 arrays, same process, for (n, d, k) = (50, 384, 10), (100, 384, 10),
(1000, 768, 20), (10000, 384, 20), plus a batch of 256 queries with (n, d, k) =
(50, 384, 10). The pools look like a retriever's: unit rows whose cosines to the query are
spread over [0.3, 0.7], in the store's order (most similar first). Compared:

- this core: ``similarity``, ``vrsd``, ``vrsd`` + ``refine="swap"``, ``complement`` (the
  default), ``mmr`` (lambda 0.5), ``dpp`` (theta 0.5)
- plain numpy top-k by cosine (normalise, one product, argpartition + sort): what
  ``select(..., method="similarity")`` needs, so their ratio is ``select``'s fixed cost
- LangChain ``langchain_core.vectorstores.utils.maximal_marginal_relevance`` (lambda 0.5)
- LlamaIndex ``llama_index.core.indices.query.embedding_utils.get_top_k_mmr_embeddings``
  (given a list of the float32 rows, built outside the timing)
- ``pyversity.mmr`` and ``pyversity.dpp`` (diversity 0.5; they take relevance
  scores, so their timing includes the one ``C @ q`` that produces them)
- the paper's Algorithm 1 transcribed directly (a Python loop over candidates)
- the floor: k plain matrix-vector products ``C @ C[j]``, the work any greedy
  method that looks at every candidate once per pick must do

Timings are interleaved (one call of every implementation per round) and the
median over rounds is reported; ratios are medians divided by medians. As in
``timeit``, the garbage collector is off while timing, and each timed
call follows an untimed one of the same implementation (warm caches for all). The
clock is the process's CPU time by default (``--clock wall`` for elapsed time):
on a machine shared with other jobs, elapsed time mostly measures the queue
for a core. BLAS runs on one thread by default (``--blas-threads``, through threadpoolctl
when it is installed). Prints markdown tables, the ratios the project holds itself to
beside their targets (``Ratio``), and plots every implementation's median time per case
(``--plot``, default ``results/speed.png``).

Run: ``.venv/bin/python benchmarks/speed.py [--repeats N] [--quick]``.
OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE (set on some machines here) select an older
BLAS kernel; the script prints which kernel and how many BLAS threads it ran with.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vrsd_core import MethodName, method_options, select, select_batch

# (50, 384, 10): the pools a retriever really reranks (fetch 50, keep 10, a 384-d model)
CASES = [(50, 384, 10), (100, 384, 10), (1000, 768, 20), (10000, 384, 20)]
BATCH = (256, 50, 384, 10)  # B, n, d, k: 256 of the retriever's pools
DTYPE = np.float32
SLOW_CALL_SECONDS = 0.25  # implementations slower than this get fewer rounds


# --------------------------------------------------------------------------- competitors


def paper_algorithm_1(q: np.ndarray, R: np.ndarray, k: int) -> list[int]:
    """The paper's Algorithm 1, line by line: for each pick, loop over the remaining
    candidates v, form t = s + v and keep the v with the largest cos(t, q)."""
    S: list[int] = []
    remaining = list(range(len(R)))
    q_norm = float(np.linalg.norm(q))
    for _ in range(min(k, len(R))):
        s = R[S].sum(axis=0) if S else np.zeros_like(q)
        max_cos, p = -1.0, remaining[0]
        for v in remaining:
            t = s + R[v]
            cos = float(t @ q) / (float(np.linalg.norm(t)) * q_norm)
            if cos > max_cos:
                max_cos, p = cos, v
        S.append(p)
        remaining.remove(p)
    return S


def numpy_top_k(q: np.ndarray, C: np.ndarray, k: int) -> np.ndarray:
    """Top-k by cosine in plain numpy: normalise, one product, argpartition, sort the k."""
    sims = (C / np.linalg.norm(C, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    top = np.argpartition(-sims, k)[:k] if k < len(sims) else np.arange(len(sims))
    return top[np.argsort(-sims[top], kind="stable")]


def floor(C: np.ndarray, k: int) -> None:
    """k matrix-vector products: the least work of a k-step greedy over all candidates."""
    for j in range(k):
        C @ C[j]


def competitors(q: np.ndarray, C: np.ndarray, k: int) -> dict[str, Callable[[], object]]:
    """Zero-argument callables, each doing one full selection on (q, C, k)."""
    import pyversity
    from langchain_core.vectorstores.utils import maximal_marginal_relevance
    from llama_index.core.indices.query.embedding_utils import get_top_k_mmr_embeddings

    rows = list(C)  # LlamaIndex wants a list of embeddings; ndarray rows are its fastest form
    return {
        "floor (k × C @ C[j])": lambda: floor(C, k),
        "numpy top-k (normalise, C @ q, argpartition)": lambda: numpy_top_k(q, C, k),
        "core similarity": lambda: select(q, C, k, method="similarity"),
        "core vrsd": lambda: select(q, C, k, method="vrsd"),
        "core vrsd + swap": lambda: select(q, C, k, method="vrsd", refine="swap"),
        "core complement (default)": lambda: select(q, C, k, method="complement"),
        "core mmr": lambda: select(q, C, k, method="mmr", lambda_mult=0.5),
        "core dpp": lambda: select(q, C, k, method="dpp", theta=0.5),
        "pyversity mmr": lambda: pyversity.mmr(C, C @ q, k, diversity=0.5),
        "pyversity dpp": lambda: pyversity.dpp(C, C @ q, k, diversity=0.5),
        # both take arrays at run time (LangChain's stores pass them), typed as lists
        "LangChain maximal_marginal_relevance": lambda: maximal_marginal_relevance(
            q, C, lambda_mult=0.5, k=k  # type: ignore[arg-type]
        ),
        "LlamaIndex get_top_k_mmr_embeddings": lambda: get_top_k_mmr_embeddings(
            q, rows, similarity_top_k=k, mmr_threshold=0.5  # type: ignore[arg-type]
        ),
        "paper Algorithm 1 (Python loop)": lambda: paper_algorithm_1(q, C, k),
    }


# The competitor each row is compared with in the "vs" column.
VERSUS = {
    "core similarity": "numpy top-k (normalise, C @ q, argpartition)",
    "core vrsd": "paper Algorithm 1 (Python loop)",
    "core vrsd + swap": "paper Algorithm 1 (Python loop)",
    "core complement (default)": "pyversity dpp",
    "core mmr": "pyversity mmr",
    "core dpp": "pyversity dpp",
    "pyversity mmr": "core mmr",
    "pyversity dpp": "core dpp",
    "LangChain maximal_marginal_relevance": "core mmr",
    "LlamaIndex get_top_k_mmr_embeddings": "core mmr",
    "paper Algorithm 1 (Python loop)": "core vrsd",
}


# --------------------------------------------------------------------------- timing


@dataclass
class Timings:
    samples: dict[str, list[float]] = field(default_factory=dict)

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def time_interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> Timings:
    """One call of every implementation per round, ``repeats`` rounds; slow ones
    (over SLOW_CALL_SECONDS a call) only in the first 3 rounds."""
    out = Timings({name: [] for name in fns})
    for fn in fns.values():  # warm-up: imports, BLAS threads, caches
        fn()
    # As timeit does: the garbage collector stays off while timing (or the objects
    # the pure-Python competitors leave behind get collected, and billed, inside
    # whichever call comes next). No collection between rounds either: a full
    # collection cools the caches and allocator unevenly for the next calls.
    gc.collect()
    gc.disable()
    try:
        for r in range(repeats):
            for name, fn in fns.items():
                samples = out.samples[name]
                slow = bool(samples) and statistics.median(samples) > SLOW_CALL_SECONDS
                if r >= 3 and slow:
                    continue
                if not slow:
                    fn()  # untimed: each timed call starts with its own data in cache
                t0 = clock()
                fn()
                samples.append(clock() - t0)
    finally:
        gc.enable()
    return out


def unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape).astype(DTYPE)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def retrieved_pool(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """A query and n unit candidates as a retriever returns them: cosines to the query
    spread over [0.3, 0.7] (a 384-d sentence model's range), most similar first, the rest
    of each row random (so candidates resemble each other through the query only)."""
    q = unit_rows(rng, (d,))
    cos = np.sort(rng.uniform(0.3, 0.7, n))[::-1]
    rest = rng.standard_normal((n, d))
    rest -= np.outer(rest @ q, q)
    rest /= np.linalg.norm(rest, axis=1, keepdims=True)
    C = cos[:, None] * q + np.sqrt(1.0 - cos * cos)[:, None] * rest
    return q, C.astype(DTYPE)


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:,.0f}"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}×" if x < 100 else f"{x:,.0f}×"


# --------------------------------------------------------------------------- report


@dataclass
class Ratio:
    """A measured ratio beside the target the project holds it to."""

    what: str
    value: float
    limit: float
    higher_is_better: bool = False
    unit: str = "×"

    @property
    def within(self) -> bool:
        return self.value >= self.limit if self.higher_is_better else self.value <= self.limit

    def row(self) -> str:
        sign = "≥" if self.higher_is_better else "≤"
        value = fmt_ratio(self.value) if self.unit == "×" else f"{self.value:.3f} {self.unit}"
        return f"| {self.what} | {value} | {sign} {self.limit:g}{self.unit} |"


def blas_description() -> str:
    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        parts = [
            f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')} kernel, "
            f"{i.get('num_threads')} threads)"
            for i in infos
        ]
        return "; ".join(parts) or "unknown"
    except ImportError:
        return "unknown (threadpoolctl not installed)"


# the default, and the paper's method
BATCH_METHODS: tuple[MethodName, ...] = ("complement", "vrsd")


def run_batch(rng: np.random.Generator, repeats: int,
              record: dict[str, Any] | None = None) -> dict[str, float]:
    """Per method: select_batch's time per query over one select call's (``record``
    gets every median, in ms)."""
    B, n, d, k = BATCH
    pools = [retrieved_pool(rng, n, d) for _ in range(B)]
    Q = np.stack([q for q, _ in pools])
    X = np.stack([C for _, C in pools])
    fns: dict[str, Callable[[], object]] = {}
    for method in BATCH_METHODS:
        fns[f"{method}: select_batch (all {B})"] = functools.partial(
            select_batch, Q, X, k, method=method)
        fns[f"{method}: {B} select calls"] = functools.partial(
            lambda m: [select(Q[b], X[b], k, method=m) for b in range(B)], method)
        fns[f"{method}: one select call"] = functools.partial(select, Q[0], X[0], k,
                                                               method=method)
    bt = time_interleaved(fns, max(5, repeats // 2))
    print(f"\n## Batch: B={B}, n={n}, d={d}, k={k}\n")
    print("| method | what | median ms | per query ms | per query / one call |")
    print("|---|---|---:|---:|---:|")
    out: dict[str, float] = {}
    for method in BATCH_METHODS:
        single = bt.median(f"{method}: one select call")
        for name in fns:
            if not name.startswith(f"{method}:"):
                continue
            t = bt.median(name)
            per = t if name.endswith("one select call") else t / B
            print(f"| {method} | {name.split(': ', 1)[1]} | {fmt_ms(t)} | {fmt_ms(per)} | "
                  f"{fmt_ratio(per / single)} |")
        out[method] = bt.median(f"{method}: select_batch (all {B})") / B / single
    if record is not None:
        record["batch"] = {"B": B, "n": n, "d": d, "k": k,
                           "median_ms": {name: bt.median(name) * 1e3 for name in fns}}
    return out


def run(repeats: int, quick: bool, seed: int, plot: Path,
        record: dict[str, Any] | None = None) -> int:
    """Every case, the batch and the forms; ``record`` (when given) gets the machine,
    every median (ms) and every ratio, for ``--json``."""
    record = {} if record is None else record
    rng = np.random.default_rng(seed)
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print("# vrsd_core speed benchmark\n")
    clock_name = "process CPU time" if clock is time.process_time else "wall time"
    print(f"- clock: {clock_name}; dtype: {np.dtype(DTYPE).name} (retriever-like pools), "
          f"seed {seed}, "
          f"{repeats} rounds (median; implementations slower than "
          f"{SLOW_CALL_SECONDS * 1e3:.0f} ms a call: 3 rounds)")
    print(f"- numpy {np.__version__}, Python {platform.python_version()}, "
          f"BLAS: {blas_description()}")
    record["machine"] = {"clock": clock_name, "repeats": repeats, "seed": seed,
                         "numpy": np.__version__, "python": platform.python_version(),
                         "blas": blas_description(), "cpus": os.cpu_count()}
    print(f"- OPENBLAS_CORETYPE={coretype or '(unset)'}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE') or '(unset)'}\n")

    medians: dict[tuple[int, int, int], dict[str, float]] = {}
    cases = CASES[:3] if quick else CASES
    agreement: list[str] = []
    print("| n, d, k | implementation | median ms | × floor | vs | ratio |")
    print("|---|---|---:|---:|---|---:|")
    for n, d, k in cases:
        q, C = retrieved_pool(rng, n, d)
        timings = time_interleaved(competitors(q, C, k), repeats)
        med = {name: timings.median(name) for name in timings.samples}
        medians[(n, d, k)] = med
        base = med["floor (k × C @ C[j])"]
        for name, t in med.items():
            vs = VERSUS.get(name)
            ratio = fmt_ratio(t / med[vs]) if vs else ""
            print(f"| {n}, {d}, {k} | {name} | {fmt_ms(t)} | {fmt_ratio(t / base)} | "
                  f"{vs or ''} | {ratio} |")
        # The core's greedy is Algorithm 1: same picks on the same arrays.
        same = select(q, C, k, method="vrsd").indices.tolist() == paper_algorithm_1(q, C, k)
        agreement.append(f"({n},{d},{k}) {'yes' if same else 'NO (a float32 near-tie?)'}")
    print(f"\nCore vrsd picks == the Algorithm 1 loop's picks: {', '.join(agreement)}.")
    record["cases"] = [{"n": n, "d": d, "k": k, "median_ms": {name: t * 1e3 for name, t in
                                                              med.items()}}
                       for (n, d, k), med in medians.items()]
    record["same_picks_as_algorithm_1"] = agreement
    record["versus"] = VERSUS

    batch = run_batch(rng, repeats, record)
    mid = medians[(1000, 768, 20)]
    small = medians[(100, 384, 10)]
    real = medians[(50, 384, 10)]
    ratios = [
        Ratio("(50,384,10) core complement (default) / pyversity dpp",
              real["core complement (default)"] / real["pyversity dpp"], 1.0),
        Ratio("(1000,768,20) core complement (default) / core vrsd",
              mid["core complement (default)"] / mid["core vrsd"], 1.5),
        *(Ratio(f"(B={BATCH[0]}, 50,384,10) {method}: select_batch per query / one select",
                batch[method], 0.5) for method in BATCH_METHODS),
        Ratio("(1000,768,20) core vrsd / floor", mid["core vrsd"] / mid["floor (k × C @ C[j])"],
              1.3),
        Ratio("(1000,768,20) core vrsd / pyversity dpp",
              mid["core vrsd"] / mid["pyversity dpp"], 0.6),
        Ratio("(1000,768,20) LangChain MMR / core vrsd (speed-up)",
              mid["LangChain maximal_marginal_relevance"] / mid["core vrsd"], 40,
              higher_is_better=True),
        Ratio("(100,384,10) core vrsd / pyversity mmr",
              small["core vrsd"] / small["pyversity mmr"], 1.0),
    ]
    for (n, d, k), med in medians.items():
        for ours, theirs in (("core mmr", "pyversity mmr"), ("core dpp", "pyversity dpp")):
            ratios.append(Ratio(f"({n},{d},{k}) {ours} / {theirs}",
                                med[ours] / med[theirs], 1.0))
    if not quick:
        ratios += run_words(repeats, record)
        ratios += run_links(repeats, record)
    print_ratios(ratios)
    record["ratios"] = [{"what": r.what, "value": r.value} for r in ratios]
    from vrsd_eval.report import bar_panels

    by_case = {f"n={n}, d={d}, k={k}": {name: t * 1e3 for name, t in med.items()}
               for (n, d, k), med in medians.items()}
    print(f"wrote {bar_panels([('median time per call', 'ms', by_case)], plot, log=True)}")
    return 0


def print_ratios(ratios: list[Ratio]) -> None:
    print("\n## Ratios\n")
    print("| ratio | measured | target |")
    print("|---|---:|---:|")
    for r in ratios:
        print(r.row())
    outside = [r.what for r in ratios if not r.within]
    print(f"\n{len(ratios) - len(outside)} of {len(ratios)} ratios within their targets"
          + (f"; outside: {'; '.join(outside)}" if outside else "") + ".")


def hotpot_pools(n: int, pools: int) -> list[tuple[str, list[str]]]:
    """``pools`` (question, n passages) pairs of real text: HotpotQA's vendored questions,
    each with n of its paragraphs (title and text, about 600 characters)."""
    from vrsd_eval.evidence import load_evidence_corpora

    corpus = load_evidence_corpora(limit=400)[0]
    texts = corpus.texts
    return [(corpus.questions[i], [texts[(i * n + j) % len(texts)] for j in range(n)])
            for i in range(pools)]


def words_timings(n: int, repeats: int, rng: np.random.Generator) -> dict[str, float]:
    """Median seconds per query of each way to score a pool of n real passages."""
    import bm25s
    from rank_bm25 import BM25Okapi

    from vrsd_kit.lexical import bm25, pool_relevance, tokenize

    pools = hotpot_pools(n, 16)
    at = iter(range(1 << 30))
    vectors = unit_rows(rng, (n, 384))
    qvec = unit_rows(rng, (384,))

    def pool() -> tuple[str, list[str]]:
        return pools[next(at) % len(pools)]

    fresh = iter(range(1 << 30))

    def cold() -> object:  # texts never seen: each call's texts are new (a number added)
        query, texts = pool()
        call = next(fresh)
        return bm25(query, [f"{text} {call}" for text in texts])

    def with_bm25s() -> object:
        query, texts = pool()
        index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        index.index([tokenize(t) for t in texts], show_progress=False)
        return index.get_scores(tokenize(query))

    def with_rank_bm25() -> object:
        query, texts = pool()
        return BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize(query))

    fns = {
        WORDS_WARM: lambda: bm25(*pool()),
        WORDS_FUSED: lambda: pool_relevance(*pool(), qvec, vectors),
        "vrsd_kit bm25, tokenising every text": cold,
        "bm25s (index the pool, score)": with_bm25s,
        "rank-bm25 BM25Okapi (index the pool, score)": with_rank_bm25,
    }
    for query, texts in pools:  # what an adapter has seen once
        pool_relevance(query, texts, qvec, vectors)
    timings = time_interleaved(fns, repeats)
    chars = float(np.mean([sum(map(len, texts)) / n for _, texts in pools]))
    return {**{name: timings.median(name) for name in fns}, "chars": chars}


WORDS_WARM = "vrsd_kit bm25, tokenised before"
WORDS_FUSED = "vrsd_kit pool_relevance (cosine, bm25, word profiles), tokenised before"


def run_words(repeats: int, record: dict[str, Any] | None = None) -> list[Ratio]:
    """The words' cost per query: BM25 of a pool against the query (vrsd_kit.lexical),
    its texts tokenised before (an adapter that saw them) and from scratch, beside bm25s
    and rank-bm25 indexing the same pool per query; then how it grows with the pool."""
    print("\n## The words: BM25 of one query's pool (real passages)\n")
    print(f"| n | implementation | median ms | vs {WORDS_WARM} |")
    print("|---|---|---:|---:|")
    targets = []
    rng = np.random.default_rng(0)
    for n in (50, 100, 200):
        med = words_timings(n, repeats, rng)
        chars = med.pop("chars")
        for name, t in med.items():
            print(f"| {n} | {name} | {fmt_ms(t)} | {fmt_ratio(t / med[WORDS_WARM])} |")
        print(f"| {n} | (mean characters per passage: {chars:.0f}) | | |")
        if record is not None:
            record.setdefault("words", []).append(
                {"n": n, "chars": chars, "median_ms": {name: t * 1e3 for name, t in med.items()}})
        if n == 50:
            targets.append(Ratio("(50 passages) the words per query, texts tokenised before",
                                 med[WORDS_FUSED] * 1e3, 1.0, unit=" ms"))
    return targets


LINK_ROWS = {
    "words": "vrsd_kit pool_relevance (cosine, bm25, profiles, links)",
    "words_plain": "vrsd_kit pool_relevance without the links",
    "select": "select, the default with the links, k = 10",
    "select_plain": "select, the default without the links, k = 10",
    "budget": "select, the default with the links, 864 tokens (k = n)",
    "budget_plain": "select, the default without the links, 864 tokens (k = n)",
}


def links_timings(n: int, repeats: int, rng: np.random.Generator) -> dict[str, float]:
    """Median seconds per query of the default's links at n real passages: reading them
    from the words, and the selection's steps with them, each beside the same without."""
    from vrsd_kit.lexical import (
        K1,
        PoolRelevance,
        _bm25,
        _pool_words,
        _profiles,
        cosines,
        pool_relevance,
    )
    from vrsd_kit.tokens import approx_token_count

    pools = hotpot_pools(n, 16)
    vectors = unit_rows(rng, (n, 384))
    qvec = unit_rows(rng, (384,))
    found = [pool_relevance(query, texts, qvec, vectors) for query, texts in pools]
    keywords = [f.select_keywords(method_options("complement")) for f in found]
    tokens = [[approx_token_count(t) for t in texts] for _, texts in pools]
    at = iter(range(1 << 30))

    def without(query: str, texts: list[str]) -> PoolRelevance:
        words = _pool_words(query, texts)
        return PoolRelevance(cosines(qvec, vectors), _bm25(words, K1, 0.75), _profiles(words))

    def one(fn: Callable[[int], object]) -> Callable[[], object]:
        return lambda: fn(next(at) % len(pools))

    def plain(i: int) -> dict[str, Any]:
        return {key: v for key, v in keywords[i].items() if key != "links"}

    def budget(i: int) -> dict[str, Any]:
        return {"max_tokens": 864, "token_counts": tokens[i]}

    fns = {
        LINK_ROWS["words"]: one(lambda i: pool_relevance(*pools[i], qvec, vectors)),
        LINK_ROWS["words_plain"]: one(lambda i: without(*pools[i])),
        LINK_ROWS["select"]: one(lambda i: select(qvec, vectors, 10, **keywords[i])),
        LINK_ROWS["select_plain"]: one(lambda i: select(qvec, vectors, 10, **plain(i))),
        LINK_ROWS["budget"]: one(lambda i: select(qvec, vectors, n, **keywords[i],
                                                  **budget(i))),
        LINK_ROWS["budget_plain"]: one(lambda i: select(qvec, vectors, n, **plain(i),
                                                        **budget(i))),
    }
    timings = time_interleaved(fns, repeats)
    return {name: timings.median(name) for name in fns}


def run_links(repeats: int, record: dict[str, Any] | None = None) -> list[Ratio]:
    """What the default's links between candidates cost per query at 50 passages: their
    words (pool_relevance with and without them) and the selection's steps (the default
    with and without them, at k = 10 and filling a token budget)."""
    print("\n## The links between candidates: cost per query (50 real passages)\n")
    print("| what | median ms |")
    print("|---|---:|")
    med = links_timings(50, repeats, np.random.default_rng(0))
    for name, t in med.items():
        print(f"| {name} | {fmt_ms(t)} |")
    words = med[LINK_ROWS["words"]] - med[LINK_ROWS["words_plain"]]
    at_k = words + med[LINK_ROWS["select"]] - med[LINK_ROWS["select_plain"]]
    at_budget = words + med[LINK_ROWS["budget"]] - med[LINK_ROWS["budget_plain"]]
    if record is not None:
        record["links"] = {"n": 50, "median_ms": {name: t * 1e3 for name, t in med.items()},
                           "added_ms": {"k10": at_k * 1e3, "budget864": at_budget * 1e3}}
    return [Ratio("(50 passages) the links added per query, k = 10", at_k * 1e3, 1.0,
                  unit=" ms"),
            Ratio("(50 passages) the links added per query, 864 tokens", at_budget * 1e3, 1.0,
                  unit=" ms")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help="timing rounds per case (median reported; default 30)")
    parser.add_argument("--quick", action="store_true",
                        help="only the three smaller single-query cases and the batch, "
                        "10 rounds unless --repeats is given, without the words")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random arrays")
    parser.add_argument("--words", action="store_true",
                        help="only the words' cost (BM25 of a pool), not the selections")
    parser.add_argument("--links", action="store_true",
                        help="only the cost of the default's links between candidates")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: on a shared machine, threads that "
                        "wait for a busy core make small products 1000x slower; 0 = BLAS "
                        "default)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu (default): this process's CPU time, steady on a machine "
                        "shared with other jobs; wall: elapsed time")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the medians (ms), the ratios and the machine to "
                        "this JSON file (docs/results/speed.json: what docs/speed.md shows)")
    parser.add_argument("--plot", type=Path,
                        default=Path(__file__).resolve().parent.parent / "results" / "speed.png",
                        help="the plot of every implementation's median time per case")
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be >= 1")
    repeats = args.repeats or (10 if args.quick else 30)
    record: dict[str, Any] = {"command": " ".join(["benchmarks/speed.py", *(
        argv if argv is not None else sys.argv[1:])])}

    def chosen() -> int:
        if args.links:
            print_ratios(run_links(repeats, record))
            code = 0
        elif not args.words:
            code = run(repeats, args.quick, args.seed, args.plot, record)
        else:
            print_ratios(run_words(repeats, record))
            code = 0
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {args.json}")
        return code

    if args.blas_threads > 0:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("threadpoolctl is not installed: BLAS runs with its own thread count "
                  "(set OPENBLAS_NUM_THREADS=1 for one thread)", file=sys.stderr)
            return chosen()
        with threadpool_limits(limits=args.blas_threads, user_api="blas"):
            return chosen()
    return chosen()


if __name__ == "__main__":
    sys.exit(main())
