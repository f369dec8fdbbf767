"""The plot of docs/evaluation.md: per embedding geometry, the mean all-evidence rate
(averaged over k and the plain, redundant and chunked corpora) of plain top-k, the best
row that reads the vectors only, the default, a full hybrid search and the default over
it, from the ``evidence.json`` each ``vrsd eval --protocol evidence --model M --docs
--out results/M`` writes.

    .venv/bin/python benchmarks/evaluation_plot.py results/*/evidence.json --out docs/evaluation.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# rows that read the words, or search beyond the 50 nearest vectors: not "vectors only"
NOT_VECTORS_ONLY = {"default", "top-k by words and vectors", "hybrid bm25+dense (rrf)",
                    "default over hybrid"}
BARS = (("top-k", "#868e96"), ("best by vectors only", "#74c0fc"), ("the default", "#1c7ed6"),
        ("hybrid bm25+dense", "#ffc078"), ("the default over hybrid", "#e8590c"))


def means(path: Path) -> dict[str, tuple[str, list[float]]]:
    """{model label: (the best vectors-only row's name, the five bars' values)}."""
    out = {}
    for runs in json.loads(path.read_text(encoding="utf-8")).values():
        corpora = list(runs.values())
        labels = corpora[0]["mean_all_evidence"]
        mean = {lab: sum(c["mean_all_evidence"][lab] for c in corpora) / len(corpora)
                for lab in labels}
        best = max((lab for lab in mean if lab not in NOT_VECTORS_ONLY), key=mean.__getitem__)
        out[corpora[0]["model"]] = (best, [mean["similarity"], mean[best], mean["default"],
                                           mean["hybrid bm25+dense (rrf)"],
                                           mean["default over hybrid"]])
    return out


def _short(model: str) -> str:
    """A tick label: the model's name, "e5, questions as passages" for that geometry."""
    name = model.split(" (")[0]
    return f"{name},\nquestions as passages" if "questions as passages" in model else name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="evidence.json files")
    parser.add_argument("--out", type=Path, default=Path("evaluation.png"))
    args = parser.parse_args()
    from matplotlib.figure import Figure

    found: dict[str, tuple[str, list[float]]] = {}
    for path in args.results:
        found.update(means(path))
    fig = Figure(figsize=(9, 3.8), dpi=110)
    ax = fig.subplots()
    width = 0.16
    for i, (label, colour) in enumerate(BARS):
        xs = [m + (i - 2) * width for m in range(len(found))]
        values = [bars[i] for _, bars in found.values()]
        ax.bar(xs, values, width=width, color=colour, label=label)
        for x, v in zip(xs, values, strict=True):
            ax.annotate(f"{v:.2f}", (x, v), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(found)), [_short(model) for model in found])
    ax.set_ylabel("mean all-evidence rate")
    ax.set_ylim(0, 1)
    ax.legend(frameon=False, fontsize=8, ncols=5, loc="upper center")
    fig.tight_layout()
    fig.savefig(args.out)
    for model, (best, bars) in found.items():
        print(model, f"(best by vectors only: {best})", " ".join(f"{v:.3f}" for v in bars))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
