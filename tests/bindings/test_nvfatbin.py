"""nvFatbin: a fat binary built from NVRTC's PTX and CUBIN without a GPU, what
the library refuses, the package's coverage of nvFatbin.h (generated from
bindings/nvfatbin.toml alone), and on a GPU the driver loading the fat
binary and launching a kernel from it."""

import ctypes
import os
import re
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests._helpers import ok
from tests._toolkit import ctx_create_args, cuda_major_minor, pythonpath
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

nvfatbin = pytest.importorskip("nvfatbin", reason="cubind's nvfatbin package is not built (nvFatbin.h missing)")
nvrtc = pytest.importorskip("nvrtc")

R = nvfatbin.nvFatbinResult
# The fat binary's header starts with this magic number (fatbinary_section.h's FATBIN_MAGIC).
FATBIN_MAGIC = 0xBA55ED50

TWICE = b"""
extern "C" __global__ void twice(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}
"""


def nvrtc_output(arch, kind):
    """TWICE compiled by NVRTC for ``arch`` ("compute_90" or "sm_90") to ``kind`` ("PTX", "CUBIN")."""
    err, prog = nvrtc.nvrtcCreateProgram(TWICE, b"twice.cu", 0, None, None)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        options = [f"--gpu-architecture={arch}".encode()]
        assert nvrtc.nvrtcCompileProgram(prog, len(options), options) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
        err, size = getattr(nvrtc, f"nvrtcGet{kind}Size")(prog)
        out = bytearray(size)
        assert getattr(nvrtc, f"nvrtcGet{kind}")(prog, out) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return bytes(out)


def build_fatbin(arch, options=(b"-64",), ptx=True, cubin=True):
    """A fat binary holding TWICE's PTX for compute_<arch> and its CUBIN for sm_<arch>."""
    handle = ok(nvfatbin.nvFatbinCreate(list(options), len(options)))
    try:
        if ptx:
            code = nvrtc_output(f"compute_{arch}", "PTX")
            ok(nvfatbin.nvFatbinAddPTX(handle, code, len(code), str(arch), "twice", ""))
        if cubin:
            code = nvrtc_output(f"sm_{arch}", "CUBIN")
            ok(nvfatbin.nvFatbinAddCubin(handle, code, len(code), str(arch).encode(), b"twice"))
        size = ok(nvfatbin.nvFatbinSize(handle))
        out = bytearray(size)
        ok(nvfatbin.nvFatbinGet(handle, out))
    finally:
        assert nvfatbin.nvFatbinDestroy(handle) == (R.NVFATBIN_SUCCESS,)
    return bytes(out)


def test_a_fatbin_holds_the_ptx_and_the_cubin_nvrtc_made():
    # Uncompressed, the CUBIN is in the fat binary as given, and the PTX's
    # code (nvFatbin reformats its text: blanks the comments).
    ptx, cubin = nvrtc_output("compute_90", "PTX"), nvrtc_output("sm_90", "CUBIN")
    fatbin = build_fatbin(90, options=(b"-64", b"-compress=false"))
    assert struct.unpack_from("<I", fatbin)[0] == FATBIN_MAGIC
    assert cubin in fatbin
    for code in (b".visible .entry twice", b"fma.rn.f32"):   # the kernel and its one computing instruction
        assert code in ptx and code in fatbin
    only_ptx = build_fatbin(90, options=(b"-64", b"-compress=false"), cubin=False)
    assert cubin not in only_ptx and b".visible .entry twice" in only_ptx
    # Compressed (the default) it is another fat binary: the options reached the library.
    assert build_fatbin(90, cubin=False) != only_ptx


def test_destroy_clears_the_handle():
    handle = ok(nvfatbin.nvFatbinCreate([], 0))
    assert int(handle) != 0
    assert nvfatbin.nvFatbinDestroy(handle) == (R.NVFATBIN_SUCCESS,)
    assert int(handle) == 0


def test_what_the_library_refuses_comes_back_as_its_status():
    err, handle = nvfatbin.nvFatbinCreate([b"-no-such-option"], 1)
    assert err == R.NVFATBIN_ERROR_UNRECOGNIZED_OPTION and handle is None
    handle = ok(nvfatbin.nvFatbinCreate([], 0))
    try:
        cubin = nvrtc_output("sm_90", "CUBIN")
        # A CUBIN for sm_90 said to be for sm_80: the ELF's architecture disagrees.
        err, = nvfatbin.nvFatbinAddCubin(handle, cubin, len(cubin), b"80", b"twice")
        assert err == R.NVFATBIN_ERROR_ELF_ARCH_MISMATCH
        err, = nvfatbin.nvFatbinAddCubin(handle, cubin, len(cubin), b"not-an-arch", b"twice")
        assert err == R.NVFATBIN_ERROR_INVALID_ARCH
    finally:
        nvfatbin.nvFatbinDestroy(handle)
    assert ok(nvfatbin.nvFatbinGetErrorString(R.NVFATBIN_ERROR_INVALID_ARCH))


def test_bad_input_names_the_parameter():
    handle = ok(nvfatbin.nvFatbinCreate([], 0))
    try:
        ptx = nvrtc_output("compute_90", "PTX")
        # The code is read for `size` bytes: more than the buffer holds is refused.
        with pytest.raises(ValueError, match=r"^code: buffer of \d+ bytes is smaller than the \d+ bytes of size$"):
            nvfatbin.nvFatbinAddPTX(handle, ptx, len(ptx) + 1, b"90", b"twice", b"")
        with pytest.raises(TypeError, match="arch"):
            nvfatbin.nvFatbinAddPTX(handle, ptx, len(ptx), 90, b"twice", b"")
        with pytest.raises(TypeError, match="options"):
            nvfatbin.nvFatbinCreate("-64", 1)
        with pytest.raises(ValueError, match="options"):
            nvfatbin.nvFatbinCreate([b"-64"], 2)
        ok(nvfatbin.nvFatbinAddPTX(handle, ptx, len(ptx), b"90", b"twice", b""))
        size = ok(nvfatbin.nvFatbinSize(handle))
        small = bytearray(size - 1)
        with pytest.raises(ValueError, match=r"^buffer: buffer of \d+ bytes is smaller than the \d+ bytes of "
                                             r"nvFatbinSize$"):
            nvfatbin.nvFatbinGet(handle, small)
        assert small == bytearray(size - 1)
        with pytest.raises(TypeError, match="buffer"):
            nvfatbin.nvFatbinGet(handle, memoryview(bytearray(size)).toreadonly())
    finally:
        nvfatbin.nvFatbinDestroy(handle)


def test_the_library_is_found_in_the_wheel_and_its_override_is_obeyed(tmp_path):
    # Found where the header came from (NVIDIA's wheel, beside a toolkit
    # without it); CUBIND_NVFATBIN_LIBRARY naming no file is an error naming
    # it, not a fall back to the search. A fresh interpreter: the first call
    # opens the library once per process.
    code = textwrap.dedent("""
        import nvfatbin
        from _cubind.loader import LibraryNotFoundError
        try:
            print(nvfatbin.nvFatbinVersion()[1])
        except LibraryNotFoundError as exc:
            print("LibraryNotFoundError:", exc)
    """)
    env = dict(os.environ, PYTHONPATH=pythonpath())
    env.pop("CUBIND_NVFATBIN_LIBRARY", None)
    found = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert found.returncode == 0 and found.stdout.strip() == str(ok(nvfatbin.nvFatbinVersion())[0]), found
    missing = tmp_path / "libnvfatbin.so.13"
    env["CUBIND_NVFATBIN_LIBRARY"] = str(missing)
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 0, refused.stderr
    assert refused.stdout.startswith("LibraryNotFoundError:") and "CUBIND_NVFATBIN_LIBRARY" in refused.stdout
    assert str(missing) in refused.stdout


def test_version_is_the_build_major():
    major, minor = ok(nvfatbin.nvFatbinVersion())
    toolkit = cuda_major_minor()
    assert major == (toolkit or (major,))[0] and minor >= 0


def test_every_function_of_the_header_is_bound():
    report = run_generator("--spec", str(ROOT / "bindings" / "nvfatbin.toml"), "--report")
    assert re.search(r"nvFatbin.h: (\d+)/\1 functions bound \(100.0%\)", report), report
    for name in ["nvFatbinCreate", "nvFatbinAddPTX", "nvFatbinAddCubin", "nvFatbinAddLTOIR", "nvFatbinSize",
                 "nvFatbinGet", "nvFatbinDestroy", "nvFatbinVersion"]:
        assert callable(getattr(nvfatbin, name)), name


@pytest.mark.gpu
@pytest.mark.parametrize("entries", ["ptx", "cubin", "both"])
def test_the_driver_loads_the_fatbin_and_launches_its_kernel(entries, driver, cu_device, device_arch):
    # The device's own architecture: the driver picks the CUBIN, or JIT-compiles the PTX.
    fatbin = build_fatbin(device_arch, ptx=entries in ("ptx", "both"), cubin=entries in ("cubin", "both"))
    cuda = driver
    n = 1000
    host = np.arange(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    ctx = ok(cuda.cuCtxCreate, *ctx_create_args(cuda, 0, cu_device))
    try:
        module = ok(cuda.cuModuleLoadData, fatbin)
        kernel = ok(cuda.cuModuleGetFunction, module, b"twice")
        dx = ok(cuda.cuMemAlloc, host.nbytes)
        ok(cuda.cuMemcpyHtoD, dx, host, host.nbytes)
        params = ((dx, n), (None, ctypes.c_int))
        ok(cuda.cuLaunchKernel, kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, None, params, None)
        ok(cuda.cuCtxSynchronize)
        ok(cuda.cuMemcpyDtoH, out, dx, out.nbytes)
        ok(cuda.cuMemFree, dx)
        ok(cuda.cuModuleUnload, module)
    finally:
        ok(cuda.cuCtxDestroy, ctx)
    np.testing.assert_array_equal(out, 2 * host + 1)

