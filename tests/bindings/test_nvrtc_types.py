"""The Python-side types of the nvrtc module: the status enum, the program
handle, integer conversion, module layout, stubs and docstrings."""

import ast
import ctypes
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

import nvrtc

R = nvrtc.nvrtcResult


def _header_enum(header_text):
    body = re.search(
        r"typedef enum\s*\{(.*?)\}\s*nvrtcResult;", header_text, re.DOTALL
    )[1]
    return {
        name: int(value) for name, value in re.findall(r"(NVRTC_\w+)\s*=\s*(\d+)", body)
    }


def _header_functions(header_text):
    # The C++-only nvrtcGetTypeName helpers live after this guard.
    text = header_text.split("#if NVRTC_GET_TYPE_NAME")[0]
    return set(
        re.findall(
            r"^(?:nvrtcResult|const char\s*\*)\s*(nvrtc\w+)\s*\(", text, re.MULTILINE
        )
    )


# -- nvrtcResult -------------------------------------------------------------


def test_enum_members_match_header(nvrtc_header):
    expected = _header_enum(nvrtc_header)
    assert len(expected) >= 17   # 12.9: 17, 13.0: 18, 13.5: 19
    assert {m.name: m.value for m in R} == expected


def test_enum_is_int_like():
    success = R.NVRTC_SUCCESS
    assert isinstance(success, int)
    assert success == 0 and 0 == success
    assert R.NVRTC_ERROR_COMPILATION == 6
    assert R.NVRTC_ERROR_COMPILATION != R.NVRTC_ERROR_INVALID_OPTION
    assert int(R.NVRTC_ERROR_CANCELLED) == 16
    assert hash(R.NVRTC_ERROR_COMPILATION) == hash(6)
    assert {6: "x"}[R.NVRTC_ERROR_COMPILATION] == "x"


def test_enum_name_value_repr():
    member = R.NVRTC_ERROR_COMPILATION
    assert member.name == "NVRTC_ERROR_COMPILATION"
    assert member.value == 6
    assert type(member.value) is int
    assert repr(member) == "<nvrtcResult.NVRTC_ERROR_COMPILATION: 6>"
    assert repr(R.NVRTC_SUCCESS) == "<nvrtcResult.NVRTC_SUCCESS: 0>"


def test_enum_iteration_len_membership():
    members = list(R)
    assert len(members) == len(R) >= 17
    assert members[0] is R.NVRTC_SUCCESS
    assert [m.value for m in members] == sorted(m.value for m in members)
    assert all(isinstance(m, R) for m in members)
    assert R.NVRTC_ERROR_CANCELLED in R


def test_enum_lookup_by_value():
    assert R(6) is R.NVRTC_ERROR_COMPILATION
    assert R(0) is R.NVRTC_SUCCESS
    assert R(R.NVRTC_ERROR_CANCELLED) is R.NVRTC_ERROR_CANCELLED
    assert R(np.int32(4)) is R.NVRTC_ERROR_INVALID_PROGRAM


@pytest.mark.parametrize("value", [9999, -1, max(m.value for m in R) + 1])
def test_enum_lookup_unknown_value(value):
    with pytest.raises(ValueError):
        R(value)


def test_call_results_are_members():
    assert nvrtc.nvrtcVersion()[0] is R.NVRTC_SUCCESS
    assert type(nvrtc.nvrtcGetPCHHeapSize()[0]) is R
    assert nvrtc.nvrtcCompileProgram(None, 0, [])[0] is R.NVRTC_ERROR_INVALID_PROGRAM


# -- nvrtcProgram ------------------------------------------------------------


def test_program_from_int():
    assert int(nvrtc.nvrtcProgram(0)) == 0
    assert int(nvrtc.nvrtcProgram(123)) == 123


def test_program_equality_and_hash():
    a, b, c = nvrtc.nvrtcProgram(123), nvrtc.nvrtcProgram(123), nvrtc.nvrtcProgram(124)
    assert a == b and a != c
    assert hash(a) == hash(b)
    assert len({a, b, c}) == 2


def test_program_repr():
    for value in (0, 123, 0x7F0012345678):
        match = re.fullmatch(
            r"<nvrtcProgram 0x([0-9a-fA-F]+)>", repr(nvrtc.nvrtcProgram(value))
        )
        assert match, repr(nvrtc.nvrtcProgram(value))
        assert int(match[1], 16) == value


def test_program_get_ptr_points_at_value():
    prog = nvrtc.nvrtcProgram(0x1234)
    ptr = prog.getPtr()
    assert isinstance(ptr, int) and ptr != 0
    assert ctypes.c_void_p.from_address(ptr).value == 0x1234


def test_created_program_is_a_handle(make_program, saxpy_src):
    prog = make_program(saxpy_src)
    assert isinstance(prog, nvrtc.nvrtcProgram)
    assert int(prog) != 0
    assert prog == nvrtc.nvrtcProgram(int(prog))
    assert ctypes.c_void_p.from_address(prog.getPtr()).value == int(prog)


def test_program_accepted_as_plain_int(saxpy_program):
    by_handle = nvrtc.nvrtcGetPTXSize(saxpy_program)
    assert by_handle[0] is R.NVRTC_SUCCESS
    assert nvrtc.nvrtcGetPTXSize(int(saxpy_program)) == by_handle
    assert nvrtc.nvrtcGetPTXSize(nvrtc.nvrtcProgram(int(saxpy_program))) == by_handle


# -- integer conversion ------------------------------------------------------


def test_numpy_ints_accepted(restore_pch_heap_size):
    assert nvrtc.nvrtcSetPCHHeapSize(np.uint64(1 << 20)) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcGetPCHHeapSize() == (R.NVRTC_SUCCESS, 1 << 20)
    assert nvrtc.nvrtcSetPCHHeapSize(np.int32(2 << 20)) == (R.NVRTC_SUCCESS,)
    assert nvrtc.nvrtcGetPCHHeapSize() == (R.NVRTC_SUCCESS, 2 << 20)
    assert nvrtc.nvrtcGetErrorString(np.int64(6)) == (R.NVRTC_SUCCESS, b"NVRTC_ERROR_COMPILATION")


def test_numpy_int_as_count(make_program, saxpy_src):
    prog = make_program(saxpy_src)
    assert nvrtc.nvrtcCompileProgram(prog, np.int32(1), ["-arch=compute_80"]) == (
        R.NVRTC_SUCCESS,
    )


def test_outputs_are_python_ints(saxpy_program):
    _, size = nvrtc.nvrtcGetPTXSize(saxpy_program)
    assert type(size) is int and size > 0
    _, major, minor = nvrtc.nvrtcVersion()
    assert type(major) is int and type(minor) is int


# -- module layout -----------------------------------------------------------


def _cubind_cuda_present():
    # NVIDIA's cuda.* namespace packages make a bare ``import cuda`` succeed too.
    try:
        cuda = importlib.import_module("cuda")
    except ImportError:
        return False
    return hasattr(cuda, "cuInit")


@pytest.mark.xfail(
    not _cubind_cuda_present(),
    strict=False,
    reason="cuda package arrives with the driver API issue",
)
def test_from_cuda_import_nvrtc_is_same_module():
    from cuda import nvrtc as classic

    assert classic is nvrtc


def test_all_lists_every_header_function(nvrtc_header):
    functions = _header_functions(nvrtc_header)
    assert "nvrtcCompileProgram" in functions and "nvrtcGetErrorString" in functions
    missing = functions - set(nvrtc.__all__)
    assert not missing
    for name in nvrtc.__all__:
        assert hasattr(nvrtc, name), name


def test_no_abi_or_private_names_in_all():
    assert len(nvrtc.__all__) == len(set(nvrtc.__all__))
    assert not [
        n for n in nvrtc.__all__ if n.startswith("_") or re.search(r"_v\d+$", n)
    ]


def _all_functions():
    return [
        name
        for name in nvrtc.__all__
        if callable(getattr(nvrtc, name))
        and name.startswith("nvrtc")
        and not isinstance(getattr(nvrtc, name), type)
    ]


def test_stub_file_lists_every_function():
    stub = Path(nvrtc.__file__).parent / "__init__.pyi"
    assert stub.is_file(), stub
    text = stub.read_text()
    ast.parse(text)  # the stub is valid Python
    functions = _all_functions()
    assert functions
    missing = [
        name
        for name in functions
        if not re.search(rf"^\s*def {name}\(", text, re.MULTILINE)
    ]
    assert not missing


@pytest.mark.parametrize(
    "name", ["nvrtcGetPTX", "nvrtcCompileProgram", "nvrtcGetErrorString"]
)
def test_docstring_known_functions(name):
    doc = getattr(nvrtc, name).__doc__
    assert doc and doc.strip()
    assert name in doc


def test_every_function_has_docstring():
    undocumented = [
        name
        for name in _all_functions()
        if not (getattr(nvrtc, name).__doc__ or "").strip()
    ]
    assert not undocumented
