#!/usr/bin/env bash
# The whole verification on a GPU machine, over a tree built in place (this
# script builds nothing; see docs/building.md "Checking on a GPU machine" for building
# on one machine and running here):
#   1. the suite (pytest tests; the packaging and build-layout tests, which
#      build wheels and whole trees, are left to CI);
#   2. compute-sanitizer (memcheck, full leak check, every API error
#      reported) over every test file holding GPU tests and every example
#      and YAML app, N at a time, each under a timeout;
#   3. the YAML apps and the graph examples, run plainly;
#   4. the consumers (scripts/run-consumers.sh): numba-cuda's kernels and
#      cuda.core's saxpy (examples/consumers/), and cuda.core's own examples
#      where .samples/cuda_core holds them, on cubind's cuda.bindings;
#   5. with --bench, the benches (bench/run.py, pythonic_launch.py, copy_forms.py,
#      compute_graph.py, graph_messages.py), their tables printed.
# Ends with one summary block (pytest's summary line, one ERROR SUMMARY line
# per file or example, the apps, the consumers, the bench tables) and exits non-zero on any
# failure. Logs go to GPU_CHECK_LOGS (default .gpu-check/).
#
#   scripts/gpu-check.sh [-j N] [--timeout S] [--bench] [--only suite|sanitize|apps|consumers|bench]...
#                        [--wheels DIR] [-- PYTEST_ARGS...]
#
# -j N: sanitizer jobs at a time (default: the CPU count, at most 10).
# --timeout S: the limit of one sanitized file or example (default 420 s).
# --wheels DIR: installs DIR/*.whl (no index, no dependencies) into a
#   directory put on PYTHONPATH first: test and app dependencies a GPU
#   machine lacks (PyYAML), downloaded elsewhere; a cuda-core wheel (the
#   version tests/bindings/test_cuda_core.py is written for) goes apart, for those
#   tests only (CUBIND_CUDA_CORE_PATH).
# PYTHON (default python3) and SANITIZER (default compute-sanitizer from
# PATH, else CUDA_HOME/bin) name the tools.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
PYTHON="${PYTHON:-python3}"
JOBS=$(( $(nproc 2>/dev/null || echo 4) < 10 ? $(nproc 2>/dev/null || echo 4) : 10 ))
TIMEOUT=420
BENCH=0
ONLY=()
WHEELS=""
PYTEST_ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        -j) JOBS="$2"; shift 2 ;;
        -j*) JOBS="${1#-j}"; shift ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        --bench) BENCH=1; shift ;;
        --only) ONLY+=("$2"); shift 2 ;;
        --wheels) WHEELS="$2"; shift 2 ;;
        --) shift; PYTEST_ARGS=("$@"); break ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "gpu-check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$JOBS" in ''|*[!0-9]*|0) echo "gpu-check.sh: -j takes a positive number, not '$JOBS'" >&2; exit 2 ;; esac
case "$TIMEOUT" in ''|*[!0-9]*|0) echo "gpu-check.sh: --timeout takes seconds, not '$TIMEOUT'" >&2; exit 2 ;; esac
[ ${#ONLY[@]} -gt 0 ] || { ONLY=(suite sanitize apps consumers); [ "$BENCH" -eq 1 ] && ONLY+=(bench); }
wants() { local part; for part in "${ONLY[@]}"; do [ "$part" = "$1" ] && return 0; done; return 1; }
for part in "${ONLY[@]}"; do
    case "$part" in suite|sanitize|apps|consumers|bench) ;; *) echo "gpu-check.sh: --only takes suite, sanitize, apps, consumers or bench, not '$part'" >&2; exit 2 ;; esac
done

LOGS="${GPU_CHECK_LOGS:-$ROOT/.gpu-check}"
rm -rf "$LOGS" && mkdir -p "$LOGS/sanitize"
SUMMARY="$LOGS/summary.txt"
: >"$SUMMARY"
failed=0
start=$SECONDS
say() { echo "$*" | tee -a "$SUMMARY"; }
fail() { say "$*"; failed=1; }

install_wheels() {  # target, wheels...
    local target="$1"; shift
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$target" "$@" \
        >>"$LOGS/wheels.log" 2>&1 || { echo "gpu-check.sh: installing $* failed (log: $LOGS/wheels.log)" >&2; exit 2; }
}
if [ -n "$WHEELS" ]; then
    shopt -s nullglob
    core=("$WHEELS"/cuda_core-*.whl)
    others=()
    for wheel in "$WHEELS"/*.whl; do case "$(basename "$wheel")" in cuda_core-*) ;; *) others+=("$wheel") ;; esac; done
    shopt -u nullglob
    [ ${#core[@]} -gt 0 ] || [ ${#others[@]} -gt 0 ] || { echo "gpu-check.sh: no wheel in $WHEELS" >&2; exit 2; }
    if [ ${#others[@]} -gt 0 ]; then
        install_wheels "$LOGS/site" "${others[@]}"
        export PYTHONPATH="$LOGS/site${PYTHONPATH:+:$PYTHONPATH}"
    fi
    if [ ${#core[@]} -gt 0 ]; then
        # The cuda.core tests' pinned version, apart: put on everyone's path, it
        # would shadow the machine's own cuda.core, which numba needs.
        install_wheels "$LOGS/cuda-core" "${core[@]}"
        export CUBIND_CUDA_CORE_PATH="$LOGS/cuda-core"
    fi
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -c 'import cuda, nvrtc, cubind' 2>"$LOGS/import.log" || {
    echo "gpu-check.sh: the tree is not built for $("$PYTHON" -V 2>&1) (setup.py build_ext --inplace; log: $LOGS/import.log)" >&2
    exit 2
}
"$PYTHON" -c 'import sys, tests.conftest as c; r = c.gpu_unavailable_reason(); print(r or "", end=""); sys.exit(r is not None)' \
    >"$LOGS/gpu.txt" 2>&1 || { echo "gpu-check.sh: $(cat "$LOGS/gpu.txt")" >&2; exit 2; }

# ---- 1. the suite ---------------------------------------------------------------
if wants suite; then
    t=$SECONDS
    "$PYTHON" -m pytest -q -p no:cacheprovider -ra tests \
        --ignore=tests/packaging/test_packaging.py --ignore=tests/packaging/test_build_layouts.py "${PYTEST_ARGS[@]}" \
        >"$LOGS/suite.log" 2>&1
    status=$?
    line="$(grep -a -E '(passed|failed|error|skipped).* in [0-9.]+s' "$LOGS/suite.log" | tail -n 1 | tr -d '=' | sed 's/^ *//;s/ *$//')"
    [ -n "$line" ] || line="no summary line (log: $LOGS/suite.log)"
    if [ "$status" -ne 0 ]; then
        fail "suite: $line [exit $status, $((SECONDS - t)) s]"
        grep -a -E '^(FAILED|ERROR) ' "$LOGS/suite.log" | head -n 40 | tee -a "$SUMMARY"
    else
        say "suite: $line [$((SECONDS - t)) s]"
    fi
fi

# ---- 2. the sanitizer -----------------------------------------------------------
# What a sanitized test file runs: its GPU tests but those that make calls fail
# on purpose, hand memory to a caching allocator kept to exit, or run another
# library's CUDA code (markers in tests/conftest.py).
SELECT="(gpu or backend) and not provokes_api_error and not foreign_allocator and not foreign_code"
sanitize_one() {  # kind (test|example|app), path; prints "name<TAB>summary<TAB>exit status"
    local kind="$1" path="$2" name log flags cmd status summary
    flags=(--tool memcheck --leak-check full --report-api-errors all --error-exitcode 0)
    case "$kind" in
        test) name="$path"; cmd=("$PYTHON" -m pytest -q -p no:cacheprovider -m "$SELECT" "$path") ;;
        example) name="$path"; cmd=("$PYTHON" "$path") ;;
        app) name="python -m cubind.graph $path"; cmd=("$PYTHON" -m cubind.graph "$path") ;;
    esac
    if [ "$(basename "$path")" = pythonic_interop.py ]; then
        # CuPy's and PyTorch's caching allocators keep what they were handed to exit: API errors checked, leaks not.
        flags=(--tool memcheck --leak-check no --report-api-errors all --error-exitcode 0)
        name="$name (leak check off: CuPy's and PyTorch's allocators keep their memory to exit)"
    fi
    log="$SANITIZE_LOGS/$(echo "$kind-$path" | tr '/.' '__').log"
    timeout --kill-after=10 "$SANITIZE_TIMEOUT" "$SANITIZER" "${flags[@]}" "${cmd[@]}" >"$log" 2>&1
    status=$?
    summary="$(grep -a -h "ERROR SUMMARY" "$log" | tail -n 1 | sed 's/^=* *//')"
    if [ -z "$summary" ] && grep -a -q "Target application terminated before first instrumented API call" "$log"; then
        # A program that never calls CUDA (a host-only app): nothing to check;
        # whether it ran well is the apps step's to say.
        summary="ERROR SUMMARY: 0 errors (no CUDA call made)"
        status=0
    fi
    [ "$status" -eq 124 ] || [ "$status" -eq 137 ] && summary="timed out after $SANITIZE_TIMEOUT s"
    [ -n "$summary" ] || summary="ERROR SUMMARY: none printed"
    printf '%s\t%s\t%s\t%s\n' "$name" "$summary" "$status" "$log"
}
if wants sanitize; then
    t=$SECONDS
    SANITIZER="${SANITIZER:-$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")}"
    if [ ! -x "$SANITIZER" ]; then
        fail "sanitize: compute-sanitizer not found (set SANITIZER=)"
    else
        # The thread stress test's rounds under the sanitizer (each call is
        # checked, about 20x slower); tests that measure free device memory skip
        # (freed memory comes back to the count late under it).
        export CUBIND_STRESS_ROUNDS="${CUBIND_STRESS_ROUNDS:-40}" CUBIND_UNDER_SANITIZER=1
        export SANITIZER SANITIZE_LOGS="$LOGS/sanitize" SANITIZE_TIMEOUT="$TIMEOUT" PYTHON SELECT
        export -f sanitize_one
        jobs_file="$LOGS/sanitize-jobs.txt"
        "$PYTHON" -m pytest -q -p no:cacheprovider --collect-only -m "$SELECT" tests 2>"$LOGS/collect.log" |
            sed -n 's/::.*//p' | sort -u | sed 's/^/test /' >"$jobs_file"
        for example in examples/*.py examples/graph/*.py; do
            case "$(basename "$example")" in _*) continue ;; esac
            echo "example $example" >>"$jobs_file"
        done
        for app in examples/graph/*.yaml; do echo "app $app" >>"$jobs_file"; done
        # The slowest first, so that they do not end the pass alone.
        { grep -E 'test_cuda_core|test_threads|test_compute|test_driver' "$jobs_file"
          grep -vE 'test_cuda_core|test_threads|test_compute|test_driver' "$jobs_file"; } >"$jobs_file.ordered"
        xargs -P "$JOBS" -L 1 bash -c 'sanitize_one "$0" "$1"' <"$jobs_file.ordered" >"$LOGS/sanitize.tsv"
        count=0
        while IFS=$'\t' read -r name summary status log; do
            count=$((count + 1))
            if [ "${summary% (no CUDA call made)}" != "ERROR SUMMARY: 0 errors" ] || [ "$status" -ne 0 ]; then
                fail "sanitize: $name: $summary [exit $status; log: $log]"
            else
                say "sanitize: $name: $summary"
            fi
        done < <(sort "$LOGS/sanitize.tsv")
        [ "$count" -gt 0 ] || fail "sanitize: nothing ran (-m \"$SELECT\" selected no test; $LOGS/collect.log)"
        say "sanitize: $count files and examples, $JOBS at a time [$((SECONDS - t)) s]"
    fi
fi

# ---- 3. the apps ----------------------------------------------------------------
if wants apps; then
    for app in examples/graph/*.yaml examples/graph/*.py; do
        log="$LOGS/app-$(basename "$app").log"
        case "$app" in
            *.yaml) timeout 300 "$PYTHON" -m cubind.graph "$app" >"$log" 2>&1 ;;
            *) timeout 300 "$PYTHON" "$app" >"$log" 2>&1 ;;
        esac
        status=$?
        if [ "$status" -ne 0 ]; then
            fail "app: $app: exit $status ($(tail -n 1 "$log"))"
        else
            say "app: $app: ok ($(grep -c . "$log") lines of output)"
        fi
    done
fi

# ---- 4. the consumers -----------------------------------------------------------
# The machine's own cuda.core and numba-cuda, on cubind's cuda.bindings: the
# --wheels cuda-core (CUBIND_CUDA_CORE_PATH) is for the suite's tests only.
if wants consumers; then
    t=$SECONDS
    log="$LOGS/consumers.log"
    PYTHON="$PYTHON" scripts/run-consumers.sh >"$log" 2>&1
    status=$?
    # Its lines: the versions and who served cuda.bindings, one per program, the count.
    grep -a -E '^consumers?: ' "$log" | tee -a "$SUMMARY"
    if [ "$status" -ne 0 ]; then
        fail "consumers: exit $status [$((SECONDS - t)) s] ($(tail -n 1 "$log"); log: $log)"
    else
        say "consumers: ok [$((SECONDS - t)) s]"
    fi
fi

# ---- 5. the benches -------------------------------------------------------------
if wants bench; then
    for bench in bench/run.py bench/pythonic_launch.py bench/copy_forms.py bench/compute_graph.py bench/graph_messages.py; do
        log="$LOGS/bench-$(basename "$bench" .py).log"
        t=$SECONDS
        timeout 600 "$PYTHON" "$bench" >"$log" 2>&1
        status=$?
        if [ "$status" -ne 0 ]; then
            fail "bench: $bench: exit $status [$((SECONDS - t)) s] ($(tail -n 1 "$log"))"
        else
            say "bench: $bench [$((SECONDS - t)) s]"
            grep -a -E '^\|' "$log" | tee -a "$SUMMARY"
        fi
    done
fi

echo
echo "==== gpu-check summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1); $("$PYTHON" -V 2>&1)) ===="
cat "$SUMMARY"
echo "==== $([ "$failed" -eq 0 ] && echo "all green" || echo "NOT green") in $((SECONDS - start)) s; logs in $LOGS ===="
exit "$failed"
