"""Report writing shared by the protocols: markdown tables, JSON, PNG plots."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DEFAULT_STYLE = dict(color="black", lw=2.6, zorder=3)  # the default's line in the plots


def markdown_table(title: str, columns: Sequence[str], labels: Sequence[str],
                   cell: Callable[[str, int], str], mean: Callable[[str], float]) -> str:
    """A title line, then a row per label: a cell per column and the mean all-evidence
    (the evidence and the budget protocols' tables)."""
    lines = [title, "", f"| row | {' | '.join(columns)} | mean all-evidence |",
             "|---|" + "---|" * len(columns) + "---:|"]
    for label in labels:
        cells = " | ".join(cell(label, i) for i in range(len(columns)))
        lines.append(f"| {label} | {cells} | {mean(label):.3f} |")
    return "\n".join(lines)


def plot_panels(results: Sequence[Any], path: str | Path, *, xs: Callable[[Any], list[int]],
                y: Callable[[Any, int, str], float], xlabel: str, ylabel: str,
                emphasis: dict[str, dict[str, Any]]) -> Path:
    """PNG: one panel per corpus result, one line per row (``y(result, x, label)``);
    ``emphasis`` styles named rows, peers are dashed (both protocols' plots)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(7.5 * len(results), 5.6), squeeze=False)
    for ax, res in zip(axes[0], results, strict=True):
        for label in res.labels:
            style = emphasis.get(label) or dict(lw=1, ls="--" if label in res.peers else "-",
                                                alpha=0.8)
            ax.plot(xs(res), [y(res, x, label) for x in xs(res)], marker="o", ms=3,
                    label=label, **style)
        ax.set_title(f"{res.variant} corpus ({res.n_questions} questions, {res.model})")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xticks(xs(res))
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower right", ncol=2)
    return save_figure(fig, path)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Lay out ``fig``, write it to ``path`` as a PNG (folders made as needed), close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def results_json(results: Sequence[Any], axis: str, columns: Callable[[Any], Sequence[int]],
                 keys: Sequence[str]) -> dict[str, Any]:
    """The JSON of a protocol's results (the evidence and the budget protocol): per
    variant its run facts, every row's cell at every column under ``axis`` (``keys``
    name the values of ``res.cell``), and every row's mean all-evidence rate."""
    return {
        res.variant: {
            "n_questions": res.n_questions, "n_corpus": res.n_corpus, "fetch_k": res.fetch_k,
            "model": res.model, "seconds": round(res.seconds, 1), "peers": res.peers,
            axis: {
                str(col): {lab: dict(zip(keys, res.cell(col, lab), strict=True))
                           for lab in res.labels}
                for col in columns(res)
            },
            "mean_all_evidence": {lab: res.mean_all_evidence(lab) for lab in res.labels},
        }
        for res in results
    }


def write_outputs(out_dir: str | Path, stem: str, markdown: str, data: dict[str, Any],
                  plot: Callable[[Path], Path] | None = None) -> dict[str, Path]:
    """``<stem>.md``, ``<stem>.json`` and (with ``plot``) ``<stem>.png`` in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / f"{stem}.md", "json": out / f"{stem}.json"}
    paths["markdown"].write_text(markdown, encoding="utf-8")
    paths["json"].write_text(json.dumps(data, indent=1), encoding="utf-8")
    if plot is not None:
        paths["plot"] = plot(out / f"{stem}.png")
    return paths


def bar_panels(panels: Sequence[tuple[str, str, dict[str, dict[str, float]]]],
               path: str | Path, *, log: bool = False) -> Path:
    """PNG: one panel per ``(title, ylabel, {group: {bar: value}})``, each group's bars
    side by side (the benchmarks' plots); ``log``: logarithmic value axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widest = max(len(groups) for _, _, groups in panels)
    width = min(max(6.0, 1.6 * widest), 14.0) + 3  # the legend sits right of the bars
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels), 5), squeeze=False)
    for ax, (title, ylabel, groups) in zip(axes[0], panels, strict=True):
        bars = list(dict.fromkeys(bar for values in groups.values() for bar in values))
        width = 0.8 / len(bars)
        for i, bar in enumerate(bars):
            at = [(j, values[bar]) for j, values in enumerate(groups.values()) if bar in values]
            ax.bar([j + i * width for j, _ in at], [v for _, v in at], width, label=bar,
                   color=plt.cm.tab20(i % 20))
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], list(groups),
                      fontsize=8)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, path)
