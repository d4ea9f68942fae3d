"""JIT options (cuLinkCreate & co.): the log buffers among the option values
are written by the driver after cuLinkCreate returns (during cuLinkAddData and
cuLinkComplete), so the binding keeps them with the link state until
cuLinkDestroy, and the caller's bytearray holds the log after cuLinkComplete."""
import textwrap

import pytest

import cuda

OPT = cuda.CUjit_option

LINK = textwrap.dedent("""
    import gc
    import sys
    import cuda
    from tests._helpers import ok

    OPT = cuda.CUjit_option
    ok(cuda.cuInit(0))
    LOG, SIZE = OPT.CU_JIT_INFO_LOG_BUFFER, OPT.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
    PTX = b"fake ptx\\0"

    # The caller's buffer: held by the link state from cuLinkCreate to
    # cuLinkDestroy, and holding the log the driver wrote in between.
    info = bytearray(1024)
    before = sys.getrefcount(info)
    state = ok(cuda.cuLinkCreate(2, [LOG, SIZE], [info, len(info)]))
    assert sys.getrefcount(info) > before, "the log buffer is not kept with the link state"
    ok(cuda.cuLinkAddData(state, cuda.CUjitInputType.CU_JIT_INPUT_PTX, PTX, len(PTX), b"k.ptx", 0, None, None))
    ok(cuda.cuLinkComplete(state))
    assert bytes(info).rstrip(b"\\0") == b"fake: added k.ptx\\nfake: linked \\n", bytes(info[:64])
    ok(cuda.cuLinkDestroy(state))
    assert sys.getrefcount(info) == before, "cuLinkDestroy left the log buffer kept"

    # A buffer nobody else holds (4 MiB: its memory is unmapped when freed)
    # is written by cuLinkAddData after cuLinkCreate returned: it must live.
    state = ok(cuda.cuLinkCreate(2, [LOG, SIZE], [bytearray(1 << 22), 1 << 22]))
    gc.collect()
    ok(cuda.cuLinkAddData(state, cuda.CUjitInputType.CU_JIT_INPUT_PTX, PTX, len(PTX), b"k.ptx", 0, None, None))
    ok(cuda.cuLinkComplete(state))
    ok(cuda.cuLinkDestroy(state))
    print("link ok")
""")


VALUES = textwrap.dedent("""
    import ctypes
    import struct
    import cuda
    from tests._helpers import ok

    OPT = cuda.CUjit_option
    fake = ctypes.CDLL({lib!r})
    slots = (ctypes.c_ulonglong * 64).in_dll(fake, "fake_jit_values")
    ok(cuda.cuInit(0))
    options = [OPT.CU_JIT_MAX_REGISTERS, OPT.CU_JIT_WALL_TIME, OPT.CU_JIT_TARGET, OPT.CU_JIT_CACHE_MODE,
               OPT.CU_JIT_TARGET_FROM_CUCONTEXT, OPT.CU_JIT_GENERATE_LINE_INFO]
    values = [32, 1.5, cuda.CUjit_target.CU_TARGET_COMPUTE_90, cuda.CUjit_cacheMode.CU_JIT_CACHE_OPTION_CG,
              "ignored", -1]
    ok(cuda.cuLinkDestroy(ok(cuda.cuLinkCreate(len(options), options, values))))
    assert slots[0] == 32, slots[0]
    assert struct.unpack("<f", struct.pack("<Q", slots[2])[:4])[0] == 1.5, hex(slots[2])
    assert slots[9] == 90 and slots[14] == int(cuda.CUjit_cacheMode.CU_JIT_CACHE_OPTION_CG), (slots[9], slots[14])
    assert slots[8] == 0 and slots[13] & 0xFFFFFFFF == 0xFFFFFFFF, (slots[8], slots[13])
    print("values ok")
""")


def test_each_value_is_converted_as_its_option_says(backend):
    if backend.real:
        pytest.skip("reads what the emulated driver received")
    done = backend.run(VALUES.format(lib=str(backend.library)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "values ok"


@pytest.mark.parametrize(("option", "value", "error"), [
    (OPT.CU_JIT_MAX_REGISTERS, "32", TypeError),
    (OPT.CU_JIT_MAX_REGISTERS, -1, OverflowError),
    (OPT.CU_JIT_INFO_LOG_BUFFER, b"read-only", TypeError),
    (OPT.CU_JIT_INFO_LOG_BUFFER, 1024, TypeError),
    (OPT.CU_JIT_TARGET, cuda.CUjit_fallback.CU_PREFER_PTX, TypeError),
    (OPT.CU_JIT_WALL_TIME, "fast", TypeError),
])
def test_a_value_of_the_wrong_type_names_its_option(option, value, error):
    with pytest.raises(error, match=rf"optionValues\[{option.name}\]"):
        cuda.cuLinkCreate(1, [option], [value])
    with pytest.raises(error, match=rf"jitOptionsValues\[{option.name}\]"):
        cuda.cuLibraryLoadData(b"ptx\0", [option], [value], 1, None, None, 0)


def test_log_buffers_live_with_the_link_state(backend):
    if backend.real:
        pytest.skip("the emulated linker writes a known log; test_a_ptx_link_fills_the_info_log is the GPU's")
    done = backend.run(LINK)
    assert done.returncode == 0, f"rc {done.returncode}\n" + done.stdout + done.stderr
    assert done.stdout.strip() == "link ok"


KERNEL_PTX = b"""
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ret;
}
\0"""


@pytest.mark.gpu
def test_a_ptx_link_fills_the_info_log(cu_context):
    from tests._helpers import ok

    info, error = bytearray(1 << 16), bytearray(1 << 16)
    options = [OPT.CU_JIT_INFO_LOG_BUFFER, OPT.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, OPT.CU_JIT_ERROR_LOG_BUFFER,
               OPT.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, OPT.CU_JIT_LOG_VERBOSE]
    state = ok(cuda.cuLinkCreate(len(options), options, [info, len(info), error, len(error), 1]))
    ok(cuda.cuLinkAddData(state, cuda.CUjitInputType.CU_JIT_INPUT_PTX, KERNEL_PTX, len(KERNEL_PTX), b"k.ptx", 0,
                          None, None))
    cubin, size = ok(cuda.cuLinkComplete(state))
    assert size > 0
    log = bytes(info).split(b"\0", 1)[0].decode()
    assert "k" in log and log.strip(), log   # ptxas's verbose report of the kernel
    assert bytes(error).split(b"\0", 1)[0] == b""
    ok(cuda.cuLinkDestroy(state))
