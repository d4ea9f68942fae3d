"""NVVM's modules are bytes, not text (API.md "Strings"): the ``const char
*buffer`` of nvvmAddModuleToProgram and nvvmLazyAddModuleToProgram, whose
length is ``size``, takes any buffer-protocol object, NUL bytes included. The
toolkit's libdevice (the CUDA math library as LLVM bitcode) is linked through
each of them with a kernel calling its ``__nv_sinf``, and compiled to PTX on
the CPU; a buffer of the wrong type or shorter than ``size`` is refused before
libNVVM reads it."""

import re

import pytest

from tests._helpers import ok
from tests._toolkit import libdevice
from tests.bindings.test_nvvm import DATALAYOUT

nvvm = pytest.importorskip("nvvm", reason="cubind's nvvm package is not built")
R = nvvm.nvvmResult
LIBDEVICE = libdevice()
pytestmark = pytest.mark.skipif(LIBDEVICE is None,
                                reason="no nvvm/libdevice/libdevice.10.bc in the CUDA installation the build found")
ADD = {"eager": nvvm.nvvmAddModuleToProgram, "lazy": nvvm.nvvmLazyAddModuleToProgram}

# Each thread replaces one float by its sine, computed by libdevice.
SINE_IR = DATALAYOUT + b"""
target triple = "nvptx64-unknown-cuda"

define void @sine(float* %x) {
entry:
  %id = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr inbounds float, float* %x, i32 %id
  %v = load float, float* %p, align 4
  %s = call float @__nv_sinf(float %v)
  store float %s, float* %p, align 4
  ret void
}

declare float @__nv_sinf(float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() nounwind readnone

!nvvm.annotations = !{!0}
!0 = !{void (float*)* @sine, !"kernel", i32 1}

!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
"""


@pytest.fixture(scope="module")
def bitcode():
    data = LIBDEVICE.read_bytes()
    assert data.startswith(b"BC\xc0\xde") or data.startswith(b"\xde\xc0\x17\x0b"), "not LLVM bitcode"
    assert b"\0" in data[:64]  # read up to a NUL, it would be a few bytes
    return data


def compile_sine(add, library, size=None):
    """The PTX of SINE_IR with ``library`` added by ``add`` (``size``: its length)."""
    prog = ok(nvvm.nvvmCreateProgram())
    try:
        ok(nvvm.nvvmAddModuleToProgram(prog, SINE_IR, len(SINE_IR), b"sine.ll"))
        ok(add(prog, library, len(library) if size is None else size, b"libdevice.10.bc"))
        err, = nvvm.nvvmCompileProgram(prog, 1, [b"-arch=compute_90"])
        if err != R.NVVM_SUCCESS:
            log = bytearray(ok(nvvm.nvvmGetProgramLogSize(prog)))
            ok(nvvm.nvvmGetProgramLog(prog, log))
            text = bytes(log).rstrip(b"\0").decode(errors="replace")
            pytest.fail(f"{err!r}: {text}")
        ptx = bytearray(ok(nvvm.nvvmGetCompiledResultSize(prog)))
        ok(nvvm.nvvmGetCompiledResult(prog, ptx))
        return bytes(ptx).rstrip(b"\0").decode()
    finally:
        nvvm.nvvmDestroyProgram(prog)


@pytest.mark.parametrize("how", ADD)
def test_libdevice_bitcode_links_into_the_kernel(how, bitcode):
    ptx = compile_sine(ADD[how], bitcode)
    assert re.search(r"\.visible \.entry sine\(", ptx), ptx
    # sinf's code is the kernel's own now: no call to libdevice, nor a
    # declaration of it, is left for a linker to resolve.
    assert "__nv_sinf" not in ptx, ptx
    assert ".extern" not in ptx and "call" not in ptx.split(".entry sine", 1)[1], ptx
    # ... and it is there: the argument reduction (libdevice's table of 2/pi
    # for large arguments) and the polynomial of sinf.
    assert "__cudart_i2opi_f" in ptx, ptx
    assert len(re.findall(r"\bfma\.rn\.f32\b", ptx)) >= 3, ptx


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "numpy", "slice"])
def test_any_buffer_protocol_object_is_a_module(kind, bitcode):
    np = pytest.importorskip("numpy")
    given = {"bytearray": lambda: bytearray(bitcode),
             "memoryview": lambda: memoryview(bitcode),
             "numpy": lambda: np.frombuffer(bitcode, dtype=np.uint8).copy(),
             # the front of a larger buffer: `size` bytes are read, no more
             "slice": lambda: memoryview(bytearray(bitcode) + b"\0not bitcode")}[kind]()
    ptx = compile_sine(nvvm.nvvmLazyAddModuleToProgram, given, size=len(bitcode))
    assert ".visible .entry sine(" in ptx


def test_text_ir_is_read_for_its_size_not_to_a_nul(bitcode):
    # What follows `size` bytes is not read: here a NUL and bytes no parser takes.
    padded = SINE_IR + b"\0\xff\xfe garbage"
    prog = ok(nvvm.nvvmCreateProgram())
    try:
        ok(nvvm.nvvmAddModuleToProgram(prog, padded, len(SINE_IR), b"sine.ll"))
        ok(nvvm.nvvmAddModuleToProgram(prog, bitcode, len(bitcode), b"libdevice.10.bc"))
        ok(nvvm.nvvmCompileProgram(prog, 1, [b"-arch=compute_90"]))
    finally:
        nvvm.nvvmDestroyProgram(prog)


@pytest.mark.parametrize("how", ADD)
def test_bad_buffers_are_refused_naming_the_parameter(how):
    add = ADD[how]
    prog = ok(nvvm.nvvmCreateProgram())
    try:
        with pytest.raises(ValueError, match=r"^buffer: buffer of 4 bytes is smaller than the 5 bytes of size$"):
            add(prog, b"IR\0!", 5, b"short.ll")
        with pytest.raises(TypeError, match=r"^buffer: .*bytes, not str.*got str$"):
            add(prog, SINE_IR.decode(), len(SINE_IR), b"text.ll")
        with pytest.raises(TypeError, match=r"^buffer: .*got list$"):
            add(prog, list(SINE_IR), len(SINE_IR), b"list.ll")
        with pytest.raises(TypeError, match=r"^name: "):
            add(prog, SINE_IR, len(SINE_IR), 3)
        # Each was refused before libNVVM saw it: the program holds no module.
        assert nvvm.nvvmCompileProgram(prog, 0, None) == (R.NVVM_ERROR_NO_MODULE_IN_PROGRAM,)
    finally:
        nvvm.nvvmDestroyProgram(prog)
