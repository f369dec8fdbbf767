"""Regenerate every figure the README and the docs quote: run the protocols and the
benchmarks, write their results files to docs/results, and rewrite the generated blocks
(and docs/evaluation_tables.md, docs/evaluation.png) from them.

    .venv/bin/python scripts/figures.py               # everything (`make figures`)
    .venv/bin/python scripts/figures.py --only render # the blocks again, from docs/results

Steps (``--only`` runs a subset): ``evidence`` (``vrsd eval evidence --model all --docs``:
the four geometries at fixed k and at token budgets), ``paper`` (``vrsd eval paper``),
``gap`` (benchmarks/optimality_gap.py), ``speed`` (benchmarks/speed.py), ``index``
(benchmarks/indexing.py on the first 400 files of /usr/share/doc), then ``render``
(always). ``tests/test_docs_figures.py`` holds the pages to their results files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy

from vrsd_cli.cli import main as vrsd  # noqa: E402
from vrsd_eval import figures  # noqa: E402

PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
STEPS = ("evidence", "paper", "gap", "speed", "index", "render")


def run_evidence(work: Path, results: Path) -> None:
    out = work / "evidence"
    argv = ["eval", "evidence", "--model", "all", "--docs", "--no-progress",
            "--out", f"results/figures/{out.name}"]
    if vrsd(argv) != 0:
        raise SystemExit("vrsd eval evidence failed")
    for path in out.glob("evidence_*.json"):
        shutil.copyfile(path, results / path.name)
    shutil.copyfile(out / "evaluation_tables.md", ROOT / "docs" / "evaluation_tables.md")


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
    args = parser.parse_args()
    os.chdir(ROOT)  # the commands the docs record name paths relative to the checkout
    results = figures.RESULTS_DIR
    results.mkdir(parents=True, exist_ok=True)
    work = ROOT / "results" / "figures"  # the full outputs (gitignored)
    work.mkdir(parents=True, exist_ok=True)
    steps = {
        "evidence": lambda: run_evidence(work, results),
        "paper": lambda: run_paper(work, results),
        "gap": lambda: run_script("benchmarks/optimality_gap.py", "--json",
                                  "docs/results/optimality_gap.json",
                                  "--plot", "results/figures/optimality_gap.png"),
        "speed": lambda: run_script("benchmarks/speed.py", "--json", "docs/results/speed.json",
                                    "--plot", "results/figures/speed.png"),
        "index": lambda: run_script("benchmarks/indexing.py", "--limit", "400", "--json",
                                    "docs/results/indexing.json"),
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
