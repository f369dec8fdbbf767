"""The default without copies of its picks, on the evidence protocol's HotpotQA pools.

The rerank body (``vrsd_kit.rerank``) closes a pick that copies one before it (the one
judge, ``vrsd_kit.copies.Judge``) and selects again. This runs the same rule on the pools
``vrsd eval evidence`` builds (``vrsd_eval.pools.build_pools``: the 500 questions, fetch_k
= 50, the words read as the adapters read them) and prints, per geometry and corpus:

* mean all-evidence at k = 2, 4, 6, 10, 20 of the core's picks (before) and of the rule's
  (after), how many questions' picks changed and how many came back with fewer than k;
* "restates" precision with the conservative label: of the held-back passages the
  entries call a copy of a kept one ("restates" or "contains"), the share whose kept
  passage is a piece of the same paragraph (one paragraph copied into two articles
  counts against it, though the two do restate each other).

Embeddings come from the disk cache ``vrsd eval`` fills (``--model`` as there; LSA is fit
here, nothing to download).

    .venv/bin/python benchmarks/copies.py [--model minilm lsa] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

KS = (2, 4, 6, 10, 20)


def rule(query, vectors, keywords, judge, k):  # noqa: ANN001, ANN201
    """(the core's first selection, the rule's): copies closed, selected again, as
    ``vrsd_kit.rerank`` does."""
    from vrsd_core import DEFAULT_METHOD, select
    from vrsd_kit.copies import first_copy
    from vrsd_kit.rerank import with_closed

    first = select(query, vectors, k, method=DEFAULT_METHOD, **keywords)
    closed, run = [], first
    while (position := first_copy(run.indices.tolist(), judge)) is not None:
        closed.append(int(run.indices[position]))
        run = select(query, vectors, k, method=DEFAULT_METHOD,
                     **with_closed(keywords, closed, len(vectors)))
    return first, run


def measure(corpus, pools) -> tuple[list[str], dict[str, list[int]]]:  # noqa: ANN001
    from vrsd_core import pool_units
    from vrsd_kit.copies import Judge

    owner = np.asarray(corpus.passage_of)
    before = {k: [] for k in KS}
    after = {k: [] for k in KS}
    changed = dict.fromkeys(KS, 0)
    fewer = dict.fromkeys(KS, 0)
    called: dict[str, list[int]] = {"restates": [0, 0], "contains": [0, 0]}
    relevance = pool_units(pools.words)
    for b, rows in enumerate(pools.rows):
        judge = Judge([corpus.texts[r] for r in rows])
        keywords = {"relevance": relevance[b], "profiles": pools.profiles[b]}
        gold = set(corpus.gold[b])
        for k in KS:
            first, run = rule(pools.queries[b], pools.vectors[b], keywords, judge, k)
            old, new = first.indices.tolist(), run.indices.tolist()
            before[k].append(set(owner[rows[old]].tolist()) >= gold)
            after[k].append(set(owner[rows[new]].tolist()) >= gold)
            changed[k] += old != new
            fewer[k] += len(new) < k
            for held in (c for c in first.info["top_k"] if c not in new):
                found = judge.copy_of(held, new)
                if found is not None:
                    called[found.relation][0] += 1
                    called[found.relation][1] += owner[rows[held]] == owner[rows[new[found.of]]]
    lines = [f"| {k} | {np.mean(before[k]):.4f} | {np.mean(after[k]):.4f} | {changed[k]} | "
             f"{fewer[k]} |" for k in KS]
    lines.append(f"| mean | {np.mean([np.mean(before[k]) for k in KS]):.4f} | "
                 f"{np.mean([np.mean(after[k]) for k in KS]):.4f} | | |")
    return lines, called


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["minilm", "lsa"],
                        help="geometries, as vrsd eval evidence --model (minilm lsa)")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions (500)")
    args = parser.parse_args()

    from vrsd_eval.evidence import EVIDENCE_FETCH_K, load_evidence_corpora
    from vrsd_eval.geometries import geometries
    from vrsd_eval.pools import build_pools

    corpora = load_evidence_corpora(limit=args.limit)
    for geometry in geometries(args.model):
        totals = {"restates": [0, 0], "contains": [0, 0]}
        for corpus in corpora:
            start = time.perf_counter()
            pools = build_pools(corpus.texts, corpus.questions, geometry.fit(corpus.texts),
                                EVIDENCE_FETCH_K, desc=f"{geometry.name}/{corpus.name}",
                                show=False)
            lines, called = measure(corpus, pools)
            print(f"\n{geometry.name}, {corpus.name} ({len(corpus.questions)} questions, "
                  f"fetch_k {EVIDENCE_FETCH_K}, {time.perf_counter() - start:.0f} s)\n")
            print("| k | all-evidence, core's picks | without copies | questions changed | "
                  "fewer than k |\n|---|---|---|---|---|")
            print("\n".join(lines))
            for relation, (count, right) in called.items():
                totals[relation][0] += count
                totals[relation][1] += right
        both = [sum(v[i] for v in totals.values()) for i in (0, 1)]
        print(f"\n{geometry.name}: held-back passages called a copy, confirmed by the "
              f"paragraph (k = {', '.join(map(str, KS))}, three corpora): " + "; ".join(
                  f"{relation} {right}/{count} = {right / max(count, 1):.3f}"
                  for relation, (count, right) in totals.items())
              + f"; both {both[1]}/{both[0]} = {both[1] / max(both[0], 1):.3f}")


if __name__ == "__main__":
    main()
