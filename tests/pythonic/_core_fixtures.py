"""What the tests of the Pythonic layer's core, launch and compile modules
share (test_core_*.py, test_launch_*.py, test_compile_*.py; imported, not a
conftest.py, so that the autouse ``cache_dir`` reaches only the files that
import it): the kernel sources, every test's own compile cache, the compiled
module, the fake-driver snippets' runner and, for the tests marked ``gpu``,
the device, a compiled module of the GPU kernels and device memory. A test
file imports the fixture functions (pytest finds them by the names they
register: ``cache_dir``, ``module``, ``ptx_file``, ``device``, ``gpu_module``,
``dmem``).

PTX is compiled here and the fake-driver snippets run in fresh interpreters
that load the fake with their own FAKE_* settings and empty tables.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind
from tests._helpers import ok
from tests._toolkit import pythonpath

np = pytest.importorskip("numpy")


ROOT = Path(__file__).resolve().parents[2]


SRC = r"""
struct Pair { int a; double b; };
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void mix(Pair p, double d, char c, short h, int i, long long q, unsigned char u, bool b) {}
template <typename T> __global__ void fill(T *out, T value) { out[threadIdx.x] = value; }
"""


@pytest.fixture(autouse=True, name="cache_dir")
def own_cache_dir(tmp_path, monkeypatch):
    """Every test compiles into its own empty cache."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(directory))
    monkeypatch.delenv("CUBIND_NO_COMPILE_CACHE", raising=False)
    return directory


@pytest.fixture(scope="module", name="module")
def compiled_module():
    return cubind.Program(SRC, name_expressions=["fill<float>", "fill<int>"]).compile("ptx", arch=75)


# -- launches through the fake driver ----------------------------------------------


PRELUDE = """
import ctypes, json, struct, sys
import cubind
fake = ctypes.CDLL({lib!r})
module = cubind.Module.load(open({ptx!r}, "rb").read())
def record(n):
    ctypes.c_int.in_dll(fake, "fake_record_args").value = n
def recorded(n):
    return list((ctypes.c_ulonglong * n).in_dll(fake, "fake_args"))
def launches():
    return ctypes.c_int.in_dll(fake, "fake_launch_count").value
def last_stream():
    return ctypes.c_ulonglong.in_dll(fake, "fake_last_stream").value
from tests._helpers import error
"""


@pytest.fixture(scope="module", name="ptx_file")
def ptx_file_of_module(tmp_path_factory, module):
    path = tmp_path_factory.mktemp("ptx") / "k.ptx"
    path.write_bytes(module.code)
    return path


def run_fake(fake_driver, ptx_file, body, env=None):
    code = PRELUDE.format(lib=str(fake_driver), ptx=str(ptx_file)) + textwrap.dedent(body)
    full_env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# == on a real GPU (each test marked gpu) ===========================================================


KERNELS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct Item { int a; double b; char c; };

extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
extern "C" __global__ void set_int(int *p, int value) { *p = value; }
extern "C" __global__ void copy_int(const int *src, int *dst) { *dst = *src; }
extern "C" __global__ void item_sum(Item item, double *out) { *out = item.a + item.b + item.c; }
extern "C" __global__ void narrow(char c, short s, unsigned char u, long long q, double d, double *out)
{
    out[0] = c; out[1] = s; out[2] = u; out[3] = (double)q; out[4] = d;
}
template <typename T> __global__ void fill(T *out, T value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
__device__ int counter = 41;
"""


@pytest.fixture(scope="module", name="device")
def device_0():
    return cubind.Device(0)


@pytest.fixture(scope="module", name="gpu_module")
def compiled_gpu_module(device):
    device.set_current()
    return cubind.Program(KERNELS, name_expressions=["fill<float>", "fill<int>", "fill<double>"]).compile("cubin")


@pytest.fixture(name="dmem")
def device_memory(driver, cu_context):
    """Factory: cuMemAlloc'd device memory holding a copy of a numpy array (or
    ``nbytes`` zeros); read back with ``dmem.get``."""
    allocated = []

    def alloc(host):
        host = np.ascontiguousarray(host)
        ptr = ok(driver.cuMemAlloc, max(host.nbytes, 1))
        allocated.append(ptr)
        ok(driver.cuMemcpyHtoD, ptr, host, host.nbytes)
        return ptr

    def get(ptr, like):
        out = np.empty_like(like)
        ok(driver.cuCtxSynchronize)
        ok(driver.cuMemcpyDtoH, out, ptr, out.nbytes)
        return out

    alloc.get = get
    yield alloc
    driver.cuCtxSynchronize()
    for ptr in allocated:
        driver.cuMemFree(ptr)


def spin_cycles(device, ms):
    clock_khz = device.attribute("clock_rate")
    return int(clock_khz * ms)
