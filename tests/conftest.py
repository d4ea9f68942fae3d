"""Shared pytest configuration: the ``gpu`` marker and NVRTC helper fixtures.

Nothing heavy is imported at module level: the ``nvrtc`` package is imported
inside the fixtures that need it, and GPU detection uses plain ctypes.
"""

import ctypes
import functools
import os
from pathlib import Path

import pytest

SAXPY_SRC = r"""
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        out[tid] = a * x[tid] + y[tid];
    }
}
"""


# --------------------------------------------------------------------------
# GPU detection and the ``gpu`` marker
# --------------------------------------------------------------------------


@functools.cache
def gpu_unavailable_reason():
    """None when a usable GPU and driver are present, else why not (cached)."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return f"no GPU: libcuda.so.1 not loadable ({exc})"
    rc = libcuda.cuInit(0)
    if rc != 0:
        return f"no GPU: cuInit returned {rc}"
    count = ctypes.c_int(0)
    rc = libcuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0:
        return f"no GPU: cuDeviceGetCount returned {rc}"
    if count.value < 1:
        return "no GPU: cuDeviceGetCount reported 0 devices"
    return None


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: the test needs a usable GPU and driver (skipped otherwise)"
    )


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    for item in gpu_items:
        item.add_marker(pytest.mark.skip(reason=reason))


# --------------------------------------------------------------------------
# Toolkit files
# --------------------------------------------------------------------------


def _cuda_roots():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            yield Path(os.environ[var])
    yield Path("/usr/local/cuda")


@pytest.fixture(scope="session")
def nvrtc_header():
    """Text of the nvrtc.h the bindings were generated from (skip if absent)."""
    for root in _cuda_roots():
        header = root / "include" / "nvrtc.h"
        if header.is_file():
            return header.read_text()
    pytest.skip("nvrtc.h not found under CUDA_HOME, CUDA_PATH or /usr/local/cuda")


# --------------------------------------------------------------------------
# NVRTC helpers
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def saxpy_src():
    return SAXPY_SRC


@pytest.fixture
def make_program():
    """Factory: create an NVRTC program (asserting success), destroyed at teardown."""
    import nvrtc

    created = []

    def make(src, name="prog.cu", headers=None, include_names=None):
        num_headers = len(headers) if headers else 0
        err, prog = nvrtc.nvrtcCreateProgram(
            src, name, num_headers, headers, include_names
        )
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        created.append(prog)
        return prog

    yield make
    for prog in created:
        if int(prog) != 0:
            nvrtc.nvrtcDestroyProgram(prog)


@pytest.fixture
def program_log():
    """Callable: the program log via nvrtcGetProgramLogSize + nvrtcGetProgramLog."""
    import nvrtc

    def get_log(prog):
        err, size = nvrtc.nvrtcGetProgramLogSize(prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        buf = bytearray(size)
        (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        return bytes(buf).rstrip(b"\0").decode(errors="replace")

    return get_log


@pytest.fixture
def compile_program(make_program, program_log):
    """Factory: create + compile; returns the program, asserting success (with the log)."""
    import nvrtc

    def compile_(src, options=(), name="prog.cu", headers=None, include_names=None):
        prog = make_program(src, name, headers, include_names)
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), list(options))
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, f"{err!r}\n{program_log(prog)}"
        return prog

    return compile_


@pytest.fixture
def get_output():
    """Callable: fetch one compiled artefact ("PTX", "CUBIN", "LTOIR", "OptiXIR")."""
    import nvrtc

    def get(prog, kind="PTX"):
        err, size = getattr(nvrtc, f"nvrtcGet{kind}Size")(prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        buf = bytearray(size)
        (err,) = getattr(nvrtc, f"nvrtcGet{kind}")(prog, buf)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        return bytes(buf)

    return get


@pytest.fixture
def compile_to_ptx(compile_program, get_output):
    """Callable: compile ``src`` with ``options`` and return the PTX text (no NUL)."""

    def to_ptx(src, options=(), **program_kwargs):
        ptx = get_output(compile_program(src, options, **program_kwargs), "PTX")
        return ptx.rstrip(b"\0").decode()

    return to_ptx


@pytest.fixture
def saxpy_program(compile_program, saxpy_src):
    """The saxpy kernel compiled to PTX for compute_75."""
    return compile_program(saxpy_src, ["--gpu-architecture=compute_75"])


@pytest.fixture
def restore_pch_heap_size():
    """Put the process-wide PCH heap size back after a test changes it."""
    import nvrtc

    err, size = nvrtc.nvrtcGetPCHHeapSize()
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    yield size
    nvrtc.nvrtcSetPCHHeapSize(size)
