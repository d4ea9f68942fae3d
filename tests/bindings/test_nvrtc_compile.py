"""NVRTC end to end: versions, compiling to PTX/CUBIN/LTO-IR/OptiX-IR, logs,
name expressions, headers, PCH, flow callbacks. Needs NVRTC, not a GPU."""

import ctypes
import gc
import re
import sys

import pytest

import nvrtc
from tests._toolkit import cuda_major_minor

R = nvrtc.nvrtcResult

SYNTAX_ERROR_SRC = """\
__global__ void broken(int *p)
{
    int x = ;
    p[0] = x;
}
"""
SYNTAX_ERROR_LINE = 3

TEMPLATE_SRC = "template<typename T> __global__ void k(T* p) { p[0] = T(); }\n"


# -- queries ---------------------------------------------------------------


def test_version_major_is_the_headers():
    err, major, minor = nvrtc.nvrtcVersion()
    assert err == R.NVRTC_SUCCESS
    assert major == (cuda_major_minor() or (13, 0))[0]   # libnvrtc.so.12 for 12.x headers, .so.13 for 13.x
    assert isinstance(minor, int) and minor >= 0


def test_version_matches_toolkit():
    toolkit = cuda_major_minor()
    if toolkit is None:
        pytest.skip("no cuda.h to read the toolkit's version from")
    err, major, minor = nvrtc.nvrtcVersion()
    assert err == R.NVRTC_SUCCESS
    assert major == toolkit[0] and minor >= toolkit[1], (major, minor, toolkit)


def test_supported_archs_include_90_and_match_count():
    err, count = nvrtc.nvrtcGetNumSupportedArchs()
    assert err == R.NVRTC_SUCCESS
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    assert err == R.NVRTC_SUCCESS
    assert isinstance(archs, list)
    assert len(archs) == count > 0
    assert all(type(a) is int for a in archs)
    assert 90 in archs
    assert archs == sorted(archs)  # the header promises ascending order


# -- outputs ---------------------------------------------------------------


def test_saxpy_compiles_to_ptx(saxpy_program, get_output):
    ptx = get_output(saxpy_program, "PTX")
    assert ptx.endswith(b"\0")  # the size includes the terminating NUL
    text = ptx.rstrip(b"\0").decode()
    assert ".version" in text
    assert re.search(r"\.entry\s+saxpy\s*\(", text)
    assert ".target sm_75" in text


def test_ptx_into_bytes_buffer_is_filled_in_place(saxpy_program):
    err, size = nvrtc.nvrtcGetPTXSize(saxpy_program)
    assert err == R.NVRTC_SUCCESS
    buf = b" " * size  # the classic CUDA Python spelling
    (err,) = nvrtc.nvrtcGetPTX(saxpy_program, buf)
    assert err == R.NVRTC_SUCCESS
    assert b".entry saxpy" in buf


def test_ptx_into_larger_buffer(saxpy_program):
    err, size = nvrtc.nvrtcGetPTXSize(saxpy_program)
    assert err == R.NVRTC_SUCCESS
    buf = bytearray(b"Z" * (size + 16))
    (err,) = nvrtc.nvrtcGetPTX(saxpy_program, buf)
    assert err == R.NVRTC_SUCCESS
    assert buf[size - 1] == 0
    assert buf[size:] == b"Z" * 16


def test_cubin_for_sm_90_is_elf(compile_program, get_output, saxpy_src):
    prog = compile_program(saxpy_src, ["--gpu-architecture=sm_90"])
    cubin = get_output(prog, "CUBIN")
    assert len(cubin) > 64
    assert cubin.startswith(b"\x7fELF")


def test_lto_ir_with_dlto(compile_program, get_output, saxpy_src):
    prog = compile_program(saxpy_src, ["-dlto", "-arch=sm_90"])
    err, size = nvrtc.nvrtcGetLTOIRSize(prog)
    assert err == R.NVRTC_SUCCESS
    assert size > 0
    ltoir = get_output(prog, "LTOIR")
    assert len(ltoir) == size
    assert ltoir.strip(b"\0")


def test_optix_ir(make_program, program_log, get_output, saxpy_src):
    prog = make_program(saxpy_src)
    (err,) = nvrtc.nvrtcCompileProgram(prog, 1, ["--optix-ir"])
    if err == R.NVRTC_ERROR_INVALID_OPTION:
        pytest.skip(f"this NVRTC does not support --optix-ir: {program_log(prog)}")
    assert err == R.NVRTC_SUCCESS, program_log(prog)
    optixir = get_output(prog, "OptiXIR")
    assert len(optixir) > 0
    assert optixir.strip(b"\0")


# -- errors and logs -------------------------------------------------------


@pytest.mark.parametrize("name", ["broken.cu", None])
def test_syntax_error_reports_line_in_log(make_program, program_log, name):
    prog = make_program(SYNTAX_ERROR_SRC, name)
    (err,) = nvrtc.nvrtcCompileProgram(prog, 0, [])
    assert err is R.NVRTC_ERROR_COMPILATION
    log = program_log(prog)
    shown_name = name or "default_program"  # NVRTC's name for an unnamed program
    assert f"{shown_name}({SYNTAX_ERROR_LINE}): error" in log


def test_log_size_includes_nul(make_program):
    prog = make_program(SYNTAX_ERROR_SRC)
    nvrtc.nvrtcCompileProgram(prog, 0, [])
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    assert err == R.NVRTC_SUCCESS
    buf = bytearray(b"Z" * size)
    (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
    assert err == R.NVRTC_SUCCESS
    assert buf[-1] == 0 and b"Z" not in buf[:-1] and b"error" in buf


def test_invalid_option_is_reported(make_program, program_log, saxpy_src):
    prog = make_program(saxpy_src)
    (err,) = nvrtc.nvrtcCompileProgram(prog, 1, ["--no-such-option"])
    assert err is R.NVRTC_ERROR_INVALID_OPTION
    assert "no-such-option" in program_log(prog)


# -- name expressions, headers, options ------------------------------------


def test_lowered_name_of_template_instance(make_program, program_log):
    prog = make_program(TEMPLATE_SRC)
    assert nvrtc.nvrtcAddNameExpression(prog, "k<float>") == (R.NVRTC_SUCCESS,)
    (err,) = nvrtc.nvrtcCompileProgram(prog, 0, [])
    assert err == R.NVRTC_SUCCESS, program_log(prog)
    err, lowered = nvrtc.nvrtcGetLoweredName(prog, b"k<float>")
    assert err == R.NVRTC_SUCCESS
    assert isinstance(lowered, bytes)
    assert lowered.startswith(b"_Z")
    assert b"k" in lowered
    assert b"\0" not in lowered


def test_lowered_name_before_compile_is_an_error(make_program):
    prog = make_program(TEMPLATE_SRC)
    nvrtc.nvrtcAddNameExpression(prog, "k<float>")
    err, lowered = nvrtc.nvrtcGetLoweredName(prog, "k<float>")
    assert err is R.NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION
    assert lowered is None


HEADER_USER_SRC = '#include "my.h"\n__global__ void k(int *p) { p[0] = MY_VALUE; }\n'


@pytest.mark.parametrize(
    ("headers", "include_names"),
    [
        (["#define MY_VALUE 12345\n"], ["my.h"]),
        ([b"#define MY_VALUE 12345\n"], [b"my.h"]),
    ],
    ids=["str", "bytes"],
)
def test_headers_are_used(compile_to_ptx, headers, include_names):
    ptx = compile_to_ptx(HEADER_USER_SRC, headers=headers, include_names=include_names)
    assert "12345" in ptx


def test_missing_header_fails(make_program, program_log):
    prog = make_program(HEADER_USER_SRC)  # control for test_headers_are_used
    (err,) = nvrtc.nvrtcCompileProgram(prog, 0, [])
    assert err is R.NVRTC_ERROR_COMPILATION
    assert "my.h" in program_log(prog)


@pytest.mark.parametrize(
    "options",
    [
        ["-arch=compute_80"],
        [b"-arch=compute_80"],
        ("--fmad=false", b"-arch=compute_80"),
    ],
    ids=["str", "bytes", "mixed-tuple"],
)
def test_options_as_str_and_bytes(compile_to_ptx, saxpy_src, options):
    ptx = compile_to_ptx(saxpy_src, options)
    assert ".target sm_80" in ptx  # the option really reached NVRTC


def test_src_and_name_as_bytes(compile_program, get_output, saxpy_src):
    prog = compile_program(saxpy_src.encode(), name=b"saxpy.cu")
    assert b".entry saxpy" in get_output(prog, "PTX")


# -- precompiled headers ---------------------------------------------------


def test_pch_heap_size_round_trip(restore_pch_heap_size):
    assert restore_pch_heap_size > 0
    assert nvrtc.nvrtcSetPCHHeapSize(1 << 20) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcGetPCHHeapSize() == (R.NVRTC_SUCCESS, 1 << 20)
    assert nvrtc.nvrtcSetPCHHeapSize(3 << 20) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcGetPCHHeapSize() == (R.NVRTC_SUCCESS, 3 << 20)


def test_pch_status_after_plain_compile(saxpy_program):
    result = nvrtc.nvrtcGetPCHCreateStatus(saxpy_program)
    assert result == (R.NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED,)
    assert isinstance(result[0], R)


def test_pch_heap_exhausted_reports_required_size(
    make_program, saxpy_src, restore_pch_heap_size, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # in case NVRTC writes a PCH file after all
    nvrtc.nvrtcSetPCHHeapSize(1 << 20)
    prog = make_program(saxpy_src)
    assert nvrtc.nvrtcCompileProgram(prog, 1, ["-pch"]) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcGetPCHCreateStatus(prog) == (
        R.NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED,
    )
    err, required = nvrtc.nvrtcGetPCHHeapSizeRequired(prog)
    assert err == R.NVRTC_SUCCESS
    assert required > 1 << 20


# -- flow callback ---------------------------------------------------------


def test_flow_callback_is_called(make_program, saxpy_src):
    calls = []

    def callback(payload, reserved):
        calls.append((payload, reserved))
        return 0

    prog = make_program(saxpy_src)
    assert nvrtc.nvrtcSetFlowCallback(prog, callback, 1234) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_SUCCESS,)
    assert len(calls) >= 1
    payload, reserved = calls[0]
    assert payload == 1234
    assert reserved in (None, 0)


def test_flow_callback_returning_1_cancels(make_program, saxpy_src):
    prog = make_program(saxpy_src)
    nvrtc.nvrtcSetFlowCallback(prog, lambda payload, reserved: 1, None)
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_ERROR_CANCELLED,)


def test_flow_callback_kept_alive_by_binding(make_program, saxpy_src):
    calls = []
    prog = make_program(saxpy_src)
    nvrtc.nvrtcSetFlowCallback(
        prog, lambda payload, reserved: calls.append(1) or 1, None
    )
    gc.collect()  # the lambda has no other reference now
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_ERROR_CANCELLED,)
    assert calls


def test_flow_callback_exception_goes_to_unraisablehook(
    make_program, saxpy_src, monkeypatch
):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def callback(payload, reserved):
        raise ZeroDivisionError("boom from callback")

    prog = make_program(saxpy_src)
    nvrtc.nvrtcSetFlowCallback(prog, callback, None)
    # The flow callback can report failure: the exception cancels the compile
    # (NVRTC stops calling it), and it is reported once, not once per call.
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_ERROR_CANCELLED,)
    assert len(reported) == 1
    assert isinstance(reported[0].exc_value, ZeroDivisionError)


def test_flow_callback_as_raw_function_pointer(make_program, saxpy_src):
    cfunc_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    calls = []
    cfunc = cfunc_type(lambda payload, reserved: calls.append(payload) or 1)
    address = ctypes.cast(cfunc, ctypes.c_void_p).value
    prog = make_program(saxpy_src)
    assert nvrtc.nvrtcSetFlowCallback(prog, address, 77) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_ERROR_CANCELLED,)
    assert calls and calls[0] == 77


def test_flow_callback_unset_with_none_is_safe(make_program, saxpy_src):
    # NVRTC itself rejects a NULL callback (NVRTC_ERROR_INVALID_INPUT); either
    # way, the previously registered callable must stay valid if still in use.
    calls = []
    prog = make_program(saxpy_src)
    nvrtc.nvrtcSetFlowCallback(
        prog, lambda payload, reserved: calls.append(1) or 0, None
    )
    (err,) = nvrtc.nvrtcSetFlowCallback(prog, None, None)
    assert err in (R.NVRTC_SUCCESS, R.NVRTC_ERROR_INVALID_INPUT)
    gc.collect()
    assert nvrtc.nvrtcCompileProgram(prog, 0, []) == (R.NVRTC_SUCCESS,)
    if err == R.NVRTC_SUCCESS:
        assert not calls  # really unset


# -- error strings, destroy ------------------------------------------------


@pytest.mark.parametrize("value", [R.NVRTC_ERROR_COMPILATION, 6], ids=["enum", "int"])
def test_error_string(value):
    assert nvrtc.nvrtcGetErrorString(value) == (R.NVRTC_SUCCESS, b"NVRTC_ERROR_COMPILATION")


def test_error_string_for_every_member():
    for member in R:
        assert nvrtc.nvrtcGetErrorString(member) == (R.NVRTC_SUCCESS, member.name.encode())


def test_destroy_program_zeroes_handle(saxpy_src):
    err, prog = nvrtc.nvrtcCreateProgram(saxpy_src, "prog.cu", 0, None, None)
    assert err == R.NVRTC_SUCCESS
    assert int(prog) != 0
    assert nvrtc.nvrtcDestroyProgram(prog) == (R.NVRTC_SUCCESS,)
    assert int(prog) == 0
    assert nvrtc.nvrtcDestroyProgram(prog) == (R.NVRTC_ERROR_INVALID_PROGRAM,)
