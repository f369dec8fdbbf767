#!/usr/bin/env bash
# Create .venv and install vrsd with everything (tests, adapters, the bundled model).
# torch==2.13.0 goes in first: it is the CPU wheel on this machine's disk, and any
# unpinned torch request from sentence-transformers would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[${EXTRAS:-dev}]"
echo "vrsd installed in .venv (extras: ${EXTRAS:-dev})"
