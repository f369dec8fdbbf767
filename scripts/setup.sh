#!/usr/bin/env bash
# Create .venv and install vrsd with the extras in $EXTRAS (default: dev, everything).
#
# torch goes in first, the CPU build: sentence-transformers asks for an unpinned torch,
# which on Linux pip would fill with a multi-GB CUDA build.
#   1. a torch that already imports in the venv is kept (e.g. the build your GPU needs);
#   2. else torch==$TORCH_VERSION from PyTorch's CPU index, PyPI beside it for torch's
#      own dependencies (pip's configured sources, e.g. a CPU wheel on local disk, count
#      too: a CPU wheel of that version wins over PyPI's CUDA one);
#   3. if that install fails (the CPU index unreachable and nothing else has the
#      version), the same version from pip's configured sources alone.
# Then it says which build it got, and warns if it is a CUDA one. The README's Install
# section says the same.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
PYPI=https://pypi.org/simple

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip "$@"; }
torch_build() {  # "2.13.0+cpu CPU" or "2.13.0 CUDA 12.8"; fails when torch does not import
    "$VENV/bin/python" -c 'import torch
print(torch.__version__, "CUDA " + torch.version.cuda if torch.version.cuda else "CPU")'
}

pip install --quiet --upgrade pip
if build=$(torch_build 2>/dev/null); then
    echo "torch: kept the one already installed ($build)"
else
    echo "torch: torch==$TORCH_VERSION, CPU build, from $TORCH_CPU_INDEX"
    if ! pip install --quiet --retries 1 --timeout 30 "torch==$TORCH_VERSION" \
            --index-url "$TORCH_CPU_INDEX" --extra-index-url "$PYPI"; then
        echo "torch: PyTorch's CPU index could not be used; torch==$TORCH_VERSION from" \
             "pip's configured sources instead" >&2
        pip install --quiet "torch==$TORCH_VERSION"
    fi
    build=$(torch_build)
    case "$build" in
        *CUDA*)
            echo "WARNING: torch $build is a CUDA build (several GB), not the CPU one." \
                 "For the CPU build: $VENV/bin/python -m pip install --force-reinstall" \
                 "torch==$TORCH_VERSION --index-url $TORCH_CPU_INDEX" \
                 "--extra-index-url $PYPI" >&2 ;;
        *) echo "torch: installed $build" ;;
    esac
fi
pip install --quiet -e ".[${EXTRAS:-dev}]"
echo "vrsd installed in $VENV (extras: ${EXTRAS:-dev}; torch $build)"
