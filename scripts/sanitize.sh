#!/usr/bin/env bash
# compute-sanitizer (memcheck, full leak check, every API error reported) over
# the tests that reach the GPU and every example, on a GPU machine with the
# tree built in place (this script builds nothing). The tests are selected by
# marker, file by file: those marked gpu (real hardware only) and backend (the
# real GPU where there is one; tests/conftest.py adds it). Tests that make a
# CUDA call fail on purpose are deselected (not provokes_api_error and not
# foreign_allocator): the sanitizer reports each failed call. Prints one
# summary line per file or example and exits non-zero unless every one says 0
# errors.
#
#   scripts/sanitize.sh                # PYTHON=python3 and compute-sanitizer from PATH or CUDA_HOME
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
PYTHON="${PYTHON:-python3}"
SANITIZER="${SANITIZER:-$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")}"
[ -x "$SANITIZER" ] || { echo "sanitize.sh: compute-sanitizer not found (set SANITIZER=)" >&2; exit 2; }
LOGS="${SANITIZE_LOGS:-$ROOT/.sanitize}"
mkdir -p "$LOGS"
FLAGS=(--tool memcheck --leak-check full --report-api-errors all --error-exitcode 0)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
# The thread stress test's rounds under the sanitizer (each call is checked, about 20x slower):
# its 1000 rounds run without it (the GPU suite); under it, what it checks is every thread's kind of call.
export CUBIND_STRESS_ROUNDS="${CUBIND_STRESS_ROUNDS:-40}"
# Tests that measure free device memory skip: under the sanitizer freed memory comes back to the count late.
export CUBIND_UNDER_SANITIZER=1
failed=0

summarize() {  # name, log, exit status of the program
    local summary
    summary="$(grep -h "ERROR SUMMARY" "$2" | tail -n 1 | sed 's/^=* *//')"
    [ -n "$summary" ] || summary="ERROR SUMMARY: none printed"
    echo "$1: $summary"
    if [ "$summary" != "ERROR SUMMARY: 0 errors" ] || [ "$3" -ne 0 ]; then
        [ "$3" -ne 0 ] && echo "$1: exited with status $3 (log: $2)"
        failed=1
    fi
}

SELECT="(gpu or backend) and not provokes_api_error and not foreign_allocator"
# The files that hold such tests (collection needs no GPU and no sanitizer).
mapfile -t GPU_FILES < <("$PYTHON" -m pytest -q -p no:cacheprovider --collect-only -m "$SELECT" tests 2>/dev/null |
    sed -n 's/::.*//p' | sort -u)
[ "${#GPU_FILES[@]}" -gt 0 ] || { echo "sanitize.sh: no test selected by -m \"$SELECT\"" >&2; exit 2; }
for test in "${GPU_FILES[@]}"; do
    log="$LOGS/$(basename "$test" .py).log"
    "$SANITIZER" "${FLAGS[@]}" "$PYTHON" -m pytest -q -p no:cacheprovider -m "$SELECT" "$test" >"$log" 2>&1
    summarize "$test" "$log" $?
done
for example in examples/*.py; do
    case "$(basename "$example")" in _*) continue ;; esac
    log="$LOGS/example_$(basename "$example" .py).log"
    flags=("${FLAGS[@]}")
    if [ "$(basename "$example")" = pythonic_interop.py ]; then
        # CuPy's and PyTorch's caching allocators keep what they were handed to exit: API errors checked, leaks not.
        flags=(--tool memcheck --leak-check no --report-api-errors all --error-exitcode 0)
        echo "$example: leak check off (CuPy's and PyTorch's caching allocators keep their memory to exit)"
    fi
    "$SANITIZER" "${flags[@]}" "$PYTHON" "$example" >"$log" 2>&1
    summarize "$example" "$log" $?
done
[ "$failed" -eq 0 ] || echo "sanitize.sh: not clean; the logs are in $LOGS" >&2
exit "$failed"
