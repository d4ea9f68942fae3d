#!/usr/bin/env bash
# Runs NVIDIA's classic cuda-python samples, unchanged, on cubind: each as
# `python SAMPLE` with CUBIND_CUDA_BINDINGS=1, which makes their
# `from cuda.bindings import driver, runtime, nvrtc` get cubind's modules
# (cubind/compat). For a GPU machine, over a tree built in place (this script
# builds and installs nothing).
#
#   scripts/run-classic-samples.sh [SAMPLES_DIR] [SAMPLE.py ...]
#
# SAMPLES_DIR (default .samples, at the repository root) is a copy of
# NVIDIA/cuda-python's cuda_bindings/examples tree, or the part of it to run
# (common/ with the samples beside it), for instance
#   git clone --depth 1 --branch v13.0.3 https://github.com/NVIDIA/cuda-python
#   scripts/run-classic-samples.sh cuda-python/cuda_bindings/examples
# The samples are never committed here: their license forbids redistribution
# (.gitignore keeps .samples/ out of git). They need numpy, and common/common.py
# imports cuda.pathfinder (pip install cuda-pathfinder).
#
# SAMPLE.py: the samples to run, as paths or relative to SAMPLES_DIR (default:
# every *_test.py under SAMPLES_DIR but those in common/). Each runs under
# `timeout 300` with SAMPLES_DIR and the repository root first on PYTHONPATH
# and CUDA_HOME (where the samples' NVRTC finds headers) /usr/local/cuda where
# unset. One line per sample (`sample: PATH: ok [N s]`, or FAILED with the
# exit status and the last 20 lines of its output), then
# `classic samples: P passed, F failed`; exits non-zero if any failed.
# PYTHON (default python3) names the interpreter.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TIMEOUT=300

case "${1:-}" in
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
SAMPLES_DIR="${1:-$ROOT/.samples}"
[ $# -gt 0 ] && shift
[ -d "$SAMPLES_DIR" ] || {
    echo "run-classic-samples.sh: no samples directory $SAMPLES_DIR (see --help for how to get the samples)" >&2
    exit 2
}
SAMPLES_DIR="$(cd "$SAMPLES_DIR" && pwd)"

samples=()
if [ $# -gt 0 ]; then
    for sample in "$@"; do
        if [ -f "$sample" ]; then
            samples+=("$(cd "$(dirname "$sample")" && pwd)/$(basename "$sample")")
        elif [ -f "$SAMPLES_DIR/$sample" ]; then
            samples+=("$SAMPLES_DIR/$sample")
        else
            echo "run-classic-samples.sh: no sample $sample (nor $SAMPLES_DIR/$sample)" >&2
            exit 2
        fi
    done
else
    while IFS= read -r sample; do samples+=("$sample"); done < <(
        find "$SAMPLES_DIR" -path "$SAMPLES_DIR/common" -prune -o -type f -name '*_test.py' -print | LC_ALL=C sort)
fi
[ ${#samples[@]} -gt 0 ] || { echo "run-classic-samples.sh: no *_test.py under $SAMPLES_DIR" >&2; exit 2; }

export CUBIND_CUDA_BINDINGS=1
export PYTHONPATH="$SAMPLES_DIR:$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
"$PYTHON" -c 'import cubind, cuda, nvrtc' >/dev/null 2>&1 || {
    echo "run-classic-samples.sh: cubind does not import in $("$PYTHON" -V 2>&1) (is the tree built? setup.py build_ext --inplace)" >&2
    exit 2
}
# The samples must meet cubind's modules, not NVIDIA's cuda-bindings installed
# beside them (a GPU machine often has it): say which one serves them.
served="$("$PYTHON" -c 'from cuda.bindings import driver, runtime, nvrtc
print(*(m.__name__ for m in (driver, runtime, nvrtc)))' 2>&1)" || served="(import failed) $served"
case "$served" in
    "cuda cuda.cudart nvrtc") echo "cuda.bindings served by cubind: driver, runtime, nvrtc are $served" ;;
    *) echo "run-classic-samples.sh: cuda.bindings is not served by cubind's modules: $served" >&2; exit 2 ;;
esac

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
passed=0
failed=0
for sample in "${samples[@]}"; do
    name="${sample#"$SAMPLES_DIR"/}"
    log="$out/sample.log"
    t=$SECONDS
    status=0
    timeout --kill-after=10 "$TIMEOUT" "$PYTHON" "$sample" >"$log" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "sample: $name: ok [$((SECONDS - t)) s]"
    else
        failed=$((failed + 1))
        why="exit $status"
        { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; } && why="$why, timed out after $TIMEOUT s"
        echo "sample: $name: FAILED ($why) [$((SECONDS - t)) s]"
        tail -n 20 "$log" | sed 's/^/    /'
    fi
done
echo "classic samples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
