"""Bad input gives a status or a clear Python exception, never a crash."""

import pytest

import nvrtc

R = nvrtc.nvrtcResult

NULL_PROGRAMS = pytest.mark.parametrize(
    "null_prog", [None, 0, nvrtc.nvrtcProgram(0)], ids=["None", "int0", "handle0"]
)


# -- NULL programs -----------------------------------------------------------


@NULL_PROGRAMS
def test_compile_null_program(null_prog):
    assert nvrtc.nvrtcCompileProgram(null_prog, 0, []) == (
        R.NVRTC_ERROR_INVALID_PROGRAM,
    )


@NULL_PROGRAMS
@pytest.mark.parametrize("getter", ["nvrtcGetPTXSize", "nvrtcGetProgramLogSize"])
def test_size_of_null_program(null_prog, getter):
    err, size = getattr(nvrtc, getter)(null_prog)
    assert err is R.NVRTC_ERROR_INVALID_PROGRAM
    assert size is None  # on error every output is None


@NULL_PROGRAMS
def test_destroy_null_program(null_prog):
    # nvrtcDestroyProgram(NULL) and nvrtcDestroyProgram(&null) are both rejected.
    (err,) = nvrtc.nvrtcDestroyProgram(null_prog)
    assert isinstance(err, R)
    assert err in (R.NVRTC_ERROR_INVALID_PROGRAM, R.NVRTC_ERROR_INVALID_INPUT)


# -- wrong types -------------------------------------------------------------


@pytest.mark.parametrize("bad", ["abc", 1.5, b"\x00" * 8, object()])
def test_prog_of_wrong_type(bad):
    with pytest.raises(TypeError, match="prog"):
        nvrtc.nvrtcCompileProgram(bad, 0, [])
    with pytest.raises(TypeError, match="prog"):
        nvrtc.nvrtcGetPTXSize(bad)


def test_src_of_wrong_type():
    with pytest.raises(TypeError, match="src"):
        nvrtc.nvrtcCreateProgram(123, "prog.cu", 0, None, None)


def test_name_of_wrong_type(saxpy_src):
    with pytest.raises(TypeError, match="name"):
        nvrtc.nvrtcCreateProgram(saxpy_src, 1.0, 0, None, None)


@pytest.mark.parametrize(
    "bad", [[1, 2], ["-G", 2], b"-G", "-G"], ids=["ints", "mixed", "bytes", "str"]
)
def test_options_of_wrong_type(saxpy_program, bad):
    with pytest.raises(TypeError, match="options"):
        nvrtc.nvrtcCompileProgram(saxpy_program, len(bad), bad)


def test_headers_of_wrong_type(saxpy_src):
    with pytest.raises(TypeError, match="headers"):
        nvrtc.nvrtcCreateProgram(saxpy_src, "prog.cu", 1, [42], ["my.h"])


def test_ptx_buffer_of_wrong_type(saxpy_program):
    with pytest.raises(TypeError):
        nvrtc.nvrtcGetPTX(saxpy_program, "not a buffer")


def test_callback_of_wrong_type(saxpy_program):
    with pytest.raises(TypeError, match="callback"):
        nvrtc.nvrtcSetFlowCallback(saxpy_program, "not callable", None)


# -- counts that do not match the sequences ----------------------------------


def test_option_count_larger_than_the_list(make_program, saxpy_src):
    prog = make_program(saxpy_src)
    with pytest.raises(ValueError, match=r"options: 2 items, but numOptions is 3"):
        nvrtc.nvrtcCompileProgram(prog, 3, ["-arch=compute_80", "--fmad=false"])


@pytest.mark.parametrize("count", [0, 1], ids=["zero", "smaller"])
def test_option_count_smaller_uses_the_first_items(make_program, saxpy_src, count):
    # As in C: the compiler reads `count` options; a bad one after them is never seen.
    prog = make_program(saxpy_src)
    (err,) = nvrtc.nvrtcCompileProgram(prog, count, ["-arch=compute_80", "--no-such-option"])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS


def test_num_headers_larger_than_the_lists(saxpy_src):
    with pytest.raises(ValueError, match="headers|numHeaders"):
        nvrtc.nvrtcCreateProgram(saxpy_src, "prog.cu", 2, ["#define A 1\n"], ["a.h"])


def test_none_is_an_empty_list(saxpy_src):
    # nvrtcCreateProgram(src, name, 0, None, None), as NVIDIA's samples write it.
    err, prog = nvrtc.nvrtcCreateProgram(saxpy_src, b"prog.cu", 0, None, None)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert nvrtc.nvrtcDestroyProgram(prog) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)


def test_include_names_shorter_than_headers(saxpy_src):
    with pytest.raises(ValueError, match="includeNames|headers"):
        nvrtc.nvrtcCreateProgram(saxpy_src, "prog.cu", 2, ["a", "b"], ["a.h"])


# -- output buffers ----------------------------------------------------------


@pytest.mark.parametrize("buffer_type", [bytearray, bytes])
def test_ptx_buffer_one_byte_short(saxpy_program, buffer_type):
    err, size = nvrtc.nvrtcGetPTXSize(saxpy_program)
    assert err == R.NVRTC_SUCCESS
    buf = buffer_type(b"Z" * (size - 1))
    with pytest.raises(ValueError):
        nvrtc.nvrtcGetPTX(saxpy_program, buf)
    assert buf == b"Z" * (size - 1)


def test_log_buffer_empty(saxpy_program):
    err, size = nvrtc.nvrtcGetProgramLogSize(saxpy_program)
    assert err == R.NVRTC_SUCCESS and size >= 1
    with pytest.raises(ValueError):
        nvrtc.nvrtcGetProgramLog(saxpy_program, bytearray())


# -- integers out of range ---------------------------------------------------


@pytest.mark.parametrize("size", [-1, 2**64, -(2**70)])
def test_pch_heap_size_out_of_range(size, restore_pch_heap_size):
    with pytest.raises(OverflowError, match="size"):
        nvrtc.nvrtcSetPCHHeapSize(size)
    assert nvrtc.nvrtcGetPCHHeapSize() == (R.NVRTC_SUCCESS, restore_pch_heap_size)


@pytest.mark.parametrize("size", [float("nan"), float("inf"), "1", b"1", None])
def test_pch_heap_size_of_wrong_type(size):
    # A finite float converts toward zero (API.md); these are not integers.
    with pytest.raises(TypeError, match="size"):
        nvrtc.nvrtcSetPCHHeapSize(size)


def test_num_options_out_of_range(saxpy_program):
    with pytest.raises((OverflowError, ValueError), match="numOptions"):
        nvrtc.nvrtcCompileProgram(saxpy_program, 2**31, [])


def test_program_handle_out_of_range():
    with pytest.raises(OverflowError):
        nvrtc.nvrtcGetPTXSize(2**64)


# -- strings -----------------------------------------------------------------


@pytest.mark.parametrize(
    "src", ["__global__ void k() {}\0 garbage", b"__global__ void k() {}\0 x"]
)
def test_src_with_embedded_nul_is_rejected(src):
    # Silently truncating at the NUL would compile something else than asked.
    with pytest.raises((ValueError, TypeError), match="src"):
        nvrtc.nvrtcCreateProgram(src, "prog.cu", 0, None, None)


def test_option_with_embedded_nul_is_rejected(saxpy_program):
    with pytest.raises((ValueError, TypeError), match="options"):
        nvrtc.nvrtcCompileProgram(saxpy_program, 1, ["-arch=compute_80\0-G"])


def test_unknown_name_expression(saxpy_program):
    err, lowered = nvrtc.nvrtcGetLoweredName(saxpy_program, "no_such_kernel")
    assert err is R.NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
    assert lowered is None


def test_add_name_expression_after_compile(saxpy_program):
    assert nvrtc.nvrtcAddNameExpression(saxpy_program, "saxpy") == (
        R.NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
    )


# -- nvrtcGetErrorString -----------------------------------------------------


def test_error_string_of_unknown_value():
    assert nvrtc.nvrtcGetErrorString(9999) == (nvrtc.nvrtcResult.NVRTC_SUCCESS, b"NVRTC_ERROR unknown")


@pytest.mark.parametrize("value", [-1, 2**40])
def test_error_string_out_of_range(value):
    with pytest.raises(OverflowError):
        nvrtc.nvrtcGetErrorString(value)


def test_error_string_of_wrong_type():
    with pytest.raises(TypeError, match="result"):
        nvrtc.nvrtcGetErrorString("NVRTC_SUCCESS")
