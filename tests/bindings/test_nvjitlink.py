"""nvJitLink without a GPU: link-time optimisation of two NVRTC translation
units into one cubin, the error log of a failed link, and the package's
coverage of nvJitLink.h (generated from bindings/nvjitlink.toml alone)."""

import re

import pytest

from tests._helpers import ok
from tests._toolkit import cuda_major_minor
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

nvjitlink = pytest.importorskip("nvjitlink", reason="cubind's nvjitlink package is not built")
nvrtc = pytest.importorskip("nvrtc")

R = nvjitlink.nvJitLinkResult
INPUT = nvjitlink.nvJitLinkInputType

ADD = b"""
extern __device__ float scale(float x);
extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = scale(a) * x[i] + y[i];
}
"""
SCALE = b"""
__device__ float scale(float x) { return 2.0f * x; }
"""


def lto_ir(source, name, arch="sm_90"):
    err, prog = nvrtc.nvrtcCreateProgram(source, name, 0, None, None)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    opts = [b"-dlto", b"-rdc=true", f"-arch={arch}".encode()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    err, size = nvrtc.nvrtcGetLTOIRSize(prog)
    ir = bytearray(size)
    assert nvrtc.nvrtcGetLTOIR(prog, ir) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    nvrtc.nvrtcDestroyProgram(prog)
    return bytes(ir)



def test_lto_links_two_translation_units_into_a_cubin():
    units = [lto_ir(ADD, b"axpy.cu"), lto_ir(SCALE, b"scale.cu")]
    options = [b"-arch=sm_90", b"-lto"]
    handle = ok(nvjitlink.nvJitLinkCreate(len(options), options))
    try:
        for ir, name in zip(units, [b"axpy", b"scale"]):
            ok(nvjitlink.nvJitLinkAddData(handle, INPUT.NVJITLINK_INPUT_LTOIR, ir, len(ir), name))
        ok(nvjitlink.nvJitLinkComplete(handle))
        size = ok(nvjitlink.nvJitLinkGetLinkedCubinSize(handle))
        cubin = bytearray(size)
        ok(nvjitlink.nvJitLinkGetLinkedCubin(handle, cubin))
    finally:
        assert nvjitlink.nvJitLinkDestroy(handle) == (R.NVJITLINK_SUCCESS,)
    assert cubin[:4] == b"\x7fELF"
    assert b"axpy" in cubin


def test_a_failed_link_explains_itself_in_the_error_log():
    options = [b"-arch=sm_90", b"-lto"]
    handle = ok(nvjitlink.nvJitLinkCreate(len(options), options))
    ir = lto_ir(ADD, b"axpy.cu")  # scale() is never defined
    ok(nvjitlink.nvJitLinkAddData(handle, INPUT.NVJITLINK_INPUT_LTOIR, ir, len(ir), b"axpy"))
    err, = nvjitlink.nvJitLinkComplete(handle)
    assert err != R.NVJITLINK_SUCCESS
    log = bytearray(ok(nvjitlink.nvJitLinkGetErrorLogSize(handle)))
    ok(nvjitlink.nvJitLinkGetErrorLog(handle, log))
    assert b"scale" in bytes(log)
    nvjitlink.nvJitLinkDestroy(handle)


def test_version_and_bad_input():
    major, minor = ok(nvjitlink.nvJitLinkVersion())
    toolkit = cuda_major_minor()   # the library of the build's major version, as new as its headers
    assert (major, minor) >= (toolkit or (12, 0)) and major == (toolkit or (major,))[0]
    with pytest.raises(TypeError, match="options"):
        nvjitlink.nvJitLinkCreate(1, "-arch=sm_90")
    with pytest.raises(ValueError, match="options"):
        nvjitlink.nvJitLinkCreate(2, [b"-arch=sm_90"])
    err, handle = nvjitlink.nvJitLinkCreate(1, [b"-no-such-option"])
    assert err == R.NVJITLINK_ERROR_UNRECOGNIZED_OPTION and handle is None


def test_every_function_of_the_header_is_bound():
    report = run_generator("--spec", str(ROOT / "bindings" / "nvjitlink.toml"), "--report")
    assert re.search(r"nvJitLink.h: (\d+)/\1 functions bound \(100.0%\)", report), report
    # Each wrapper calls the versioned symbol it forwards to.
    assert re.search(r"bound    nvJitLinkCreate \(calls __nvJitLinkCreate_\d+_\d+\)", report)
    for name in ["nvJitLinkCreate", "nvJitLinkAddData", "nvJitLinkComplete", "nvJitLinkGetLinkedCubin",
                 "nvJitLinkGetErrorLog", "nvJitLinkVersion"]:
        assert callable(getattr(nvjitlink, name)), name
