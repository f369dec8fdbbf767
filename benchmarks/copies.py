"""The default without copies of its picks, on the evidence protocol's HotpotQA pools.

The rerank body (``vrsd_kit.rerank``) closes a pick that copies one before it (the one
judge, ``vrsd_kit.lexical.Judge``, passed to the default as ``closes``: inside the greedy
loop, the step picks again). This runs the same rule on the pools
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

    .venv/bin/python benchmarks/copies.py [--model minilm lsa] [--limit N] [--json FILE]

``--json`` writes the results file docs/adapters.md's table is rendered from
(``docs/results/copies.json``, through ``scripts/figures.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

KS = (2, 4, 6, 10, 20)


def rule(query: np.ndarray, vectors: np.ndarray, keywords: dict[str, Any], k: int
         ) -> tuple[Any, Any]:
    """(the core's selection without the judge, the rule's): the default's keywords as the
    rerank body builds them (``pool_keywords``), without and with the judge's ``closes``."""
    from vrsd_core import DEFAULT_METHOD, select

    alone = {key: value for key, value in keywords.items() if key != "closes"}
    first = select(query, vectors, k, method=DEFAULT_METHOD, **alone)
    run = select(query, vectors, k, method=DEFAULT_METHOD, **keywords)
    return first, run


def measure(corpus: Any, pools: Any) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    from vrsd_core import DEFAULT_METHOD
    from vrsd_kit.rerank import pool_keywords

    owner = np.asarray(corpus.passage_of)
    before: dict[int, list[bool]] = {k: [] for k in KS}
    after: dict[int, list[bool]] = {k: [] for k in KS}
    changed = dict.fromkeys(KS, 0)
    fewer = dict.fromkeys(KS, 0)
    called: dict[str, list[int]] = {"restates": [0, 0], "contains": [0, 0]}
    for b, rows in enumerate(pools.rows):
        keywords, judge = pool_keywords(DEFAULT_METHOD, pools.signals[b], pools.texts[b])
        assert judge is not None  # the default keeps no copy
        gold = set(corpus.gold[b])
        for k in KS:
            first, run = rule(pools.queries[b], pools.vectors[b], keywords, k)
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
    rows = [{"k": k, "before": float(np.mean(before[k])), "after": float(np.mean(after[k])),
             "changed": int(changed[k]), "fewer": int(fewer[k])} for k in KS]
    return rows, called


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["minilm", "lsa"],
                        help="geometries, as vrsd eval evidence --model (minilm lsa)")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions (500)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results file (docs/results/copies.json)")
    args = parser.parse_args()

    from vrsd_eval.evidence import EVIDENCE_FETCH_K, load_evidence_corpora
    from vrsd_eval.geometries import geometries
    from vrsd_eval.pools import build_pools

    corpora = load_evidence_corpora(limit=args.limit)
    command = "benchmarks/copies.py --model " + " ".join(args.model) + (
        f" --limit {args.limit}" if args.limit else "")
    data: dict = {"command": command, "fetch_k": EVIDENCE_FETCH_K,
                  "questions": len(corpora[0].questions), "ks": list(KS), "rows": [],
                  "precision": []}
    for geometry in geometries(args.model):
        totals = {"restates": [0, 0], "contains": [0, 0]}
        for corpus in corpora:
            start = time.perf_counter()
            pools = build_pools(corpus.texts, corpus.questions, geometry.fit(corpus.texts),
                                EVIDENCE_FETCH_K, desc=f"{geometry.name}/{corpus.name}",
                                show=False)
            rows, called = measure(corpus, pools)
            data["rows"] += [{"geometry": geometry.name, "corpus": corpus.name, **row}
                             for row in rows]
            print(f"\n{geometry.name}, {corpus.name} ({len(corpus.questions)} questions, "
                  f"fetch_k {EVIDENCE_FETCH_K}, {time.perf_counter() - start:.0f} s)\n")
            print("| k | all-evidence, core's picks | without copies | questions changed | "
                  "fewer than k |\n|---|---|---|---|---|")
            for row in rows:
                print(f"| {row['k']} | {row['before']:.4f} | {row['after']:.4f} | "
                      f"{row['changed']} | {row['fewer']} |")
            print(f"| mean | {np.mean([r['before'] for r in rows]):.4f} | "
                  f"{np.mean([r['after'] for r in rows]):.4f} | | |")
            for relation, (count, right) in called.items():
                totals[relation][0] += count
                totals[relation][1] += right
        data["precision"].append({"geometry": geometry.name, **{
            relation: {"called": int(count), "confirmed": int(right)}
            for relation, (count, right) in totals.items()}})
        both = [sum(v[i] for v in totals.values()) for i in (0, 1)]
        print(f"\n{geometry.name}: held-back passages called a copy, confirmed by the "
              f"paragraph (k = {', '.join(map(str, KS))}, three corpora): " + "; ".join(
                  f"{relation} {right}/{count} = {right / max(count, 1):.3f}"
                  for relation, (count, right) in totals.items())
              + f"; both {both[1]}/{both[0]} = {both[1] / max(both[0], 1):.3f}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
