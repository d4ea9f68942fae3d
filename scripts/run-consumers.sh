#!/usr/bin/env bash
# Runs the released libraries built on NVIDIA's bindings, unchanged, on
# cubind (issue 44): with CUBIND_CUDA_BINDINGS=1 their `cuda.bindings` (the
# Python-level modules and the C-level cydriver, cynvrtc, cynvjitlink, cynvvm
# they are compiled against) is cubind's. For a GPU machine with cuda-core
# 1.x and numba-cuda installed (site-wide, or on PYTHONPATH), over a tree
# built in place (this script builds and installs nothing).
#
#   scripts/run-consumers.sh [CUDA_CORE_EXAMPLES_DIR]
#
# Runs, each under `timeout 300` with the repository root first on
# PYTHONPATH:
#   - examples/consumers/numba_kernels.py: numba-cuda's @cuda.jit kernels (a
#     saxpy, a shared-memory sum with cuda.atomic.add, math.sin through
#     libdevice), checked with numpy; it must say cubind served cuda.bindings;
#   - examples/consumers/cuda_core_saxpy.py: cuda.core's Device, Stream,
#     Program, launch and buffer copies, checked with numpy; likewise;
#   - every *.py in CUDA_CORE_EXAMPLES_DIR (default .samples/cuda_core, at the
#     repository root, where it exists): cuda.core's own examples, for
#     instance NVIDIA/cuda-python's cuda_core/examples at the tag of the
#     installed cuda-core (never committed here: .gitignore keeps .samples/
#     out). Some want CuPy, PyTorch or several GPUs: their failures say so.
# One line per program (`consumer: NAME: ok [N s]`, or FAILED with the exit
# status and the last 20 lines of its output), then
# `consumers: P passed, F failed`; exits non-zero if any failed, and with 2
# without a GPU, without the tree built, or without cuda.core or numba-cuda.
# PYTHON (default python3) names the interpreter.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
# An absolute path: each program runs from its own directory.
command -v "$PYTHON" >/dev/null || { echo "run-consumers.sh: no interpreter $PYTHON" >&2; exit 2; }
PYTHON="$(command -v "$PYTHON")"
PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")"  # not resolved: a venv's stays the venv's
TIMEOUT=300

case "${1:-}" in
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
EXAMPLES_DIR="${1:-$ROOT/.samples/cuda_core}"
if [ $# -gt 0 ] && [ ! -d "$EXAMPLES_DIR" ]; then
    echo "run-consumers.sh: no directory $EXAMPLES_DIR (see --help)" >&2
    exit 2
fi

export CUBIND_CUDA_BINDINGS=1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -c 'import cubind, cuda, nvrtc' >/dev/null 2>&1 || {
    echo "run-consumers.sh: cubind does not import in $("$PYTHON" -V 2>&1) (is the tree built? setup.py build_ext --inplace)" >&2
    exit 2
}
gpu="$(cd "$ROOT/examples/consumers" && "$PYTHON" -c 'from _gpu import no_gpu_reason; print(no_gpu_reason() or "")' 2>&1)" ||
    gpu="the GPU check failed: $gpu"
[ -z "$gpu" ] || { echo "run-consumers.sh: no GPU: $gpu" >&2; exit 2; }
# The consumers, and which bindings serve them: cubind's, not NVIDIA's
# cuda-bindings installed beside them (the GPU machine has it).
versions="$("$PYTHON" -c 'import importlib.metadata as m
print(*(f"{d} {m.version(d)}" for d in ("cuda-core", "numba-cuda", "numba")), sep=", ")' 2>&1)" || {
    echo "run-consumers.sh: cuda-core, numba-cuda and numba must be installed: ${versions##*$'\n'}" >&2
    exit 2
}
served="$("$PYTHON" -c 'import cuda.core, numba.cuda, sys
from cuda.bindings import driver
print(driver.__name__, getattr(sys.modules.get("cuda.bindings.cydriver"), "__file__", None))' 2>&1)" ||
    served="(import failed) ${served##*$'\n'}"
case "$served" in
    "cuda $ROOT/cuda/_cydriver"*) echo "consumers: $versions; cuda.bindings served by cubind ($served)" ;;
    *) echo "run-consumers.sh: cuda.core and numba.cuda do not import on cubind's cuda.bindings: $served" >&2; exit 2 ;;
esac

programs=("$ROOT/examples/consumers/numba_kernels.py" "$ROOT/examples/consumers/cuda_core_saxpy.py")
if [ -d "$EXAMPLES_DIR" ]; then
    while IFS= read -r example; do programs+=("$example"); done < <(
        find "$EXAMPLES_DIR" -type f -name '*.py' ! -name '_*' | LC_ALL=C sort)
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
passed=0
failed=0
for program in "${programs[@]}"; do
    name="${program#"$ROOT"/}"
    log="$out/program.log"
    t=$SECONDS
    status=0
    (cd "$(dirname "$program")" && timeout --kill-after=10 "$TIMEOUT" "$PYTHON" "$program") >"$log" 2>&1 || status=$?
    # Ours must also have said that cubind served them.
    case "$name" in
        examples/consumers/*) [ "$status" -ne 0 ] || grep -q "served by cubind" "$log" || status=99 ;;
    esac
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "consumer: $name: ok [$((SECONDS - t)) s]"
    else
        failed=$((failed + 1))
        why="exit $status"
        { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; } && why="$why, timed out after $TIMEOUT s"
        [ "$status" -eq 99 ] && why="ran, but not on cubind's cuda.bindings"
        echo "consumer: $name: FAILED ($why) [$((SECONDS - t)) s]"
        tail -n 20 "$log" | sed 's/^/    /'
    fi
done
echo "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
