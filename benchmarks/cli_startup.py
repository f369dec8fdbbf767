"""How long ``vrsd search`` makes a user wait: a new question and a repeated one.

``vrsd index`` builds an index of a folder (default: this repository's ``docs/``) in a
temporary folder, with a fresh embedding cache; then, in rounds, each ``vrsd search``
runs in a new Python process, timed from start to exit (the wait a user has):

* a new question (never asked: the query cache lacks it), its vector from the numpy
  encoder (``vrsd_kit.numpy_encoder``, what ``vrsd search`` does);
* the same, its vector from sentence-transformers (the model ``vrsd index`` encodes
  with; what ``vrsd search`` did before the numpy encoder: torch imported, the model
  loaded);
* a repeated question (its vector read from the query cache), under both.

The four cases run interleaved, round after round, so a change in the machine's load
falls on all of them; the median, fastest and slowest of ``--runs`` rounds are
printed, with the load average before and after (a machine others may share). Then
the numpy encoder alone, in this process: loading it, and encoding one question.

Run: ``.venv/bin/python benchmarks/cli_startup.py [FOLDER] [--runs 5]
[--json docs/results/cli_startup.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed copy

# ``vrsd argv`` as the console script runs it, then whether torch was imported. ENCODER
# "torch": the question goes to sentence-transformers, as without the numpy encoder.
PROGRAM = """
import sys
if sys.argv[1] == "torch":
    import vrsd_eval.lazy_embeddings as lazy
    lazy._numpy_encoder = lambda: None
from vrsd_cli.cli import main
code = main(sys.argv[2:])
print("exit", code, "torch", "torch" in sys.modules)
"""
ENCODERS = {"numpy": "vrsd search", "torch": "sentence-transformers encoding (before)"}
REPEATED = "how do I search a folder of notes?"


def run_vrsd(encoder: str, argv: list[str], env: dict[str, str]) -> tuple[float, bool]:
    """Seconds from start to exit of ``vrsd argv`` in a new Python, and whether it
    imported torch. Fails loudly on a non-zero exit or any warning."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROGRAM, encoder, *argv], env=env,
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if not last.startswith("exit 0 ") or proc.stderr.strip():
        raise SystemExit(f"vrsd {shlex.join(argv)} ({encoder}): {last}\n{proc.stderr}")
    return seconds, last.endswith("True")


def encoder_alone(runs: int) -> dict[str, float]:
    """The numpy encoder in this process: seconds to load it (first time), and the
    median milliseconds to encode one short question."""
    from vrsd_kit.bundled_model import bundled_model_path
    from vrsd_kit.numpy_encoder import NumpyEncoder

    start = time.perf_counter()
    encoder = NumpyEncoder(bundled_model_path())
    load = time.perf_counter() - start
    times = []
    for i in range(runs):
        start = time.perf_counter()
        encoder.embed([f"how fast does a kettle boil, take {i}?"])
        times.append(time.perf_counter() - start)
    return {"load_s": load, "question_ms": 1000 * statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "docs"))
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures to this JSON file (docs/results/"
                        "cli_startup.json: what docs/cli.md shows)")
    args = parser.parse_args()
    folder = Path(args.folder)
    with tempfile.TemporaryDirectory(prefix="vrsd_startup_") as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "VRSD_CACHE_DIR": f"{tmp}/cache"}
        index = ["--index-dir", f"{tmp}/index"]
        proc = subprocess.run([sys.executable, "-c", PROGRAM, "torch", "index", str(folder),
                               *index, "--no-progress"], env=env, capture_output=True,
                              text=True, check=True)
        chunks = int(re.search(r"(\d+) chunks", proc.stdout).group(1))  # type: ignore[union-attr]
        for encoder in ENCODERS:  # the repeated question, asked once before the rounds
            run_vrsd(encoder, ["search", REPEATED, *index], env)
        load_before = os.getloadavg()
        times: dict[tuple[str, str], list[float]] = {}
        torch_seen: dict[tuple[str, str], set[bool]] = {}
        for r in range(args.runs):
            for question in ("new", "repeated"):
                for encoder in ENCODERS:
                    text = (f"what does round {r} of {encoder} ask, {time.time_ns()}?"
                            if question == "new" else REPEATED)
                    seconds, torch = run_vrsd(encoder, ["search", text, *index], env)
                    times.setdefault((question, encoder), []).append(seconds)
                    torch_seen.setdefault((question, encoder), set()).add(torch)
        load_after = os.getloadavg()
    alone = encoder_alone(args.runs)
    rows: list[dict[str, Any]] = [
        {"question": question, "encoder": encoder, "torch": sorted(torch_seen[key]),
         "median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "times_s": t}
        for key, t in times.items() for question, encoder in [key]]
    command = shlex.join(["benchmarks/cli_startup.py", *sys.argv[1:]])
    print(f"vrsd search, start to exit in a new process; index of {folder} ({chunks} chunks); "
          f"median of {args.runs} interleaved rounds; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(f"{'question':<10} {'run as':<40} {'median s':>9} {'min s':>7} {'max s':>7}  torch")
    for row in rows:
        print(f"{row['question']:<10} {ENCODERS[row['encoder']]:<40} {row['median_s']:>9.2f} "
              f"{row['min_s']:>7.2f} {row['max_s']:>7.2f}  {row['torch']}")
    print(f"the numpy encoder alone: loaded in {alone['load_s']:.2f} s, one question in "
          f"{alone['question_ms']:.0f} ms")
    if args.json:
        data = {"command": command, "folder": folder.name, "chunks": chunks, "runs": args.runs,
                "cpus": os.cpu_count(), "load_before": round(load_before[0], 1),
                "load_after": round(load_after[0], 1), "rows": rows, "encoder": alone}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
