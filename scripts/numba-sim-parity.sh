#!/usr/bin/env bash
# numba-cuda's own test suite in its simulator (NUMBA_ENABLE_CUDASIM=1: no GPU,
# no driver), run twice from one install: (a) on NVIDIA's cuda-bindings, (b) on
# cubind serving the cuda.bindings names (CUBIND_CUDA_BINDINGS=1, the tree
# built in place first on PYTHONPATH: run scripts/test.sh first), then compared
# test by test. It fails if a test that passed on NVIDIA's bindings did not pass
# on cubind (failed, errored, was skipped or did not run), unless
# tests/data/numba_sim_flaky.txt lists it: tests seen to flip on NVIDIA's
# bindings alone, each with its reason.
#
# Its own venv, .venv-numba/, made once from the interpreter _common.sh picks
# (PYTHON: the in-place build's modules are that version's), because what it
# pins must not enter the project's .venv/ (cuda-core 0.3.2 there): numba-cuda
# 0.30 with the numba it resolves to today (0.68; llvmlite follows), numpy
# < 2.4 (the issue's pin for numba-cuda 0.30), cuda-bindings 13.0.3 (the
# toolkit CI builds against), cuda-core 1.2 and cuda-pathfinder 1.9 (numba.cuda
# imports both, simulator or not); then what the suite's modules import:
# filecheck (numba.cuda.testing), cffi, ml_dtypes, psutil, and pytest 8 with
# pytest-xdist (numba-cuda's test requirements, its pixi.toml).
#
# Run as numba-cuda's CI runs it (`pixi run simtest`): pytest over `--pyargs
# numba.cuda.tests` with its testing/pytest.ini (namespace packages; xdist's
# --dist loadscope, which keeps a CUDATestCase class in one worker) and its
# conftest.py (the initialize_from_pytest_config fixture every CUDATestCase
# uses); neither ships in the wheel, so both are written below into a
# temporary directory. Not `python -m numba.runtests numba.cuda.tests`: its
# loader dies on the first module that raises SkipTest at import under the
# simulator (cudapy/test_flow_control.py). Two workers (-n 2: CI's 2 cores).
#
# What of the bindings this exercises: no kernel reaches a driver in the
# simulator, and no test calls a binding from Python (traced: at test time,
# probes of attribute names only). It is the import of numba.cuda and
# cuda.core, in every process (test_print.py's cases each start one more):
# numba's cudadrv/driver.py (cuda.bindings.driver as `binding`,
# utils.get_cuda_native_handle, the _internal.nvjitlink and _internal.utils
# probes), nvrtc.py (nvrtc.nvrtcProgram, nvrtcResult), nvvm.py
# (nvvm.nvvmError, _internal.nvvm), mappings.py (driver.CUjitInputType),
# runtime.cudaError_t and getLocalRuntimeVersion, typing/typeof.py
# (_internal._fast_enum); and cuda.core 1.2's cu13 Cython modules, which
# cimport cuda.bindings.driver and cydriver: importing them fetches some 330
# extension types (CUcontext, CUstream, ..., anon_struct*) from the served
# driver module, each checked for its size, and the cydriver capsules. Then
# the test modules' own imports (cuda.core's CUDAError in
# cudapy/test_dispatcher.py and cudadrv/test_linker.py). Import-time names
# only, but all numba-cuda needs, and the whole suite is fast enough to run
# rather than a subset: about 30-40 s a run on 2 cores, about 65 s the whole
# script with its venv made (80 s with a fresh venv: the downloads).
#
#   scripts/numba-sim-parity.sh [PYTEST ARGS...]   (e.g. -k test_print)
source "$(dirname "$0")/_common.sh"
FLAKY=$ROOT/tests/data/numba_sim_flaky.txt
start=$SECONDS

# _common.sh's make_venv, pointed at this script's venv; one made by another
# minor version than PYTHON's is made anew (the in-place build is per version).
VENV=$ROOT/.venv-numba
PY=$VENV/bin/python
want=$("$BASE_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ -x "$PY" ] && [ "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "$want" ]; then
  step "$VENV is not CPython $want's: making it anew"
  rm -rf "$VENV"
fi
make_venv
pkgs=("numba-cuda==0.30.*" "numba==0.68.*" "numpy<2.4" "cuda-bindings==13.0.3" "cuda-core==1.2.*"
      "cuda-pathfinder==1.9.*" "pytest>=8,<9" "pytest-xdist==3.8.*" "filecheck==1.*" "ml_dtypes" "cffi" "psutil")
step "Python packages into $VENV: ${pkgs[*]}"
"$PY" -m pip install --disable-pip-version-check "${pkgs[@]}"

# The tree must be built in place for this Python (scripts/test.sh does it).
PYTHONPATH=$ROOT "$PY" -c 'import cuda, nvrtc, _cubind.compat' 2>/dev/null || {
  echo "numba-sim-parity.sh: cubind does not import from $ROOT with $("$PY" -V) (build it in place first: scripts/test.sh)" >&2
  exit 2
}
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# pytest runs in a directory of its own: its pytest.ini, not the project's
# pyproject.toml, configures it, and neither the current directory nor $ROOT
# is on sys.path in the run on NVIDIA's bindings.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/pytest.ini" <<'EOF'
[pytest]
consider_namespace_packages = true
EOF
# The plugin (-p numba_sim_parity): numba-cuda's conftest.py of 0.30, and the
# check, in the controller and in each worker, that cuda.bindings is served by
# the bindings this run is for (NUMBA_SIM_PARITY_EXPECT: the directory its
# driver and cydriver modules must come from).
cat >"$work/numba_sim_parity.py" <<'EOF'
import os
import sys

import pytest


def pytest_addoption(parser):
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="Dump reproducers for FileCheck tests that fail.")


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")


def pytest_configure(config):
    import numba.cuda  # noqa: F401  (imports cuda.bindings and cuda.core, as the tests do)

    expect = os.environ["NUMBA_SIM_PARITY_EXPECT"]
    served = {name: getattr(sys.modules.get(name), "__file__", None) or "(not imported)"
              for name in ("cuda.bindings.driver", "cuda.bindings.cydriver")}
    wrong = {name: path for name, path in served.items() if not path.startswith(expect)}
    if wrong:
        raise pytest.UsageError(f"cuda.bindings is not the one this run is for ({expect}): {wrong}")


def pytest_sessionstart(session):
    driver = sys.modules["cuda.bindings.driver"]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(session.config, "workerinput"):
        reporter.write_line(f"cuda.bindings.driver is {driver.__name__} ({driver.__file__})")
EOF

# run NAME EXPECT [ENV...]: the suite on one bindings; its JUnit report in
# $work/NAME.xml, its time in $work/NAME.time. pytest's own status is not
# the verdict (the comparison is): only a missing report stops the script.
run() {
  local name=$1 expect=$2; shift 2
  local t=$SECONDS status=0
  (cd "$work" && env -u CUBIND_CUDA_BINDINGS "$@" NUMBA_ENABLE_CUDASIM=1 NUMBA_SIM_PARITY_EXPECT="$expect" \
    "$PY" -m pytest -p numba_sim_parity -p no:cacheprovider -n 2 --dist loadscope -q -rfE --tb=short --disable-warnings \
    --junitxml="$work/$name.xml" --pyargs numba.cuda.tests "${pytest_args[@]}") || status=$?
  echo $((SECONDS - t)) >"$work/$name.time"
  [ -s "$work/$name.xml" ] || { echo "numba-sim-parity.sh: the run on $name wrote no report (pytest exit $status)" >&2; exit 1; }
}
pytest_args=("$@")

step "numba-cuda's simulator suite on NVIDIA's cuda-bindings"
run nvidia "$site/cuda/bindings/" PYTHONPATH="$work"
step "numba-cuda's simulator suite on cubind (CUBIND_CUDA_BINDINGS=1, PYTHONPATH=$ROOT)"
run cubind "$ROOT/cuda/" CUBIND_CUDA_BINDINGS=1 PYTHONPATH="$ROOT:$work"

step "numba-cuda simulator parity: NVIDIA's cuda-bindings vs cubind"
"$PY" - "$work" "$FLAKY" $((SECONDS - start)) <<'EOF'
import sys
import xml.etree.ElementTree as ET

work, flaky_file, elapsed = sys.argv[1], sys.argv[2], sys.argv[3]
STATES = ("passed", "failed", "error", "skipped", "xfailed")
LABELS = ("passed", "failed", "errors", "skipped", "xfailed")


def outcomes(name):
    """Each test's outcome, by its dotted name (numba.cuda.tests.MODULE.CLASS.TEST)."""
    result = {}
    for case in ET.parse(f"{work}/{name}.xml").getroot().iter("testcase"):
        classname, test = case.get("classname"), case.get("name")
        # A module that failed to import or skipped itself whole has no class.
        tid = "numba.cuda.tests." + (f"{classname}.{test}" if classname else test)
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed" if child.tag == "failure" else "error"
                break
            if child.tag == "skipped":
                state = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        result[tid] = state
    return result


flaky = {}
with open(flaky_file) as f:
    for line in f:
        tid, _, reason = line.partition("#")
        if tid.strip():
            flaky[tid.strip()] = reason.strip()

runs = {"NVIDIA's": outcomes("nvidia"), "cubind": outcomes("cubind")}
nv, cb = runs["NVIDIA's"], runs["cubind"]
for label, name in (("NVIDIA's", "nvidia"), ("cubind", "cubind")):
    with open(f"{work}/{name}.time") as f:
        seconds = f.read().strip()
    counts = ", ".join(f"{sum(s == state for s in runs[label].values())} {word}" for state, word in zip(STATES, LABELS))
    print(f"{label + ':':10}{counts} ({seconds} s)")

lost = sorted(t for t, s in nv.items() if s == "passed" and cb.get(t) != "passed")
gained = sorted(t for t, s in cb.items() if s == "passed" and nv.get(t) != "passed")
other = sorted(t for t in nv.keys() | cb.keys()
               if nv.get(t) != cb.get(t) and "passed" not in (nv.get(t), cb.get(t)))
regressions = [t for t in lost if t not in flaky]
print(f"passed on NVIDIA's, not on cubind: {len(lost)} ({len(lost) - len(regressions)} listed as flaky)")
for t in lost:
    note = f"  [listed as flaky: {flaky[t]}]" if t in flaky else "  REGRESSION"
    print(f"  {t}: {cb.get(t, 'not run')} on cubind{note}")
print(f"passed on cubind, not on NVIDIA's: {len(gained)}")
for t in gained:
    note = f"  [listed as flaky: {flaky[t]}]" if t in flaky else ""
    print(f"  {t}: {nv.get(t, 'not run')} on NVIDIA's{note}")
if other:
    print(f"other differences: {len(other)}")
    for t in other:
        print(f"  {t}: {nv.get(t, 'not run')} on NVIDIA's, {cb.get(t, 'not run')} on cubind")
unknown = sorted(set(flaky) - nv.keys() - cb.keys())
if unknown:
    print(f"listed in {flaky_file} but in neither run: {', '.join(unknown)}")
print(f"numba-sim-parity: {len(regressions)} regression(s) on cubind; {elapsed} s in all")
sys.exit(1 if regressions else 0)
EOF
