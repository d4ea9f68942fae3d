"""libNVVM, bound from bindings/nvvm.toml alone: NVVM IR compiled to PTX
without a GPU (and run on one), the log of a failed compile, bad input, where
the library is looked for, and the package's coverage of nvvm.h."""

import re

import pytest

from _cubind.loader import search_candidates
from tests._helpers import ok
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

nvvm = pytest.importorskip("nvvm", reason="cubind's nvvm package is not built")
R = nvvm.nvvmResult

# Each thread doubles one float: NVVM IR in the text form (typed pointers,
# the IR version libNVVM 2.x reads), kernel marked by nvvm.annotations.
DATALAYOUT = (b'target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-'
              b'f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"')
TWICE_IR = DATALAYOUT + b"""
target triple = "nvptx64-unknown-cuda"

define void @twice(float* %x, i32 %n) {
entry:
  %id = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ok = icmp slt i32 %id, %n
  br i1 %ok, label %body, label %done
body:
  %p = getelementptr inbounds float, float* %x, i32 %id
  %v = load float, float* %p, align 4
  %w = fmul float %v, 2.0
  store float %w, float* %p, align 4
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() nounwind readnone

!nvvm.annotations = !{!0}
!0 = !{void (float*, i32)* @twice, !"kernel", i32 1}

!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
"""



def compile_ir(ir, options):
    """(status, PTX or the log) of compiling one module."""
    prog = ok(nvvm.nvvmCreateProgram())
    try:
        ok(nvvm.nvvmAddModuleToProgram(prog, ir, len(ir), b"module.ll"))
        err, = nvvm.nvvmCompileProgram(prog, len(options), options)
        if err != R.NVVM_SUCCESS:
            log = bytearray(ok(nvvm.nvvmGetProgramLogSize(prog)))
            ok(nvvm.nvvmGetProgramLog(prog, log))
            return err, bytes(log).rstrip(b"\0")
        ptx = bytearray(ok(nvvm.nvvmGetCompiledResultSize(prog)))
        ok(nvvm.nvvmGetCompiledResult(prog, ptx))
        return err, bytes(ptx).rstrip(b"\0")
    finally:
        assert nvvm.nvvmDestroyProgram(prog) == (R.NVVM_SUCCESS,)
        assert int(prog) == 0  # the C call cleared the handle through its pointer


def test_nvvm_ir_compiles_to_ptx():
    err, ptx = compile_ir(TWICE_IR, [b"-arch=compute_90"])
    assert err == R.NVVM_SUCCESS, ptx
    assert b".target sm_90" in ptx
    assert re.search(rb"\.entry twice\(\s*\.param \.u64 twice_param_0,\s*\.param \.u32 twice_param_1", ptx), ptx


def test_verify_and_versions():
    prog = ok(nvvm.nvvmCreateProgram())
    ok(nvvm.nvvmAddModuleToProgram(prog, TWICE_IR, len(TWICE_IR), b"twice.ll"))
    ok(nvvm.nvvmVerifyProgram(prog, 0, None))
    nvvm.nvvmDestroyProgram(prog)
    major, minor = ok(nvvm.nvvmVersion())
    assert (major, minor) >= (2, 0)
    ir_major, ir_minor, dbg_major, dbg_minor = ok(nvvm.nvvmIRVersion())
    assert ir_major >= 2 and dbg_major >= 3


def test_a_failed_compile_explains_itself_in_the_log():
    broken = TWICE_IR.replace(b"%w = fmul float %v, 2.0", b"%w = fmul float %undefined, 2.0")
    err, log = compile_ir(broken, [b"-arch=compute_90"])
    assert err != R.NVVM_SUCCESS
    assert b"undefined" in log, log
    err, log = compile_ir(TWICE_IR, [b"-no-such-option"])
    assert err == R.NVVM_ERROR_INVALID_OPTION, log


def test_bad_input_is_a_python_error():
    prog = ok(nvvm.nvvmCreateProgram())
    try:
        with pytest.raises(TypeError, match="options"):
            nvvm.nvvmCompileProgram(prog, 1, "-arch=compute_90")
        with pytest.raises(ValueError, match="options"):
            nvvm.nvvmCompileProgram(prog, 2, [b"-arch=compute_90"])
        with pytest.raises(ValueError, match="buffer"):
            nvvm.nvvmGetProgramLog(prog, bytearray(0))
    finally:
        nvvm.nvvmDestroyProgram(prog)
    assert nvvm.nvvmGetErrorString(R.NVVM_ERROR_COMPILATION) == (R.NVVM_SUCCESS, b"NVVM_ERROR_COMPILATION")


def test_the_loader_looks_in_the_toolkits_nvvm_directory(monkeypatch):
    monkeypatch.setenv("CUDA_HOME", "/opt/toolkit")
    places = [path for _, path in search_candidates("nvvm", ["libnvvm.so.4"], "CUBIND_NVVM_LIBRARY",
                                                    ["nvidia/cu13/lib"], ["nvvm/lib64", "lib64", "lib"])]
    assert places.index("/opt/toolkit/nvvm/lib64/libnvvm.so.4") < places.index("/opt/toolkit/lib64/libnvvm.so.4")
    assert "/usr/local/cuda/nvvm/lib64/libnvvm.so.4" in places


def test_every_function_of_the_header_is_bound():
    report = run_generator("--spec", str(ROOT / "bindings" / "nvvm.toml"), "--report")
    assert re.search(r"nvvm.h: (\d+)/\1 functions bound \(100.0%\), 0 skipped", report), report
    for name in re.findall(r"bound    (nvvm\w+)", report):
        assert callable(getattr(nvvm, name)), name


@pytest.mark.gpu
def test_ptx_from_nvvm_runs_on_the_gpu():
    import numpy as np

    import cuda

    err, ptx = compile_ir(TWICE_IR, [b"-arch=compute_90"])
    assert err == R.NVVM_SUCCESS, ptx
    assert cuda.cuInit(0)[0] == 0
    err, ctx = cuda.cuDevicePrimaryCtxRetain(0)
    assert err == 0
    assert cuda.cuCtxSetCurrent(ctx) == (0,)
    try:
        err, module = cuda.cuModuleLoadData(ptx + b"\0")
        assert err == 0, err
        err, kernel = cuda.cuModuleGetFunction(module, b"twice")
        assert err == 0, err
        host = np.arange(100, dtype=np.float32)
        err, dptr = cuda.cuMemAlloc(host.nbytes)
        assert err == 0
        assert cuda.cuMemcpyHtoD(dptr, host, host.nbytes) == (0,)
        import ctypes
        args = ((dptr, 100), (None, ctypes.c_int))
        assert cuda.cuLaunchKernel(kernel, 1, 1, 1, 128, 1, 1, 0, None, args, None) == (0,)
        out = np.empty_like(host)
        assert cuda.cuMemcpyDtoH(out, dptr, out.nbytes) == (0,)
        np.testing.assert_array_equal(out, host * 2)
        cuda.cuMemFree(dptr)
        cuda.cuModuleUnload(module)
    finally:
        cuda.cuDevicePrimaryCtxRelease(0)
