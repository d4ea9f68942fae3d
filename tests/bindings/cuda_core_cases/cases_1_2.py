"""cuda.core 1.2 cases for tests/bindings/test_cuda_core_1_2.py, through its public
API only (``cuda.core``; 1.x has no ``experimental``). Each ``case_*``
function runs in a fresh interpreter (``python -m
tests.bindings.cuda_core_cases.cases_1_2 NAME``) with CUBIND_CUDA_BINDINGS=1 and
cuda-core 1.2 first on the path, and returns a dict of plain values that must
come out the same on NVIDIA's bindings (nothing that names a handle or an
address).

cuda.core 1.x reaches the driver, NVRTC and nvJitLink through NVIDIA's C-level
modules (``cuda.bindings.cydriver``, ``cynvrtc``, ``cynvjitlink``), which cubind
serves: these cases are what runs through them. Without a GPU they run on
tests/fake_driver (FAKE_COMPUTE_CAPABILITY makes it answer a device's
attributes), with the real NVRTC and nvJitLink underneath; what a kernel or a
copy would have done there is checked as what the driver was asked (the
launches and copies the stand-in records). On a GPU the values themselves are
checked against numpy."""

import ctypes
import json
import os
import sys

import numpy as np

SAXPY = r"""
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""

# The stand-in driver, where the case runs on it (CUBIND_CUDA_LIBRARY): its
# record of launches and copies is read through ctypes.
_FAKE = os.environ.get("CUBIND_CUDA_LIBRARY")


def _fake():
    return ctypes.CDLL(_FAKE) if _FAKE else None


def _int(name):
    return ctypes.c_int.in_dll(_fake(), name).value


def _ull_array(name, count):
    return list((ctypes.c_ulonglong * count).in_dll(_fake(), name))


def _device():
    from cuda.core import Device

    dev = Device(0)
    dev.set_current()
    return dev


def _options(dev, **kw):
    from cuda.core import ProgramOptions

    return ProgramOptions(arch=f"sm_{dev.arch}", **kw)


def _host_view(buf, dtype, count):
    """A numpy array over a pinned (host-accessible) Buffer's memory."""
    assert buf.is_host_accessible
    dtype = np.dtype(dtype)
    raw = (ctypes.c_char * (dtype.itemsize * count)).from_address(int(buf.handle))
    return np.frombuffer(raw, dtype=dtype, count=count)


def _pinned(array):
    from cuda.core import LegacyPinnedMemoryResource

    buf = LegacyPinnedMemoryResource().allocate(array.nbytes)
    _host_view(buf, array.dtype, array.size)[:] = array.ravel()
    return buf


# --------------------------------------------------------------------------


def case_device():
    # Device() with no context current asks cuCtxGetDevice, which fails
    # (CUDA_ERROR_INVALID_CONTEXT), and takes device 0: cuda.core's own call.
    from cuda.core import Device

    dev = Device()
    dev.set_current()
    props = dev.properties
    cc = dev.compute_capability
    return {"device_id": dev.device_id, "same": Device() is dev or Device().device_id == dev.device_id,
            "arch": dev.arch == f"{cc.major}{cc.minor}", "name": isinstance(dev.name, str) and bool(dev.name),
            "sms": props.multiprocessor_count > 0, "threads": props.max_threads_per_block >= 1024,
            "warp": props.warp_size, "cc": cc.major >= 7}


def case_stream_event():
    from cuda.core import EventOptions

    dev = _device()
    stream = dev.create_stream()
    other = dev.create_stream()
    event = stream.record(options=EventOptions(timing_enabled=True))
    other.wait(event)
    later = other.record(options=EventOptions(timing_enabled=True))
    later.sync()
    stream.sync()
    handles = [int(stream.handle), int(other.handle), int(event.handle), int(later.handle)]
    value = {"done": event.is_done and later.is_done, "device": stream.device.device_id,
             "timing": event.is_timing_enabled, "distinct": len(set(handles)) == 4}
    if not _FAKE:
        assert later - event >= 0.0  # elapsed milliseconds, from cuEventElapsedTime (before the close)
    for obj in (event, later, stream, other):
        obj.close()
    if _FAKE:
        # What the driver was asked: each stream and event made, then released.
        calls = [line.split() for line in open(os.environ["FAKE_CALL_LOG"])]
        made = {int(h, 16) for name, h in calls if name in ("cuStreamCreate", "cuEventCreate")}
        released = {int(h, 16) for name, h in calls if name in ("cuStreamDestroy", "cuEventDestroy")}
        assert set(handles) <= made and set(handles) <= released, (handles, calls)
    return value


def case_compile_ptx():
    from cuda.core import Program

    dev = _device()
    obj = Program(SAXPY, "c++", _options(dev)).compile("ptx")
    text = obj.code.decode() if isinstance(obj.code, bytes) else obj.code
    assert ".visible .entry saxpy(" in text, text[:400]
    return {"ptx": True, "target": f".target sm_{dev.arch}" in text, "format": obj.code_type}


def case_compile_cubin():
    from cuda.core import Program

    dev = _device()
    obj = Program(SAXPY, "c++", _options(dev)).compile("cubin")
    assert obj.code[:4] == b"\x7fELF", obj.code[:16]
    return {"elf": True, "format": obj.code_type}


def case_link_lto():
    # NVRTC with -dlto (link_time_optimization) to LTO-IR, nvJitLink's LTO to a cubin.
    from cuda.core import Linker, LinkerOptions, Program

    dev = _device()
    ltoir = Program(SAXPY, "c++", _options(dev, link_time_optimization=True)).compile("ltoir")
    assert isinstance(ltoir.code, bytes) and len(ltoir.code) > 100
    linker = Linker(ltoir, options=LinkerOptions(arch=f"sm_{dev.arch}", link_time_optimization=True))
    cubin = linker.link("cubin")
    assert cubin.code[:4] == b"\x7fELF", cubin.code[:16]
    kernel = cubin.get_kernel("saxpy")
    linker.close()
    return {"ltoir": ltoir.code_type, "linked": cubin.code_type, "backend": Linker.which_backend(),
            "kernel": kernel is not None}


def case_buffer_copy():
    dev = _device()
    stream = dev.create_stream()
    n = 256
    data = np.arange(n, dtype=np.int32)
    host_in, host_out = _pinned(data), _pinned(np.zeros(n, np.int32))
    a, b = dev.allocate(data.nbytes, stream=stream), dev.allocate(data.nbytes, stream=stream)
    before = _int("fake_copy_count") if _FAKE else 0
    a.copy_from(host_in, stream=stream)
    a.copy_to(b, stream=stream)
    b.copy_to(host_out, stream=stream)
    stream.sync()
    if _FAKE:
        # The stand-in copies nothing: it was asked for three copies, the last b -> host_out.
        assert _int("fake_copy_count") - before == 3
        assert _ull_array("fake_last_copy", 3) == [int(host_out.handle), int(b.handle), data.nbytes]
    else:
        np.testing.assert_array_equal(_host_view(host_out, np.int32, n), data)
    value = {"size": a.size, "device_accessible": a.is_device_accessible, "host_accessible": host_in.is_host_accessible,
             "device": a.device_id}
    for buf in (a, b, host_in, host_out):   # pinned ones too: the sanitizer counts what is left at exit
        buf.close(stream)
    stream.sync()
    return value


def case_launch():
    from cuda.core import LaunchConfig, Program, launch

    dev = _device()
    kernel = Program(SAXPY, "c++", _options(dev)).compile("cubin").get_kernel("saxpy")
    stream = dev.create_stream()
    n, a = 1000, 2.5
    rng = np.random.default_rng(7)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    hx, hy, hout = _pinned(x), _pinned(y), _pinned(np.zeros(n, np.float32))
    dx, dy, dout = (dev.allocate(n * 4, stream=stream) for _ in range(3))
    dx.copy_from(hx, stream=stream)
    dy.copy_from(hy, stream=stream)
    config = LaunchConfig(grid=(n + 127) // 128, block=128)
    if _FAKE:
        ctypes.c_int.in_dll(_fake(), "fake_record_args").value = 5
        before = _int("fake_launch_count")
    launch(stream, config, kernel, np.float32(a), dx, dy, dout, np.uint64(n))
    dout.copy_to(hout, stream=stream)
    stream.sync()
    if _FAKE:
        # What the driver was asked: one launch, on this stream, of 8 blocks of
        # 128, with the five arguments packed as the kernel takes them.
        assert _int("fake_launch_count") - before == 1
        assert ctypes.c_ulonglong.in_dll(_fake(), "fake_last_stream").value == int(stream.handle)
        assert list((ctypes.c_uint * 6).in_dll(_fake(), "fake_last_dims")) == [8, 1, 1, 128, 1, 1]
        args = _ull_array("fake_args", 5)
        scalar = np.array([args[0] & 0xFFFFFFFF], np.uint32).view(np.float32)[0]
        assert scalar == np.float32(a) and args[1:] == [int(dx.handle), int(dy.handle), int(dout.handle), n], args
    else:
        np.testing.assert_allclose(_host_view(hout, np.float32, n), a * x + y, rtol=1e-6)
    for buf in (dx, dy, dout, hx, hy, hout):   # pinned ones too: the sanitizer counts what is left at exit
        buf.close(stream)
    stream.sync()
    return {"ok": True, "grid": list(config.grid), "block": list(config.block)}


MARKER = "CUDA_CORE_CASE "
SERVED = "CUDA_CORE_SERVED "

if __name__ == "__main__":
    value = globals()["case_" + sys.argv[1]]()
    print(MARKER + json.dumps(value, sort_keys=True), flush=True)
    # Which bindings served it: the file behind cuda.bindings.cydriver (cubind's
    # cuda/_cydriver, or NVIDIA's cuda/bindings/cydriver) and cuda.core's version.
    import cuda.core

    cydriver = sys.modules.get("cuda.bindings.cydriver")
    print(SERVED + json.dumps([cuda.core.__version__, getattr(cydriver, "__file__", None)]), flush=True)
