"""A buffer object given where a call reads or writes a known number of bytes
must hold them (issue 22): the byte count parameter the spec names
(`cuMemcpyHtoD(dst, srcHost, ByteCount)`, both sides of `cudaMemcpy`) or the
size query of the buffer (`nvJitLinkGetLinkedCubin`). Too small is a
ValueError naming the parameter, raised before the library is called; an int
address stays unchecked, as in C. No GPU needed: the check comes first, and
the calls that pass it go to tests/fake_driver in a fresh interpreter."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests._toolkit import pythonpath
from tests.test_generator_cuda_h import ROOT, run_generator

cuda = pytest.importorskip("cuda")
if not hasattr(cuda, "cuInit"):
    pytest.skip("cubind's cuda package is not built", allow_module_level=True)
from cuda import cudart  # noqa: E402

SIZED = "params/in_voidptr_sized"
QUERIED = "params/in_voidptr_queried"
MODULES = {"driver": cuda, "runtime": cudart}


def sized_functions(library):
    """(function, its parameters) for each function with a void* paired with a byte count."""
    model = json.loads(run_generator("--spec", str(ROOT / "bindings" / f"{library}.toml"), "--dump-model"))
    found = []
    for f in model["functions"]:
        if "skip_reason" in f:
            continue
        if any(p.get("conversion", {}).get("name") == SIZED for p in f["params"]):
            found.append((f["name"], f["params"]))
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


def arguments(params, small, module, count=64):
    """The Python arguments of a call whose buffer `small` holds one byte less than its count."""
    paired = {p["count_param"] for p in params if p.get("conversion", {}).get("name") == SIZED}
    args = []
    for p in params:
        conversion = p["conversion"]
        if conversion.get("input") is False:
            continue
        if p["name"] == small:
            args.append(bytearray(count - 1))
        elif p["name"] in paired:
            args.append(count)
        elif conversion["name"] == SIZED:
            args.append(0)   # the other side: an int address, unchecked
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
            if p.get("conversion", {}).get("name") != SIZED:
                continue
            args = arguments(params, p["name"], module)
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


def test_the_report_lists_each_void_pointer_with_what_it_must_hold():
    report = run_generator("--spec", str(ROOT / "bindings" / "driver.toml"), "--report")
    assert "  buffer   cuMemcpyHtoD.srcHost: holds ByteCount bytes\n" in report
    assert "  buffer   cuMemcpyDtoHAsync.dstHost: holds ByteCount bytes\n" in report
    assert "  buffer   cuLinkAddData.data: holds size bytes\n" in report
    # Its `size` sizes the device range, not the handle the call writes.
    assert "  buffer   cuMemGetHandleForAddressRange.handle: unchecked: no byte count or size query\n" in report
    report = run_generator("--spec", str(ROOT / "bindings" / "nvjitlink.toml"), "--report")
    assert "  buffer   nvJitLinkGetLinkedCubin.cubin: holds what nvJitLinkGetLinkedCubinSize gives\n" in report


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
    # The fake succeeds at everything without touching memory: what reaches
    # it is what passed the check.
    results = run_fake(fake_driver, """
        import numpy as np
        print(json.dumps([
            int(cuda.cuMemcpyHtoD(0, b"abcdefgh", 8)[0]),
            int(cuda.cuMemcpyHtoD(0, b"abcdefgh", 3)[0]),       # more than the count is fine
            int(cuda.cuMemcpyDtoH(np.zeros(4, np.float32), 0, 16)[0]),
            int(cuda.cuMemcpyDtoH(0x1000, 0, 1 << 30)[0]),      # an int address: the caller's word
            int(cuda.cuMemcpyHtoDAsync(0, None, 0, None)[0]),   # NULL with no bytes
        ]))
    """)
    assert results == [0, 0, 0, 0, 0]


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
