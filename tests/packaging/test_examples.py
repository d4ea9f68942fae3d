"""Every example: on a real GPU (marked ``gpu``) it runs and checks itself;
without a driver it says so in a clean sentence and exits 0.

For the second, each runs in a fresh interpreter whose ``CUBIND_CUDA_LIBRARY``
names a file that does not exist, so the no-GPU path is taken on any machine.
The examples that compile with NVRTC still do (compiling needs no GPU) and
say what they would launch.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))
# These compile before they look for a GPU; the others stop at open_gpu().
COMPILING = {"saxpy.py", "pythonic_saxpy.py", "pythonic_reduction.py"}
# The runtime finds the driver itself (CUBIND_CUDA_LIBRARY is cubind's): these
# take the no-GPU path only where there is no GPU.
RUNTIME = {p.name for p in EXAMPLES if "cudart" in p.read_text()}
NO_DRIVER = "/nonexistent/libcuda.so.1"


def run_example(example, **env):
    full_env = dict(os.environ, PYTHONPATH=pythonpath(ROOT), **env)
    return subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=300,
                          env=full_env, cwd=ROOT, check=False)


@pytest.fixture(scope="module")
def outputs():
    return {p.name: run_example(p, CUBIND_CUDA_LIBRARY=NO_DRIVER) for p in EXAMPLES}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_without_a_driver_says_so_and_exits_0(outputs, example, gpu_reason):
    proc = outputs[example.name]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stderr == ""
    last = proc.stdout.splitlines()[-1]
    if example.name in RUNTIME:
        if gpu_reason is not None:
            assert re.fullmatch(r"No GPU available: cudaGetDeviceCount returned \w+; skipping\.", last), last
        return
    assert last.startswith(f"No GPU available: cannot open the cuda library given by "
                           f"CUBIND_CUDA_LIBRARY='{NO_DRIVER}'"), proc.stdout
    if example.name not in COMPILING:
        assert len(proc.stdout.splitlines()) == 1 and last.endswith("; skipping."), proc.stdout


def test_saxpy_compiles_and_says_the_launch_needs_a_gpu(outputs):
    last = outputs["saxpy.py"].stdout.splitlines()[-1]
    assert re.search(r"; compiled saxpy to \d+ bytes of PTX for compute_\d+, the launch needs a GPU\.$", last), last


def test_pythonic_saxpy_compiles_and_says_what_it_would_launch(outputs):
    lines = outputs["pythonic_saxpy.py"].stdout.splitlines()
    assert len(lines) == 1
    pointer = r"float32\[1048576\] \(\.u64 device pointer\)"
    assert re.search(rf"; compiled saxpy to \d+ bytes of PTX for compute_\d+; with a GPU it would launch saxpy on "
                     rf"grid 4096, block 256 with \(2\.0 \(\.f32\), {pointer}, {pointer}, {pointer}, "
                     rf"1048576 \(\.u64\)\)\.$", lines[0]), lines[0]


def test_pythonic_reduction_compiles_every_instance(outputs):
    lines = outputs["pythonic_reduction.py"].stdout.splitlines()
    assert len(lines) == 1
    assert "; compiled block_sum<float, 256>, block_sum<double, 256>, block_sum<int, 256> to " in lines[0]
    assert "it would launch block_sum<float, 256> on grid 5860, block 256 with (float32[3000000]" in lines[0]


@pytest.mark.parametrize("name", ["saxpy.py", "pythonic_saxpy.py", "vmm.py"])
def test_where_no_driver_is_installed_the_reason_is_one_plain_phrase(gpu_reason, name):
    if gpu_reason is None or "libcuda.so.1 not loadable" not in gpu_reason:
        pytest.skip(f"a driver library is installed here ({gpu_reason or 'and a GPU'})")
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_LIBRARY"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True,
                          timeout=300, env=dict(env, PYTHONPATH=pythonpath(ROOT)), cwd=ROOT, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines()[-1].startswith("No GPU available: no CUDA driver (libcuda.so.1 not found); ")


# pythonic_interop hands memory to CuPy and PyTorch, whose caching allocators keep it to exit.
@pytest.mark.gpu
@pytest.mark.parametrize("example", [pytest.param(p, marks=pytest.mark.foreign_allocator)
                                     if p.stem == "pythonic_interop" else p for p in EXAMPLES],
                         ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_checks_itself(driver, example):
    proc = run_example(example)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No GPU available" not in proc.stdout, proc.stdout


# examples/consumers/: NVIDIA's cuda.core and numba-cuda on cubind
# (scripts/run-consumers.sh runs them on a GPU). They ask the driver for a
# device through ctypes before importing either, so that without one they say
# so where neither is installed too.
CONSUMERS = sorted(p for p in (ROOT / "examples" / "consumers").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("example", CONSUMERS, ids=[p.stem for p in CONSUMERS])
def test_consumer_example_without_a_gpu_says_so_and_exits_0(example, gpu_reason):
    if gpu_reason is None:
        pytest.skip("a GPU is here: scripts/run-consumers.sh runs the consumer examples on it")
    proc = run_example(example, CUBIND_CUDA_BINDINGS="1")
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    assert re.fullmatch(r"No GPU available: .+; (cuda\.core's saxpy|numba-cuda's kernels) needs? one\.",
                        proc.stdout.strip()), proc.stdout
