"""The first screen of ``vrsd demo`` as a results file: per method and kind of question,
facts found, repeats and two-step evidence on the built-in folder (the bundled
all-MiniLM-L6-v2, k = 4 of fetch_k = 20, ``DiverseRetriever()`` as it comes), what the
README's "demo" block is rendered from (``vrsd_eval.figures.demo_table``).

    .venv/bin/python benchmarks/demo_table.py --json docs/results/demo.json

Prints the same counts as JSON when no file is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    from vrsd_cli.demo import DEFAULT_FETCH_K, DEFAULT_K, folder_figures
    from vrsd_core import DEFAULT_METHOD

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results file (docs/results/demo.json)")
    args = parser.parse_args()
    found = folder_figures(DEFAULT_K, DEFAULT_FETCH_K)
    names = {f"default: {DEFAULT_METHOD}": "default", "similarity": "top_k", "mmr": "mmr",
             "dpp": "dpp"}
    rows = {short: {kind: asdict(tally) for kind, tally in found[name].items()}
            for name, short in names.items()}
    default, top = rows["default"]["all"], rows["top_k"]["all"]
    data = {"command": " ".join(["benchmarks/demo_table.py", *sys.argv[1:]]),
            "model": "all-MiniLM-L6-v2", "k": DEFAULT_K, "fetch_k": DEFAULT_FETCH_K,
            "method": DEFAULT_METHOD,
            "fewer_facts": sum(a < b for a, b in zip(default["per_question"],
                                                      top["per_question"], strict=True)),
            "rows": rows}
    text = json.dumps(data, indent=1) + "\n"
    if args.json is None:
        print(text)
    else:
        args.json.write_text(text, encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
