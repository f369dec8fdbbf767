#!/usr/bin/env bash
# Create .venv and install vrsd with the extras in $EXTRAS (default: dev, everything).
#
# torch goes in first, the CPU build: sentence-transformers asks for an unpinned torch,
# which on Linux pip would fill with a multi-GB CUDA build. Where it comes from is probed
# once, quietly (pip's resolver in --dry-run, no retries), in this order:
#   1. a torch that already imports in the venv is kept (e.g. the build your GPU needs);
#   2. a local wheel of torch==$TORCH_VERSION in pip's configured sources (find-links,
#      a file:// index: a CPU wheel on disk, no network needed);
#   3. torch==$TORCH_VERSION from PyTorch's CPU index, PyPI beside it for torch's own
#      dependencies;
#   4. torch==$TORCH_VERSION from pip's configured sources (PyPI: on Linux a CUDA build).
# It says in one line which source gave it (the file or index pip took it from), and
# warns if it is a CUDA build. The README's Install section says the same.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
PYPI=https://pypi.org/simple
CPU_SOURCE=(--index-url "$TORCH_CPU_INDEX" --extra-index-url "$PYPI")

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip "$@"; }
torch_build() {  # "2.13.0+cpu CPU" or "2.13.0 CUDA 12.8"; fails when torch does not import
    # (torch alone, before numpy is installed, warns that it cannot initialise NumPy)
    "$VENV/bin/python" -W "ignore:Failed to initialize NumPy:UserWarning" -c 'import torch
print(torch.__version__, "CUDA " + torch.version.cuda if torch.version.cuda else "CPU")'
}
probe() {  # the URL pip would take torch==$TORCH_VERSION from with these sources, or nothing
    local report
    report=$(mktemp)
    if pip install --dry-run --ignore-installed --no-deps --quiet --retries 0 --timeout 15 \
            --report "$report" "torch==$TORCH_VERSION" "$@" >/dev/null 2>&1; then
        "$VENV/bin/python" -c 'import json, sys, urllib.parse
print(urllib.parse.unquote(json.load(open(sys.argv[1]))["install"][0]["download_info"]["url"]))' \
            "$report" 2>/dev/null || true
    fi
    rm -f "$report"
}
quietly() {  # run "$@" with its stderr kept aside, shown only if it fails
    local log status=0
    log=$(mktemp)
    "$@" 2>"$log" || status=$?
    [ "$status" -eq 0 ] || cat "$log" >&2
    rm -f "$log"
    return "$status"
}

pip install --quiet --retries 0 --upgrade pip >/dev/null 2>&1 || true  # offline: keep it
if build=$(torch_build 2>/dev/null); then
    echo "torch: kept the one already installed ($build)"
else
    url=$(probe)
    if [[ $url == file:* ]]; then
        sources=() from="a local wheel, ${url#file://}"
    elif cpu_url=$(probe "${CPU_SOURCE[@]}") && [[ $cpu_url == https://download.pytorch.org/* ]]
    then
        sources=("${CPU_SOURCE[@]}") from="PyTorch's CPU index, $cpu_url"
    elif [ -n "$url" ]; then
        sources=() from="pip's configured sources, $url"
    else
        echo "torch: torch==$TORCH_VERSION is in none of pip's configured sources nor" \
             "PyTorch's CPU index ($TORCH_CPU_INDEX): offline? Install it, then run this" \
             "again: $VENV/bin/python -m pip install torch==$TORCH_VERSION" \
             "--index-url $TORCH_CPU_INDEX" >&2
        exit 1
    fi
    quietly pip install --quiet "torch==$TORCH_VERSION" ${sources[@]+"${sources[@]}"}
    build=$(torch_build)
    echo "torch: installed $build from $from"
    case "$build" in
        *CUDA*)
            echo "WARNING: torch $build is a CUDA build (several GB), not the CPU one." \
                 "For the CPU build: $VENV/bin/python -m pip install --force-reinstall" \
                 "torch==$TORCH_VERSION --index-url $TORCH_CPU_INDEX" \
                 "--extra-index-url $PYPI" >&2 ;;
    esac
fi
quietly pip install --quiet -e ".[${EXTRAS:-dev}]"
echo "vrsd installed in $VENV (extras: ${EXTRAS:-dev}; torch $build)"
