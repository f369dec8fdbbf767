"""Report writing shared by the protocols: markdown tables, JSON, PNG plots."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_STYLE = dict(color="black", lw=2.6, zorder=3)  # the default's line in the plots


@dataclass(frozen=True)
class ProtocolReport:
    """How the evidence and the budget protocols write their results (``runs``: model
    name -> its results, one per corpus): the same tables, summary, JSON and plots,
    with their own columns (k, or token budgets) and baseline row."""

    stem: str  # the files: <stem>.md, <stem>.json, <stem>_<model>.png
    axis: str  # the JSON key of the columns
    keys: tuple[str, ...]  # the JSON names of ``res.cell``'s values
    column: Callable[[int], str]  # a column's heading
    cells: str  # what a cell shows
    cell_format: str  # ``res.cell``'s values formatted
    title: str  # the summary's heading
    baseline: str  # the row the default is held against
    baseline_name: str
    ylabel: str  # the plot: ``res.cell``'s value at ``y_value`` against the columns
    y_value: int
    xlabel: str
    emphasis: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    not_compared: frozenset[str] = frozenset()  # rows left out of the summary's best other

    def table(self, res: Any) -> str:
        """One corpus: a row per method or peer, a column per k or budget, the mean
        all-evidence rate."""
        title = (f"**{res.variant}** corpus ({res.n_corpus} texts, {res.n_questions} questions, "
                 f"fetch_k {res.fetch_k}, {res.model}); cells: {self.cells}")
        if res.reach is not None:
            recall, complete = res.reach
            title += (f". The {res.fetch_k} fetched hold all the evidence of {complete:.3f} of "
                      f"the questions (evidence recall {recall:.3f}): the most a row that "
                      "reranks them can find")
        return markdown_table(
            title,
            [self.column(c) for c in res.ks], res.labels,
            lambda label, i: self.cell_format.format(*res.cell(res.ks[i], label)),
            res.mean_all_evidence)

    def summary(self, runs: Mapping[str, Sequence[Any]]) -> str:
        return summary_table(runs, self.baseline, self.baseline_name, self.column,
                             self.not_compared)

    def document(self, runs: Mapping[str, Sequence[Any]]) -> str:
        """The summary, then every model's tables."""
        return report_document(self.title, self.summary(runs),
                               {results[0].model: [self.table(r) for r in results]
                                for results in runs.values() if results})

    def json(self, runs: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
        """model -> corpus -> run facts, every cell and every row's mean all-evidence."""
        return {name: results_json(results, self.axis, lambda res: res.ks, self.keys)
                for name, results in runs.items()}

    def plot(self, results: Sequence[Any], path: str | Path) -> Path:
        """PNG: one panel per corpus, one line per row, the default emphasised."""
        return plot_panels(results, path, xs=lambda res: res.ks,
                           y=lambda res, c, label: res.cell(c, label)[self.y_value],
                           xlabel=self.xlabel, ylabel=self.ylabel,
                           emphasis={"default": DEFAULT_STYLE, **self.emphasis})

    def write(self, runs: Mapping[str, Sequence[Any]], out_dir: str | Path) -> dict[str, Path]:
        """``<stem>.md``, ``<stem>.json`` and ``<stem>_<model>.png`` in ``out_dir``."""
        return write_outputs(out_dir, self.stem, self.document(runs), self.json(runs),
                             {name: functools.partial(self.plot, results)
                              for name, results in runs.items()})


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
                emphasis: Mapping[str, Mapping[str, Any]]) -> Path:
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
    name the values of ``res.cell``), every row's mean all-evidence rate and ``reach``
    (``EvidenceResult.reach``: what all the fetched candidates hold)."""
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
            **({} if res.reach is None else
               {"reach": {"recall": res.reach[0], "all_evidence": res.reach[1]}}),
        }
        for res in results
    }


def write_outputs(out_dir: str | Path, stem: str, markdown: str, data: dict[str, Any],
                  plots: Mapping[str, Callable[[Path], Path]] | None = None
                  ) -> dict[str, Path]:
    """``<stem>.md``, ``<stem>.json`` and, for each ``plots`` entry (name -> writer),
    ``<stem>_<name>.png`` in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / f"{stem}.md", "json": out / f"{stem}.json"}
    paths["markdown"].write_text(markdown, encoding="utf-8")
    paths["json"].write_text(json.dumps(data, indent=1), encoding="utf-8")
    for name, plot in (plots or {}).items():
        paths[f"plot {name}"] = plot(out / f"{stem}_{file_name(name)}.png")
    return paths


def file_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_.-]`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def summary_table(runs: Mapping[str, Sequence[Any]], baseline: str, baseline_name: str,
                  column: Callable[[int], str], not_compared: frozenset[str] = frozenset()
                  ) -> str:
    """Per model and corpus (and all corpora together): the ``default`` row's lowest
    recall minus ``baseline``'s over the columns, and the mean all-evidence rate of the
    default, of the baseline, of the best row by vectors only and of the best other row
    that reads the words (``not_compared`` left out), and of all the fetched candidates
    together (``EvidenceResult.reach``: the most a row that reranks them can find; a dash
    where a run does not say). Empty without both rows."""
    first = next((results[0] for results in runs.values() if results), None)
    fetched = f"all {first.fetch_k} fetched" if first is not None else "all fetched"
    lines = [f"| model | corpus | lowest recall, default − {baseline_name} | mean all-evidence: "
             f"default | {baseline_name} | best by vectors only | best other with words | "
             f"{fetched} |",
             "|---|---|---:|---:|---:|---|---|---:|"]
    for results in runs.values():
        if not results or not {"default", baseline} <= set(results[0].labels):
            return ""
        groups = [(res.variant, [res]) for res in results]
        if len(results) > 1:
            groups.append((f"**all {len(results)}**", list(results)))
        for corpus, group in groups:
            worst, where = min((r.cell(c, "default")[0] - r.cell(c, baseline)[0],
                                f"{r.variant}, {column(c)}" if len(group) > 1 else column(c))
                               for r in group for c in r.ks)
            mean = {lab: float(np.mean([r.mean_all_evidence(lab) for r in group]))
                    for lab in group[0].labels}
            others = [lab for lab in mean
                      if lab not in ("default", baseline) and lab not in not_compared]
            with_words = set(getattr(group[0], "words", ()))
            best = [_best(mean, [lab for lab in others if (lab in with_words) == words])
                    for words in (False, True)]
            reach = [r.reach for r in group if r.reach is not None]
            held = f"{np.mean([r[1] for r in reach]):.3f}" if len(reach) == len(group) else "—"
            lines.append(f"| {group[0].model} | {corpus} | {worst:+.3f} ({where}) | "
                         f"{mean['default']:.3f} | {mean[baseline]:.3f} | {best[0]} | "
                         f"{best[1]} | {held} |")
    return "\n".join(lines)


def _best(mean: Mapping[str, float], labels: Sequence[str]) -> str:
    """``0.612 (label)`` for the label of highest mean, or a dash for none."""
    if not labels:
        return "—"
    best = max(labels, key=lambda lab: mean[lab])
    return f"{mean[best]:.3f} ({best})"


def report_document(title: str, summary: str, tables: Mapping[str, Sequence[str]]) -> str:
    """A protocol's markdown: the summary under ``title`` (if any), then each model's
    tables under its name."""
    parts = [f"## {title}\n\n{summary}"] if summary else []
    parts += [f"## {model}\n\n" + "\n\n".join(model_tables)
              for model, model_tables in tables.items()]
    return "\n\n".join(parts) + "\n"


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


def progress(iterable: Any = None, *, enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm progress bar, on stderr and only when it is a terminal (and ``enabled``):
    a log file or a pipe gets no bar (the protocols' one place for progress bars)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not (enabled and sys.stderr.isatty()), **kwargs)
