"""What the driver package's tests (tests/bindings/test_driver*.py) share: the
build's cuda.h, the markers of what a test needs, fresh interpreters, and
for the GPU tests the launch helpers and kernels (the fixtures are in
tests/bindings/_driver_fixtures.py)."""

import ctypes
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests._toolkit import cuda_include, header, pythonpath

ROOT = Path(__file__).resolve().parents[2]
CUDA_H = header("cuda.h")
STUB = Path("/usr/local/cuda/lib64/stubs/libcuda.so")
GENERATOR = Path(os.environ.get("CUBIND_GEN", ROOT / "generator" / "build" / "cubind-gen"))
DRIVER_SPEC = ROOT / "bindings" / "driver.toml"



cuda = import_cubind_driver()
needs_cuda = pytest.mark.skipif(cuda is None, reason="cubind's cuda driver package is not built")
needs_x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="layouts measured on x86-64")
needs_header = pytest.mark.skipif(CUDA_H is None, reason=f"cuda.h not found in {cuda_include()}")
# The form of the API this build has: 13.x's cuCtxCreate is cuCtxCreate_v4(ctxCreateParams, flags, dev),
# 12.x's cuCtxCreate_v2(flags, dev) (with cuCtxCreate_v4 a function of its own).
CUDA_13 = cuda is not None and cuda.CUDA_VERSION >= 13000


def run_python(code, env=None, check=True):
    """Run ``code`` in a fresh interpreter with no CUDA environment; return the process."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("CUDA_HOME", "CUDA_PATH", "CUBIND_CUDA_LIBRARY", "LD_LIBRARY_PATH", "LD_PRELOAD")}
    clean.update(env or {}, PYTHONPATH=pythonpath())
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=clean, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def read_struct(obj, offset, ctype):
    """The C value at ``offset`` bytes into a struct object's storage."""
    return ctype.from_address(obj.getPtr() + offset).value


def _signature(name):
    import inspect

    return name + str(inspect.signature(getattr(cuda, name)))



def launch(cuda, f, grid, block, params, stream=None, shared=0):
    """cuLaunchKernel with 1D grid and block."""
    ok(cuda.cuLaunchKernel, f, grid, 1, 1, block, 1, 1, shared, stream, params, None)


FILL_SRC = r"""
extern "C" __global__ void fill(unsigned int *out, unsigned int value, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}
"""

SPIN_SRC = r"""
extern "C" __global__ void spin(long long cycles, unsigned int *out)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
    if (out) out[0] = 1;
}
"""


def fill_params(out, value, n):
    return (out, value, n), (None, ctypes.c_uint, ctypes.c_uint)


def read_u32(cuda, dptr, n):
    host = np.zeros(n, dtype=np.uint32)
    ok(cuda.cuMemcpyDtoH, host, dptr, host.nbytes)
    return host
