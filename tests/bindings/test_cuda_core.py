"""NVIDIA's cuda.core 0.3.2 runs unchanged on cubind's ``cuda.bindings``
(cubind.compat, issue 24), through its public API: devices, streams and
events, Program to PTX/CUBIN/LTO-IR, the Linker on nvJitLink and on the
driver's cuLink*, ObjectCode from bytes and files, kernel attributes and
occupancy, launches (clusters, cooperative), buffers and memory resources,
graphs (conditional nodes, child graphs, update, dot print), and
StridedMemoryView.

Each case (tests/bindings/cuda_core_cases/cases.py) runs in a fresh interpreter with
CUBIND_CUDA_BINDINGS=1, so that NVIDIA's ``cuda.bindings``, where installed,
is never imported beside cubind's. Where NVIDIA's cuda-bindings is installed
the same case runs once more on it (``bindings="nvidia"``): the two must give
the same values, and a case cuda.core gets wrong on NVIDIA's bindings too is
skipped naming that, never counted as passing.

cuda.core asks the driver for its version whenever it makes an ObjectCode,
so even the cases only NVRTC and nvJitLink answer need a libcuda: without a
GPU they run against tests/fake_driver (the ``backend`` fixture), with the
real NVRTC and nvJitLink underneath.
"""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._toolkit import cuda_core_missing, cuda_core_path, pythonpath

ROOT = Path(__file__).resolve().parents[2]
CUDA_CORE_VERSION = "0.3.2"
MARKER = "CUDA_CORE_CASE "


CUDA_CORE_PATH = cuda_core_path()


def _cuda_core_missing():
    return cuda_core_missing(CUDA_CORE_VERSION)


pytestmark = pytest.mark.skipif(_cuda_core_missing() is not None, reason=str(_cuda_core_missing()))


def _environment(bindings, library):
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(*filter(None, [CUDA_CORE_PATH, ROOT]))
    if bindings == "cubind":
        env["CUBIND_CUDA_BINDINGS"] = "1"
    if library is not None:  # the emulated driver, for cubind's loader only
        env["CUBIND_CUDA_LIBRARY"] = str(library)
    return env


def _nvidia_bindings_missing(library):
    """None where NVIDIA's cuda-bindings can run the case, else why the
    ``nvidia`` runs skip."""
    if library is not None:
        # Only cubind's loader can be pointed at the emulated driver; put on
        # the loader's path instead, NVRTC would find it too and crash there.
        return "no GPU: NVIDIA's cuda-bindings runs on a real driver only (the emulated one is cubind's)"
    return _nvidia_installed_missing()


@functools.cache
def _nvidia_installed_missing():
    probe = ("import cuda.bindings, json; "
             "print(json.dumps([cuda.bindings.__version__, getattr(cuda.bindings, '__file__', None)]))")
    done = subprocess.run([sys.executable, "-c", probe], env=_environment("nvidia", None), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return "NVIDIA's cuda-bindings is not installed here (nothing to compare cubind with)"
    version, path = json.loads(done.stdout.strip().splitlines()[-1])
    if not path or "cubind" in path:
        return f"cuda.bindings {version} here is not NVIDIA's ({path})"
    return None


class Outcome:
    def __init__(self, done):
        self.stdout, self.stderr, self.returncode = done.stdout, done.stderr, done.returncode
        lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
        self.value = json.loads(lines[-1][len(MARKER):]) if done.returncode == 0 and lines else None

    @property
    def failed(self):
        return self.value is None

    def why(self):
        tail = (self.stderr or self.stdout).strip().splitlines()
        return f"exit {self.returncode}: {tail[-1] if tail else 'no output'}"


_outcomes = {}


def _run(case, bindings, library):
    key = (case, bindings, library)
    if key not in _outcomes:
        done = subprocess.run([sys.executable, "-m", "tests.bindings.cuda_core_cases.cases", case],
                              env=_environment(bindings, library), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        _outcomes[key] = Outcome(done)
    return _outcomes[key]


def _ptx_through_linker(value):
    return value["ok"] and value["backend"] == "nvJitLink"


# What each case must return (besides the checks it makes itself).
EXPECT = {
    "import": lambda v: v["b2d"] and len(v["names"]) == 17,
    "compile_cubin": lambda v: v == {"elf": True},
    "compile_ltoir": lambda v: v == {"ltoir": True},
    "compile_ptx": lambda v: v == {"ptx": True, "target": True},
    "compile_name_expressions_and_logs": lambda v: v == {"lowered": "_Z5twiceIfEvPT_", "warned": True},
    "compile_error": lambda v: v["log"] is True,
    "link_ltoir_nvjitlink": lambda v: v == {"backend": "nvJitLink"},
    "link_ptx_nvjitlink": lambda v: v == {"backend": "nvJitLink"},
    "program_from_ptx": lambda v: v == {"backend": "nvJitLink"},
    "object_code_from_bytes_and_files": lambda v: v == {"cubin": "b-cubin", "ptx": "b-ptx", "ltoir": "b-ltoir"},
    "launch_config_and_strided_view_numpy": lambda v: v == {
        "grid": [4, 2, 1], "block": [64, 1, 1], "shape": [4, 3], "strides": [6, 2], "dtype": "float32",
        "ptr": True, "device_accessible": False, "decorated": [[4, 3], [6, 2], "float32", True]},
    "device_properties": lambda v: v["sms"] > 0 and v["max_threads"] >= 1024 and v["warp"] == 32,
    "stream_event": lambda v: v["done"] and v["default"] and v["device"] == 0,
    "saxpy_cubin": lambda v: v == {"ok": True},
    "saxpy_ptx_through_linker": _ptx_through_linker,
    "saxpy_ltoir_through_linker": _ptx_through_linker,
    "saxpy_driver_linker": lambda v: v == {"ok": True, "backend": "driver", "warned": True, "info_log": True},
    "object_code_load_and_launch": lambda v: v == dict.fromkeys(["cubin-bytes", "cubin-file", "ptx-bytes",
                                                                  "ptx-file"], True),
    "kernel_attributes_and_occupancy": lambda v: v["num_arguments"] == 5 and v["sizes"] == [4, 8, 8, 8, 8]
    and v["blocks_per_sm"] > 0 and v["smem"] and v["cluster"],
    "launch_cluster": lambda v: v.get("active_clusters", True),
    "launch_cooperative": lambda v: v == {"ok": True},
    "memory_resources": lambda v: v["device"] == [True, False, 0, 4096] and v["pinned"] == [True, True, 4096]
    and v["dlpack"][0] == 2 and v["same_mr"],
    "graph_basic_and_dot": lambda v: v == {"values": [12, 12, 12, 12], "dot": True},
    "graph_if": lambda v: v == {"0": 1000, "1": 1001},
    "graph_if_else": lambda v: v == {"0": 1010, "1": 1001},
    "graph_switch": lambda v: v == {"0": 1001, "1": 1010, "2": 1100, "5": 1000},
    "graph_while": lambda v: v == {"values": [5, 0]},
    "graph_child_and_update": lambda v: v == {"values": [11, 112]},
    "strided_view_cupy": lambda v: all(v[k] for k in ("ptr", "shape", "device", "accessible")),
    "strided_view_torch": lambda v: all(v[k] for k in ("ptr", "shape", "device", "accessible", "strides")),
}

WITHOUT_GPU = ["import", "compile_cubin", "compile_ltoir", "compile_ptx", "compile_name_expressions_and_logs",
               "compile_error", "link_ltoir_nvjitlink", "link_ptx_nvjitlink", "program_from_ptx",
               "object_code_from_bytes_and_files", "launch_config_and_strided_view_numpy"]
# The strided-view cases hand memory to CuPy's or PyTorch's caching allocator,
# which keeps it to exit (the sanitizer would count it as leaked).
# cuda.core 0.3's Kernel.arguments_info counts a kernel's parameters by calling
# cuKernelGetParamInfo until it fails: its own failed call, on either bindings.
FOREIGN = {"kernel_attributes_and_occupancy": pytest.mark.foreign_code(
    "cuda.core counts kernel parameters by calling cuKernelGetParamInfo until CUDA_ERROR_INVALID_VALUE")}
ON_GPU = [pytest.param(case, marks=pytest.mark.foreign_allocator) if case.endswith(("_cupy", "_torch"))
          else pytest.param(case, marks=FOREIGN[case]) if case in FOREIGN else case
          for case in EXPECT if case not in WITHOUT_GPU]
# NVIDIA's half runs NVIDIA's cydriver, whose own failed calls (entry points
# asked for at versions the driver refuses) the sanitizer would count.
BINDINGS = ["cubind", pytest.param("nvidia", marks=pytest.mark.foreign_code(
    "NVIDIA's cuda.bindings makes failing cuGetProcAddress calls of its own"))]


def _check(case, bindings, library):
    if bindings == "nvidia":
        missing = _nvidia_bindings_missing(library)
        if missing:
            pytest.skip(missing)
        outcome = _run(case, "nvidia", library)
        if outcome.failed:
            pytest.skip(f"cuda.core misbehaves on NVIDIA's cuda-bindings too: {outcome.why()}")
    else:
        outcome = _run(case, "cubind", library)
        # Compared with NVIDIA's bindings but under the sanitizer, whose pass
        # is about cubind's calls (the nvidia half is left out of it too).
        sanitized = bool(os.environ.get("CUBIND_UNDER_SANITIZER"))
        reference = None if _nvidia_bindings_missing(library) or sanitized else _run(case, "nvidia", library)
        if outcome.failed:
            if sanitized:
                # Whether NVIDIA's bindings fail it too is the suite's to say
                # (cooperative_groups.h, which NVRTC finds nowhere here, fails both).
                pytest.skip(f"fails under the sanitizer, where it is not compared with NVIDIA's bindings: "
                            f"{outcome.why()}")
            if reference is not None and reference.failed:
                pytest.skip(f"cuda.core misbehaves on NVIDIA's cuda-bindings too: {reference.why()}")
            # The exit status and stdout too: a crash (a negative status) prints no traceback.
            pytest.fail(f"cuda.core case {case!r} fails on cubind's cuda.bindings (exit {outcome.returncode}):\n"
                        f"{outcome.stderr[-4000:]}\nstdout: {outcome.stdout[-1000:]}")
        if reference is not None and not reference.failed:
            assert outcome.value == reference.value, "cubind and NVIDIA's cuda-bindings give different values"
    if "skipped" in outcome.value:
        pytest.skip(outcome.value["skipped"])
    assert EXPECT[case](outcome.value), outcome.value


@pytest.mark.parametrize("bindings", BINDINGS)
@pytest.mark.parametrize("case", WITHOUT_GPU)
def test_cuda_core_without_a_gpu(case, bindings, backend):
    _check(case, bindings, backend.library)


@pytest.mark.gpu
@pytest.mark.parametrize("bindings", BINDINGS)
@pytest.mark.parametrize("case", ON_GPU)
def test_cuda_core_on_a_gpu(case, bindings):
    _check(case, bindings, None)


def test_every_case_is_listed():
    from tests.bindings.cuda_core_cases import cases

    defined = {name[len("case_"):] for name in dir(cases) if name.startswith("case_")}
    assert defined == set(EXPECT)
