"""NVIDIA's cuda.core 1.2 runs unchanged on cubind (issue 44): its public API
through NVIDIA's C-level modules, which cubind serves under
CUBIND_CUDA_BINDINGS=1 (``cuda.bindings.cydriver``, ``cynvrtc``,
``cynvjitlink``: cuda.core 1.x is compiled against them). ``Device()`` and its
properties, ``set_current``, streams and events, ``Program`` to PTX and CUBIN,
the ``Linker`` on nvJitLink's LTO, buffer copies and a kernel launch.

Each case (tests/bindings/cuda_core_cases/cases_1_2.py) runs in a fresh
interpreter with the switch on and cuda-core 1.2 first on its path (installed
``--no-deps`` apart from the suite's cuda.core 0.3, which test_cuda_core.py
runs: tests._toolkit.consumer). Without a GPU the cases run on
tests/fake_driver with the real NVRTC and nvJitLink underneath, and what the
stand-in cannot show (a kernel's or a copy's effect) is checked as what the
driver was asked; on a GPU the values are checked, and where NVIDIA's
cuda-bindings is installed the same case runs on it too and must give the
same values (NVIDIA's bindings need a real driver: without a GPU that half
skips).

A case's values are checked as it prints them; whether the interpreter then
exits cleanly (cuda.core releases its primary contexts from a thread-local
destructor, after Python's finalization) is one test of its own.
"""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._toolkit import consumer, consumers_unserved, pythonpath
from tests.bindings.cuda_core_cases.cases_1_2 import MARKER, SERVED

ROOT = Path(__file__).resolve().parents[2]
WANTED = "1.2."
# What the stand-in driver's device answers (its attributes, for cuda.core's
# Device, and so the architecture programs are compiled for).
FAKE_COMPUTE_CAPABILITY = "90"


@functools.cache
def _cuda_core():
    """(version, directory) of cuda-core 1.2, or why these tests skip."""
    import importlib.util

    if importlib.util.find_spec("cuda") is None or importlib.util.find_spec("cuda._cydriver") is None:
        return "cubind's C-level modules (cuda._cydriver, ...) are not built"
    return consumers_unserved() or consumer("cuda-core", WANTED)


def _missing():
    found = _cuda_core()
    return found if isinstance(found, str) else None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def _environment(bindings, library, call_log):
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(_cuda_core()[1], ROOT)
    if bindings == "cubind":
        env["CUBIND_CUDA_BINDINGS"] = "1"
    if library is not None:  # the stand-in driver, for cubind's loader only
        env.update(CUBIND_CUDA_LIBRARY=str(library), FAKE_DEVICE_COUNT="1",
                   FAKE_COMPUTE_CAPABILITY=FAKE_COMPUTE_CAPABILITY, FAKE_CALL_LOG=str(call_log))
    return env


class Outcome:
    def __init__(self, done):
        self.stdout, self.stderr, self.returncode = done.stdout, done.stderr, done.returncode

        def last(marker):
            lines = [line for line in done.stdout.splitlines() if line.startswith(marker)]
            return json.loads(lines[-1][len(marker):]) if lines else None

        self.value, self.served = last(MARKER), last(SERVED)

    def why(self):
        tail = (self.stderr or self.stdout).strip().splitlines()
        return f"exit {self.returncode}: {tail[-1] if tail else 'no output'}"


_outcomes = {}


def _run(case, bindings, library, tmp_path_factory):
    key = (case, bindings, library)
    if key not in _outcomes:
        log = tmp_path_factory.mktemp("calls") / "calls.log"
        done = subprocess.run([sys.executable, "-m", "tests.bindings.cuda_core_cases.cases_1_2", case],
                              env=_environment(bindings, library, log), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        _outcomes[key] = Outcome(done)
    return _outcomes[key]


@functools.cache
def _nvidia_installed_missing():
    probe = "import cuda.bindings, json; print(json.dumps(cuda.bindings.__version__))"
    done = subprocess.run([sys.executable, "-c", probe], env=_environment("nvidia", None, None), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return "NVIDIA's cuda-bindings is not installed here (nothing to compare cubind with)"
    return None


def _nvidia_missing(library):
    if library is not None:
        return "no GPU: NVIDIA's cuda-bindings runs on a real driver only (the emulated one is cubind's)"
    return _nvidia_installed_missing()


# What each case must return (besides the checks it makes itself).
EXPECT = {
    "device": lambda v: v == {"device_id": 0, "same": True, "arch": True, "name": True, "sms": True, "threads": True,
                              "warp": 32, "cc": True},
    "stream_event": lambda v: v == {"done": True, "device": 0, "timing": True, "distinct": True},
    "compile_ptx": lambda v: v == {"ptx": True, "target": True, "format": "ptx"},
    "compile_cubin": lambda v: v == {"elf": True, "format": "cubin"},
    "link_lto": lambda v: v == {"ltoir": "ltoir", "linked": "cubin", "backend": "nvJitLink", "kernel": True},
    "buffer_copy": lambda v: v == {"size": 1024, "device_accessible": True, "host_accessible": True, "device": 0},
    "launch": lambda v: v == {"ok": True, "grid": [8, 1, 1], "block": [128, 1, 1]},
}
# Device() with no context current asks cuCtxGetDevice, which answers
# CUDA_ERROR_INVALID_CONTEXT, and takes device 0: cuda.core's own failed call.
# cuda.core's device memory resource keeps the pool's memory to exit, closed
# buffers too: compute-sanitizer counts it leaked on NVIDIA's bindings alike
# (H200, 2026-11-29: 5 allocations each run).
MARKS = {"device": pytest.mark.foreign_code("cuda.core's Device() asks cuCtxGetDevice with no context current"),
         "buffer_copy": pytest.mark.foreign_allocator("cuda.core's memory resource keeps its pool to exit"),
         "launch": pytest.mark.foreign_allocator("cuda.core's memory resource keeps its pool to exit")}
CASES = [pytest.param(case, marks=MARKS[case]) if case in MARKS else case for case in EXPECT]
BINDINGS = ["cubind", pytest.param("nvidia", marks=pytest.mark.foreign_code(
    "NVIDIA's cuda.bindings makes failing cuGetProcAddress calls of its own"))]


@pytest.mark.parametrize("bindings", BINDINGS)
@pytest.mark.parametrize("case", CASES)
def test_cuda_core_1_2(case, bindings, backend, tmp_path_factory):
    library = backend.library
    if bindings == "nvidia":
        missing = _nvidia_missing(library)
        if missing:
            pytest.skip(missing)
    outcome = _run(case, bindings, library, tmp_path_factory)
    if outcome.value is None:
        pytest.fail(f"cuda.core {_cuda_core()[0]} case {case!r} fails on {bindings}'s cuda.bindings "
                    f"({outcome.why()}):\n{outcome.stderr[-4000:]}\nstdout: {outcome.stdout[-1000:]}")
    version, cydriver = outcome.served
    assert version.startswith(WANTED), f"cuda.core {version} ran, not {WANTED}x"
    if bindings == "cubind":
        # cuda.bindings.cydriver was cubind's (cuda/_cydriver), never NVIDIA's.
        assert cydriver and Path(cydriver).parent == ROOT / "cuda", cydriver
        if not _nvidia_missing(library):
            reference = _run(case, "nvidia", library, tmp_path_factory)
            if reference.value is not None:
                assert outcome.value == reference.value, "cubind and NVIDIA's cuda-bindings give different values"
    else:
        assert cydriver and "bindings" in Path(cydriver).parts, cydriver
    assert EXPECT[case](outcome.value), outcome.value


def test_cuda_core_1_2_exits_cleanly(backend, tmp_path_factory):
    """The launch case made a context current, streams, buffers, a library;
    cuda.core releases the primary context from a C++ thread-local destructor
    that runs after Python's finalization, through cubind's
    cuDevicePrimaryCtxRelease: a function resolved then must not need the
    interpreter (a resolution that takes the GIL crashes there)."""
    outcome = _run("launch", "cubind", backend.library, tmp_path_factory)
    assert outcome.value is not None, outcome.why()
    assert outcome.returncode == 0, (
        f"cuda.core's interpreter ran the case and then exited with {outcome.returncode} "
        f"(-11: a crash at exit): {outcome.stderr[-2000:]}")


def test_every_case_is_listed():
    from tests.bindings.cuda_core_cases import cases_1_2

    defined = {name[len("case_"):] for name in dir(cases_1_2) if name.startswith("case_")}
    assert defined == set(EXPECT)
