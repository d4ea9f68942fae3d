"""A buffer object given where a call reads or writes a known number of bytes
must hold them (issue 22): the byte count parameter the spec names
(`cuMemcpyHtoD(dst, srcHost, ByteCount)`, both sides of `cudaMemcpy`) or the
size query of the buffer (`nvJitLinkGetLinkedCubin`). Too small is a
ValueError naming the parameter, raised before the library is called; an int
address stays unchecked, as in C. A buffer the call writes into (issue 30:
one rule for nvrtc, nvJitLink, NVVM, the driver and the runtime) takes any
writable buffer; a read-only one is a TypeError naming the parameter, and in
either error nothing is written. No GPU needed: the checks come first, the
driver calls that pass them go to tests/fake_driver in a fresh interpreter,
and NVRTC, nvJitLink and NVVM run on the CPU."""

import functools
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests._toolkit import pythonpath
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

cuda = pytest.importorskip("cuda")
if not hasattr(cuda, "cuInit"):
    pytest.skip("cubind's cuda package is not built", allow_module_level=True)
from cuda import cudart  # noqa: E402

READ_SIZED = "params/in_voidptr_sized"
WRITTEN_SIZED = "params/into_buffer_sized"
WRITTEN_QUERIED = "params/into_buffer_queried"
SIZED = (READ_SIZED, WRITTEN_SIZED)
MODULES = {"driver": cuda, "runtime": cudart}
# Every library's spec that takes the caller's buffers, and the module its
# functions are bound in (NVML's strings come back as bytes: no caller buffer).
LIBRARIES = {"driver": "cuda", "runtime": "cuda.cudart", "nvrtc": "nvrtc", "nvjitlink": "nvjitlink", "nvvm": "nvvm",
             "nvfatbin": "nvfatbin"}


@functools.cache
def model(library):
    return json.loads(run_generator("--spec", str(ROOT / "bindings" / f"{library}.toml"), "--dump-model"))


def conversion(param):
    return param.get("conversion", {}).get("name")


def sized_functions(library):
    """(function, its parameters) for each function with a void* paired with a byte count."""
    found = []
    for f in model(library)["functions"]:
        if "skip_reason" in f:
            continue
        if any(conversion(p) in SIZED for p in f["params"]):
            found.append((f["name"], f["params"]))
    return found


def written_buffers(library):
    """(function, the buffer it writes, its parameters) for every buffer of the
    library's model the call writes into: the generator's rule, not a list."""
    found = []
    for f in model(library)["functions"]:
        if "skip_reason" in f:
            continue
        for p in f["params"]:
            if conversion(p) in (WRITTEN_SIZED, WRITTEN_QUERIED):
                found.append((f["name"], p, f["params"]))
    return found


def plain_value(param, module):
    """A harmless value for a parameter the rule does not look at: NULL, 0, empty."""
    conversion = param["conversion"]["name"]
    if conversion == "params/record_value":
        return getattr(module, param["conversion"]["record_class"])()
    if param["type"]["kind"] == "enum":   # a member whose value type is known
        return next(iter(getattr(module, param["type"]["name"])))
    if conversion == "params/in_float":
        return 0.0
    if conversion == "params/in_string":
        return b"x"
    return None if conversion in ("params/in_handle", "params/array", "params/in_string_array",
                                  "params/record_in", "params/in_callback", "params/in_userdata") else 0


def arguments(params, given, value, module, count=64, handles=None):
    """The Python arguments of a call passing `value` as the buffer `given`,
    `count` as every byte count, an int address as any other buffer, and
    `handles[type]` (else a harmless value) as the rest."""
    paired = {p["count_param"] for p in params if conversion(p) in SIZED}
    args = []
    for p in params:
        if p["conversion"].get("input") is False:
            continue
        if p["name"] == given:
            args.append(value)
        elif p["name"] in paired:
            args.append(count)
        elif conversion(p) in SIZED + (WRITTEN_QUERIED,):
            args.append(0)   # the other side: an int address, unchecked
        elif handles and p["type"].get("name") in handles:
            args.append(handles[p["type"]["name"]])
        else:
            args.append(plain_value(p, module))
    return args


@pytest.mark.parametrize("library", ["driver", "runtime"])
def test_every_paired_buffer_rejects_a_buffer_smaller_than_its_count(library):
    # The type-fuzz of the rule: every function the spec pairs, every side,
    # with a buffer one byte short and the other sides int addresses.
    module = MODULES[library]
    functions = sized_functions(library)
    assert functions, f"no void* of {library} is paired with a byte count"
    checked = 0
    for name, params in functions:
        for p in params:
            if conversion(p) not in SIZED:
                continue
            args = arguments(params, p["name"], bytearray(63), module)
            with pytest.raises(ValueError) as raised:
                getattr(module, name)(*args)
            message = str(raised.value)
            assert message.startswith(f"{p['name']}: buffer of 63 bytes"), (name, message)
            assert f"64 bytes of {p['count_param']}" in message, (name, message)
            checked += 1
    # CUDA 13.0: 11 driver sides (the cuMemcpy*H* forms, cuMemHostRegister,
    # cuParamSetv, cuLinkAddData), 46 runtime ones (both sides of each
    # cudaMemcpy form, cudaMemset, cudaMemAdvise...): the rule, not a list.
    assert checked >= (8 if library == "driver" else 20)


def test_the_report_lists_each_buffer_with_what_it_must_hold():
    report = run_generator("--spec", str(ROOT / "bindings" / "driver.toml"), "--report")
    assert "  buffer   cuMemcpyHtoD.srcHost: holds ByteCount bytes\n" in report
    assert "  buffer   cuMemcpyDtoHAsync.dstHost: holds ByteCount bytes, written by the call\n" in report
    assert "  buffer   cuLinkAddData.data: holds size bytes\n" in report
    # Not const, but only pinned: the spec's `direction = "in"`.
    assert "  buffer   cuMemHostRegister.p: holds bytesize bytes\n" in report
    # Its `size` sizes the device range, not the handle the call writes.
    assert "  buffer   cuMemGetHandleForAddressRange.handle: unchecked: no byte count or size query\n" in report
    report = run_generator("--spec", str(ROOT / "bindings" / "nvjitlink.toml"), "--report")
    assert ("  buffer   nvJitLinkGetLinkedCubin.cubin: holds what nvJitLinkGetLinkedCubinSize gives, "
            "written by the call\n") in report
    assert ("  buffer   nvJitLinkGetInfoLog.log: holds what nvJitLinkGetInfoLogSize gives, "
            "written by the call\n") in report
    report = run_generator("--spec", str(ROOT / "bindings" / "nvrtc.toml"), "--report")
    assert "  buffer   nvrtcGetPTX.ptx: holds what nvrtcGetPTXSize gives, written by the call\n" in report


@pytest.mark.parametrize("call, message", [
    (lambda: cuda.cuMemcpyHtoD(0, b"abc", 10), "srcHost: buffer of 3 bytes is smaller than the 10 bytes of ByteCount"),
    (lambda: cuda.cuMemcpyDtoH(bytearray(2), 0, 1 << 20),
     f"dstHost: buffer of 2 bytes is smaller than the {1 << 20} bytes of ByteCount"),
    (lambda: cuda.cuMemcpyHtoDAsync(0, memoryview(b"abcd"), 5, None), "srcHost: buffer of 4 bytes"),
    (lambda: cuda.cuMemcpyDtoHAsync(bytearray(8), 0, 9, None), "dstHost: buffer of 8 bytes"),
    (lambda: cuda.cuMemcpyHtoA(None, 0, b"ab", 3), "srcHost: buffer of 2 bytes"),
    (lambda: cuda.cuMemcpyAtoH(bytearray(1), None, 0, 2), "dstHost: buffer of 1 bytes"),
    (lambda: cuda.cuMemHostRegister(bytearray(4096), 8192, 0), "p: buffer of 4096 bytes"),
    (lambda: cuda.cuLinkAddData(None, 0, b"abc", 10, b"x", 0, None, None), "data: buffer of 3 bytes"),
], ids=["HtoD", "DtoH", "HtoDAsync", "DtoHAsync", "HtoA", "AtoH", "HostRegister", "LinkAddData"])
def test_driver_buffer_smaller_than_its_count(call, message):
    # No driver here: a ValueError (not the missing library) shows the check
    # runs before the library is opened or called.
    with pytest.raises(ValueError, match=message):
        call()


KIND = cudart.cudaMemcpyKind


@pytest.mark.parametrize("kind", [KIND.cudaMemcpyHostToDevice, KIND.cudaMemcpyDeviceToHost, KIND.cudaMemcpyDefault])
def test_runtime_either_side_holds_count_whatever_the_kind(kind):
    with pytest.raises(ValueError, match="dst: buffer of 4 bytes is smaller than the 8 bytes of count"):
        cudart.cudaMemcpy(bytearray(4), 0, 8, kind)
    with pytest.raises(ValueError, match="src: buffer of 3 bytes is smaller than the 8 bytes of count"):
        cudart.cudaMemcpy(0, b"abc", 8, kind)
    with pytest.raises(ValueError, match="src: buffer of 3 bytes"):
        cudart.cudaMemcpyAsync(0, b"abc", 8, kind, None)
    with pytest.raises(ValueError, match="src: buffer of 2 bytes"):
        cudart.cudaMemcpyToSymbol(0, b"ab", 4, 0, kind)
    with pytest.raises(ValueError, match="dst: buffer of 2 bytes"):
        cudart.cudaMemcpyFromSymbol(bytearray(2), 0, 4, 0, kind)


def test_size_is_counted_in_bytes_not_items():
    np = pytest.importorskip("numpy")
    floats = np.zeros(4, dtype=np.float32)   # 16 bytes, 4 items
    with pytest.raises(ValueError, match="srcHost: buffer of 16 bytes is smaller than the 17 bytes"):
        cuda.cuMemcpyHtoD(0, floats, 17)
    grid = np.zeros((2, 3), dtype=np.float64)   # 48 bytes
    with pytest.raises(ValueError, match="dstHost: buffer of 48 bytes is smaller than the 49 bytes"):
        cuda.cuMemcpyDtoH(grid, 0, 49)
    with pytest.raises(ValueError, match="dst: buffer of 8 bytes"):
        cudart.cudaMemcpy(memoryview(bytearray(8)).cast("d"), 0, 9, KIND.cudaMemcpyDeviceToHost)


def run_fake(fake_driver, body):
    code = "import json\nimport cuda\n" + textwrap.dedent(body)
    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_buffer_that_fits_and_an_int_address_reach_the_driver(fake_driver):
    # What reaches the emulated driver is what passed the check; it copies
    # for real. Copies need a current context, as on a GPU.
    results = run_fake(fake_driver, """
        import numpy as np
        cuda.cuInit(0)
        ctx = cuda.cuDevicePrimaryCtxRetain(cuda.cuDeviceGet(0)[1])[1]   # cuCtxCreate's signature is 13.0's only
        cuda.cuCtxSetCurrent(ctx)
        d = cuda.cuMemAlloc(16)[1]
        out, by_address = np.zeros(4, np.float32), np.zeros(16, np.uint8)
        print(json.dumps([
            int(cuda.cuMemcpyHtoD(d, b"abcdefgh", 8)[0]),
            int(cuda.cuMemcpyHtoD(d, b"ABCDEFGH", 3)[0]),       # more than the count is fine
            int(cuda.cuMemcpyDtoH(out, d, 16)[0]),
            int(cuda.cuMemcpyDtoH(by_address.ctypes.data, d, 16)[0]),  # an int address: the caller's word
            int(cuda.cuMemcpyHtoDAsync(0, None, 0, None)[0]),   # NULL with no bytes
            bytes(by_address[:8]).decode(),
        ]))
    """)
    assert results == [0, 0, 0, 0, 0, "ABCdefgh"]


nvjitlink = pytest.importorskip("nvjitlink")
nvrtc = pytest.importorskip("nvrtc")

KERNEL = b'extern "C" __global__ void k(float *x) { x[0] = 1; }'


def linked_handle():
    err, prog = nvrtc.nvrtcCreateProgram(KERNEL, b"k.cu", 0, None, None)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    options = [b"-arch=compute_90"]
    assert nvrtc.nvrtcCompileProgram(prog, 1, options) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = bytearray(size)
    assert nvrtc.nvrtcGetPTX(prog, ptx) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    nvrtc.nvrtcDestroyProgram(prog)
    link_options = [b"-arch=sm_90"]
    err, handle = nvjitlink.nvJitLinkCreate(1, link_options)
    assert err == nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS, err
    ok = (nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS,)
    assert nvjitlink.nvJitLinkAddData(handle, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX, bytes(ptx),
                                      len(ptx), b"k.ptx") == ok
    assert nvjitlink.nvJitLinkComplete(handle) == ok
    return handle


def test_linked_cubin_checks_the_buffer_against_its_size_query():
    # It segfaulted: `void *cubin` escaped the char* buffers' size rule.
    handle = linked_handle()
    try:
        err, size = nvjitlink.nvJitLinkGetLinkedCubinSize(handle)
        assert err == nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS and size > 1
        with pytest.raises(ValueError, match=f"cubin: buffer of 1 bytes is smaller than the {size} bytes of "
                                             "nvJitLinkGetLinkedCubinSize"):
            nvjitlink.nvJitLinkGetLinkedCubin(handle, bytearray(1))
        with pytest.raises(ValueError, match="cubin: buffer of 0 bytes"):
            nvjitlink.nvJitLinkGetLinkedCubin(handle, b"")
        cubin = bytearray(size)
        assert nvjitlink.nvJitLinkGetLinkedCubin(handle, cubin) == (nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS,)
        assert cubin[:4] == b"\x7fELF"
    finally:
        nvjitlink.nvJitLinkDestroy(handle)


def test_linked_cubin_reports_the_querys_failure_as_its_status():
    # A NULL handle: the size query fails, its status comes back as the call's,
    # as nvrtcGetPTX does with nvrtcGetPTXSize.
    (err,) = nvjitlink.nvJitLinkGetLinkedCubin(None, bytearray(1))
    assert err != nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS


def test_add_data_holds_its_size():
    err, handle = nvjitlink.nvJitLinkCreate(1, [b"-arch=sm_90"])
    assert err == nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS
    try:
        with pytest.raises(ValueError, match="data: buffer of 3 bytes is smaller than the 10 bytes of size"):
            nvjitlink.nvJitLinkAddData(handle, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX, b"abc", 10, b"x")
    finally:
        nvjitlink.nvJitLinkDestroy(handle)


# ---- buffers the call writes into: one rule for every library (issue 30) ----

np = pytest.importorskip("numpy")
SENTINEL = 0xAB


def read_only_buffers(size=64):
    """Read-only buffers of every kind a caller may hold: a numpy array
    (flags.writeable False) and a memoryview of bytes."""
    array = np.full(size, SENTINEL, np.uint8)
    array.flags.writeable = False
    return [array, memoryview(bytes([SENTINEL]) * size)]


def unchanged(buffer):
    return bytes(buffer) == bytes([SENTINEL]) * len(bytes(buffer))


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_every_written_buffer_refuses_a_read_only_buffer(library):
    # The type-fuzz of the rule: every buffer the model says the call writes,
    # in every module, given read-only buffers that are large enough. The
    # TypeError comes before the size query and the call: no handle needed,
    # nothing written.
    module = importlib.import_module(LIBRARIES[library])
    found = written_buffers(library)
    assert found, f"no buffer of {library} is written by its call"
    for name, p, params in found:
        py_name = p.get("py_name", p["name"])
        for buffer in read_only_buffers():
            with pytest.raises(TypeError) as raised:
                getattr(module, name)(*arguments(params, p["name"], buffer, module))
            message = str(raised.value)
            assert message.startswith(f"{py_name}: ") and "read-only" in message, (name, message)
            assert unchanged(buffer), name


@pytest.mark.parametrize("library", ["driver", "runtime"])
def test_every_counted_written_buffer_refuses_a_smaller_one_unwritten(library):
    module = importlib.import_module(LIBRARIES[library])
    checked = 0
    for name, p, params in written_buffers(library):
        if conversion(p) != WRITTEN_SIZED:
            continue
        small = bytearray([SENTINEL]) * 63
        with pytest.raises(ValueError) as raised:
            getattr(module, name)(*arguments(params, p["name"], small, module))
        assert str(raised.value) == (f"{p.get('py_name', p['name'])}: buffer of 63 bytes is smaller than the 64 "
                                     f"bytes of {p['count_param']}"), name
        assert unchanged(small), name
        checked += 1
    # CUDA 13.0: the four cuMemcpy*H* destinations of the driver; each
    # cudaMemcpy form's dst, cudaMemset... of the runtime.
    assert checked >= (4 if library == "driver" else 10)


KERNEL_SOURCE = b'extern "C" __global__ void k(float *x) { x[0] = 1; }'


def compiled_programs():
    """nvrtc programs compiled to each output NVRTC has a getter for."""
    programs = []
    for options in ([b"-arch=compute_90"], [b"-arch=sm_90"], [b"-arch=sm_90", b"-dlto"]):
        err, prog = nvrtc.nvrtcCreateProgram(KERNEL_SOURCE, b"k.cu", 0, None, None)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        assert nvrtc.nvrtcCompileProgram(prog, len(options), options) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
        programs.append(prog)
    return programs


def nvvm_program():
    nvvm = pytest.importorskip("nvvm", reason="cubind's nvvm package is not built")
    from tests.bindings.test_nvvm import TWICE_IR
    err, prog = nvvm.nvvmCreateProgram()
    assert err == nvvm.nvvmResult.NVVM_SUCCESS
    assert nvvm.nvvmAddModuleToProgram(prog, TWICE_IR, len(TWICE_IR), b"twice.ll") == (nvvm.nvvmResult.NVVM_SUCCESS,)
    options = [b"-arch=compute_90"]
    assert nvvm.nvvmCompileProgram(prog, 1, options) == (nvvm.nvvmResult.NVVM_SUCCESS,)
    return prog


def logged_link_handle():
    """A verbose link handle given input it refuses: both its logs hold text
    (an empty log's size is 0: nothing to be short of)."""
    err, handle = nvjitlink.nvJitLinkCreate(2, [b"-arch=sm_90", b"-verbose"])
    assert err == nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS
    (err,) = nvjitlink.nvJitLinkAddData(handle, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX, b"garbage", 7,
                                        b"bad.ptx")
    assert err != nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS
    nvjitlink.nvJitLinkComplete(handle)
    return handle


@pytest.fixture(scope="module")
def ready_handles():
    """Handles whose outputs exist, by handle type: the size queries of the
    written buffers then give sizes to be short of."""
    handles = {"nvrtcProgram": compiled_programs(), "nvJitLinkHandle": [linked_handle(), logged_link_handle()],
               "nvvmProgram": [nvvm_program()]}
    yield handles
    for prog in handles["nvrtcProgram"]:
        nvrtc.nvrtcDestroyProgram(prog)
    for handle in handles["nvJitLinkHandle"]:
        nvjitlink.nvJitLinkDestroy(handle)
    importlib.import_module("nvvm").nvvmDestroyProgram(handles["nvvmProgram"][0])


@pytest.mark.parametrize("library", ["nvrtc", "nvjitlink", "nvvm"])
def test_every_queried_written_buffer_refuses_a_smaller_one_unwritten(library, ready_handles):
    # Every buffer sized by a query, given one byte less than the query says,
    # for the first ready handle whose output exists (a PTX-only program has
    # no CUBIN): a ValueError naming the parameter and both sizes.
    module = importlib.import_module(LIBRARIES[library])
    checked = []
    for name, p, params in written_buffers(library):
        if conversion(p) != WRITTEN_QUERIED:
            continue
        handle_params = [q for q in params if q["type"].get("name") in ready_handles]
        assert len(handle_params) == 1, name
        kind = handle_params[0]["type"]["name"]
        for handle in ready_handles[kind]:
            err, size = getattr(module, p["query_function"])(handle)
            if err != 0 or size < 1:
                continue
            small = bytearray([SENTINEL]) * (size - 1)
            with pytest.raises(ValueError) as raised:
                getattr(module, name)(*arguments(params, p["name"], small, module, handles={kind: handle}))
            assert str(raised.value) == (f"{p.get('py_name', p['name'])}: buffer of {size - 1} bytes is smaller "
                                         f"than the {size} bytes of {p['query_function']}"), name
            assert unchanged(small), name
            checked.append(name)
            break
    # The logs (their NUL counted) and the main outputs of each library at least.
    expected = {"nvrtc": {"nvrtcGetPTX", "nvrtcGetCUBIN", "nvrtcGetLTOIR", "nvrtcGetProgramLog"},
                "nvjitlink": {"nvJitLinkGetLinkedCubin", "nvJitLinkGetInfoLog", "nvJitLinkGetErrorLog"},
                "nvvm": {"nvvmGetCompiledResult", "nvvmGetProgramLog"}}[library]
    assert expected <= set(checked), checked


def ptx_of(prog, buffer):
    assert nvrtc.nvrtcGetPTX(prog, buffer) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    return bytes(buffer)


def writable_forms(size):
    """The writable buffers a caller may pass, each `size` bytes, and the
    bytes form of the classic convention."""
    return {"bytearray": bytearray(size), "numpy": np.zeros(size, np.uint8),
            "memoryview": memoryview(bytearray(size)), "bytes": b" " * size}


def test_nvrtc_get_ptx_fills_any_writable_buffer_and_bytes(ready_handles):
    prog = ready_handles["nvrtcProgram"][0]
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS and size > 1
    filled = {kind: ptx_of(prog, buffer) for kind, buffer in writable_forms(size).items()}
    assert b".entry k" in filled["bytearray"]
    assert all(ptx == filled["bytearray"] for ptx in filled.values()), filled


def test_nvjitlink_info_log_fills_any_writable_buffer_and_bytes(ready_handles):
    handle = ready_handles["nvJitLinkHandle"][1]
    err, size = nvjitlink.nvJitLinkGetInfoLogSize(handle)
    assert err == nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS and size > 1
    logs = {}
    for kind, buffer in writable_forms(size).items():
        assert nvjitlink.nvJitLinkGetInfoLog(handle, buffer) == (nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS,), kind
        logs[kind] = bytes(buffer).split(b"\0", 1)[0]
    assert logs["bytearray"] and len(set(logs.values())) == 1, logs


def test_a_bytearray_cannot_be_resized_while_the_call_writes_into_it(ready_handles):
    # Another thread resizing the caller's bytearray while the library writes
    # into it (the GIL released) would free that memory under the library.
    # The export held for the call makes the resize a BufferError instead; a
    # thread waiting for the GIL gets it as soon as the call releases it, so
    # it sees the export nearly every time. Without the export: no refusal.
    prog = ready_handles["nvrtcProgram"][0]
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    buffer = bytearray(size)
    stop = threading.Event()
    refused = []

    def resize():
        while not stop.is_set():
            try:
                buffer.extend(b"x")
                del buffer[size:]
            except BufferError:
                refused.append(True)

    resizer = threading.Thread(target=resize)
    resizer.start()
    try:
        deadline = time.monotonic() + 5
        while not refused and time.monotonic() < deadline:
            for _ in range(50):
                assert nvrtc.nvrtcGetPTX(prog, buffer) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    finally:
        stop.set()
        resizer.join()
    assert refused
    assert b".entry k" in buffer


def test_a_shared_bytes_object_is_never_written(ready_handles):
    # CPython's one-byte bytes are shared by every use of their value: the
    # lone NUL of an empty log goes to a scratch byte, and bytes of data
    # (cuMemcpyDtoH's one byte) are refused rather than written or lost.
    prog = ready_handles["nvrtcProgram"][0]
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS and size == 1   # no warnings: only the NUL
    assert nvrtc.nvrtcGetProgramLog(prog, b" " * size) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    assert b" "[0] == 32   # the shared object's own byte, not a copy
    with pytest.raises(ValueError, match="dstHost: a 1-byte bytes object is shared"):
        cuda.cuMemcpyDtoH(b"x", 0, 1)
    assert b"x"[0] == 120


@pytest.mark.parametrize("call", [
    lambda buffer: nvrtc.nvrtcGetPTX(None, buffer),
    lambda buffer: nvjitlink.nvJitLinkGetInfoLog(None, buffer),
    lambda buffer: cuda.cuMemcpyDtoH(buffer, 0, 4),
], ids=["nvrtc", "nvjitlink", "driver"])
def test_a_buffer_that_is_not_contiguous_bytes_is_a_type_error(call):
    strided = np.zeros((4, 8), np.uint8)[:, ::2]
    with pytest.raises(TypeError, match=r"^(ptx|log|dstHost): expected a writable buffer .* of contiguous bytes, "
                                        r"got ndarray"):
        call(strided)
    with pytest.raises(TypeError, match=r"^(ptx|log|dstHost): expected a writable buffer .*, got str"):
        call("abc")


def test_a_read_only_source_stays_accepted():
    # Only what the call writes must be writable: cuMemcpyHtoD's const source
    # and cuMemHostRegister's pinned p (spec `direction = "in"`) take bytes
    # and read-only arrays; the size check still applies.
    source = read_only_buffers(8)[0]
    with pytest.raises(ValueError, match="srcHost: buffer of 8 bytes is smaller than the 9 bytes"):
        cuda.cuMemcpyHtoD(0, source, 9)
    with pytest.raises(ValueError, match="p: buffer of 8 bytes is smaller than the 9 bytes"):
        cuda.cuMemHostRegister(source, 9, 0)


# ---- a buffer is one block of bytes: a strided view is refused (C reads it from .buf on) ----

NOT_CONTIGUOUS = r"the buffer is not contiguous \(a strided view\); pass a contiguous copy \(numpy.ascontiguousarray\)"


def strided_views():
    """Views whose bytes are not one block: reversed, every other byte, a
    column of a 2-D array, a strided memoryview of a bytearray."""
    data = np.arange(64, dtype=np.uint8)
    return [data[::-1], data[::2], data.reshape(8, 8)[:, 0], memoryview(bytearray(64))[::2]]


@pytest.mark.parametrize("strided", strided_views(), ids=["reversed", "step", "column", "memoryview"])
@pytest.mark.parametrize("name, call", [
    ("srcHost", lambda v: cuda.cuMemcpyHtoD(0, v, 1)),                    # void* with its byte count
    ("image", lambda v: cuda.cuModuleLoadData(v)),                         # void* alone
    ("src", lambda v: cudart.cudaMemcpy(0, v, 1, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)),
    ("p", lambda v: cuda.cuMemHostRegister(v, 1, 0)),                      # non-const, read (`direction = "in"`)
    ("data", lambda v: nvjitlink.nvJitLinkAddData(None, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX,
                                                  v, 1, b"x")),
    ("srcHost", lambda v: setattr(cuda.CUDA_MEMCPY2D(), "srcHost", v)),   # a struct's address field
    ("optionValues[CU_JIT_INFO_LOG_BUFFER]",                              # an option table's buffer
     lambda v: cuda.cuLinkCreate(1, [cuda.CUjit_option.CU_JIT_INFO_LOG_BUFFER], [v])),
], ids=["driver-sized", "driver", "runtime", "register", "nvjitlink", "field", "option"])
def test_a_strided_buffer_is_refused_naming_the_parameter(name, call, strided):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}: {NOT_CONTIGUOUS}$"):
        call(strided)


def test_a_strided_raw_attribute_value_is_refused_naming_it():
    # A value given as its raw bytes (a buffer without __index__; a numpy
    # array has one, and is converted as an int) is copied from one block too.
    attribute = cuda.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    with pytest.raises(ValueError, match=rf"^value: {NOT_CONTIGUOUS}$"):
        cuda.cuMemPoolSetAttribute(0, attribute, memoryview(bytearray(16))[::2])


def test_nvvm_refuses_reversed_bitcode_before_the_call_and_takes_its_copy():
    nvvm = pytest.importorskip("nvvm", reason="cubind's nvvm package is not built")
    from tests.bindings.test_nvvm import TWICE_IR
    reversed_ir = np.frombuffer(TWICE_IR[::-1], np.uint8)[::-1]   # TWICE_IR's bytes, in a strided view
    assert reversed_ir.tobytes() == TWICE_IR
    err, prog = nvvm.nvvmCreateProgram()
    assert err == nvvm.nvvmResult.NVVM_SUCCESS
    try:
        with pytest.raises(ValueError, match=rf"^buffer: {NOT_CONTIGUOUS}$"):
            nvvm.nvvmAddModuleToProgram(prog, reversed_ir, len(TWICE_IR), b"twice.ll")
        # Nothing reached NVVM: the contiguous copy is the program's only module.
        copy = np.ascontiguousarray(reversed_ir)
        assert nvvm.nvvmAddModuleToProgram(prog, copy, len(TWICE_IR), b"twice.ll") == (nvvm.nvvmResult.NVVM_SUCCESS,)
        assert nvvm.nvvmCompileProgram(prog, 1, [b"-arch=compute_90"]) == (nvvm.nvvmResult.NVVM_SUCCESS,)
    finally:
        nvvm.nvvmDestroyProgram(prog)


def test_contiguous_buffers_in_either_order_and_empty_ones_reach_the_driver(fake_driver):
    # C-ordered, Fortran-ordered (one block all the same) and zero-length
    # buffers, however strided, pass on both sides of a copy; the reversed
    # source is refused in the child too, before the driver.
    results = run_fake(fake_driver, """
        import numpy as np
        cuda.cuInit(0)
        ctx = cuda.cuDevicePrimaryCtxRetain(cuda.cuDeviceGet(0)[1])[1]
        cuda.cuCtxSetCurrent(ctx)
        fortran = np.asfortranarray(np.arange(16, dtype=np.uint8).reshape(4, 4))
        assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
        empty = np.zeros(4, np.uint8)[::-1][:0]
        try:
            cuda.cuMemcpyHtoD(0, np.arange(16, dtype=np.uint8)[::-1], 16)
            refused = None
        except ValueError as e:
            refused = str(e)
        d = cuda.cuMemAlloc(16)[1]
        print(json.dumps([
            int(cuda.cuMemcpyHtoD(d, fortran, 16)[0]),
            int(cuda.cuMemcpyHtoD(d, fortran.T, 16)[0]),          # its transpose: C-ordered
            int(cuda.cuMemcpyDtoH(fortran, d, 16)[0]),             # written: any contiguous order too
            int(cuda.cuMemcpyHtoD(d, empty, 0)[0]),
            int(cuda.cuMemcpyDtoH(bytearray(), d, 0)[0]),
            refused,
        ]))
    """)
    assert results[:5] == [0, 0, 0, 0, 0]
    assert results[5].startswith("srcHost: the buffer is not contiguous")


def test_a_strided_written_buffer_is_refused_unwritten():
    # The written side's exporter refuses a strided view itself (the request
    # asks for one block): the same TypeError as any unusable buffer, naming
    # the parameter, and the view's bytes are left as they were.
    target = np.full(64, SENTINEL, np.uint8)
    with pytest.raises(TypeError, match=r"^dstHost: expected a writable buffer .* of contiguous bytes, got ndarray"):
        cuda.cuMemcpyDtoH(target[::-1], 0, 4)
    assert (target == SENTINEL).all()
