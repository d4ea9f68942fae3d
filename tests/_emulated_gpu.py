"""An emulated GPU for cubind.Array: the driver functions the array calls
(memory, copies, memsets, streams, events) and its copy and fill kernels,
over host memory, checking that every device access lies in a live
allocation. Installed by the ``array_gpu`` / ``emulated_gpu`` fixtures of
tests/conftest.py.

The private modules it patches are imported here, at the top, and nowhere
else in the tests that use it."""

import ctypes
import gc
import warnings

import numpy as np

import cubind._arrays.kernels as kernels
import cubind._core.pending as _pending
import cubind._memory.memory as _memory
from tests._helpers import import_cubind_driver

cuda = import_cubind_driver()

NOT_READY, INVALID_VALUE = 600, 1


class EmulatedGPU:
    """The driver functions cubind.Array calls, over host memory."""

    real = False
    name = "emulated"

    def __init__(self):
        self.allocs = {}  # address -> numpy uint8 buffer
        self.calls = []  # (function name, args)
        self.events_done = True
        self.next_handle = 0x1000
        self.launches = []

    # memory

    def _alloc(self, nbytes):
        buf = np.full(nbytes, 0xCD, np.uint8)  # "uninitialised" memory that no test value equals
        self.allocs[buf.ctypes.data] = buf
        return buf.ctypes.data

    def check(self, addr, nbytes):
        """Asserts [addr, addr + nbytes) lies in one live allocation."""
        addr = int(addr)
        for base, buf in self.allocs.items():
            if base <= addr and addr + nbytes <= base + buf.size:
                return addr
        raise AssertionError(f"device access of {nbytes} bytes at {addr:#x} is outside every live allocation")

    @staticmethod
    def host_address(obj):
        if isinstance(obj, int):
            return obj
        return np.frombuffer(memoryview(obj).cast("B"), np.uint8).ctypes.data

    def cuMemAlloc(self, nbytes):
        return 0, self._alloc(nbytes)

    def cuMemAllocAsync(self, nbytes, stream):
        return 0, self._alloc(nbytes)

    def cuMemFree(self, ptr):
        if self.allocs.pop(int(ptr), None) is None:
            return (INVALID_VALUE,)
        return (0,)

    def cuMemFreeAsync(self, ptr, stream):
        return self.cuMemFree(ptr)

    def cuMemcpyHtoD(self, dst, src, n):
        ctypes.memmove(self.check(dst, n), self.host_address(src), n)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(self.host_address(dst), self.check(src, n), n)
        return (0,)

    def cuMemcpyDtoDAsync(self, dst, src, n, stream):
        ctypes.memmove(self.check(dst, n), self.check(src, n), n)
        return (0,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        return self.cuMemcpyHtoD(dst, src, n)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        return self.cuMemcpyDtoH(dst, src, n)

    def cuMemcpy2D(self, copy):
        host, device = int(cuda.CUmemorytype.CU_MEMORYTYPE_HOST), int(cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE)
        width, height = copy.WidthInBytes, copy.Height
        assert copy.srcPitch >= width and copy.dstPitch >= width, "pitch below width"
        for row in range(height):
            addrs = []
            for side in ("src", "dst"):
                kind = int(getattr(copy, f"{side}MemoryType"))
                pitch = getattr(copy, f"{side}Pitch")
                start = getattr(copy, f"{side}XInBytes") + (getattr(copy, f"{side}Y") + row) * pitch
                if kind == host:
                    addrs.append(int(getattr(copy, f"{side}Host")) + start)
                else:
                    assert kind == device
                    addrs.append(self.check(int(getattr(copy, f"{side}Device")) + start, width))
            ctypes.memmove(addrs[1], addrs[0], width)
        return (0,)

    def cuMemcpy2DAsync(self, copy, stream):
        return self.cuMemcpy2D(copy)

    def _memset(self, ptr, value, count, width):
        self.check(ptr, count * width)
        pattern = np.frombuffer(int(value).to_bytes(width, "little"), np.uint8)
        view = np.ctypeslib.as_array((ctypes.c_uint8 * (count * width)).from_address(int(ptr)))
        view[:] = np.tile(pattern, count)
        return (0,)

    def cuMemsetD8Async(self, ptr, value, count, stream):
        return self._memset(ptr, value, count, 1)

    def cuMemsetD16Async(self, ptr, value, count, stream):
        return self._memset(ptr, value, count, 2)

    def cuMemsetD32Async(self, ptr, value, count, stream):
        return self._memset(ptr, value, count, 4)

    def _memset_2d(self, ptr, pitch, value, width, height, size):
        for row in range(height):
            self._memset(int(ptr) + row * pitch, value, width, size)
        return (0,)

    def cuMemsetD2D8Async(self, ptr, pitch, value, width, height, stream):
        return self._memset_2d(ptr, pitch, value, width, height, 1)

    def cuMemsetD2D16Async(self, ptr, pitch, value, width, height, stream):
        return self._memset_2d(ptr, pitch, value, width, height, 2)

    def cuMemsetD2D32Async(self, ptr, pitch, value, width, height, stream):
        return self._memset_2d(ptr, pitch, value, width, height, 4)

    # context, streams, events

    def cuCtxGetCurrent(self):
        return 0, 0xC0

    def cuCtxGetDevice(self):
        return 0, 0

    def cuCtxPushCurrent(self, ctx):
        return (0,)

    def cuCtxPopCurrent(self):
        return 0, 0xC0

    def cuPointerGetAttribute(self, attribute, ptr):
        return 0, 0

    def cuStreamSynchronize(self, stream):
        return (0,)

    def cuEventCreate(self, flags):
        self.next_handle += 1
        return 0, self.next_handle

    def cuEventRecord(self, event, stream):
        return (0,)

    def cuEventQuery(self, event):
        return (0 if self.events_done else NOT_READY,)

    def cuEventSynchronize(self, event):
        return (0,)

    def cuEventDestroy(self, event):
        return (0,)

    def cuStreamWaitEvent(self, stream, event, flags):
        return (0,)

    def names(self):
        return [name for name, _ in self.calls]

    # kernels

    def kernel(self, key, source, name):
        gpu = self

        def launch(grid, block, *args, stream=0):
            gpu.launches.append((name, args, stream))
            if key[0] == "copy":
                gpu._copy_kernel(key[1], key[2], *args)
            else:
                gpu._fill_kernel(key[1], *args)

        return launch

    def _boxes(self, n, n1, n2, n3):
        for i in range(n):
            r = i
            i3, r = r % n3, r // n3
            i2, r = r % n2, r // n2
            yield r // n1, r % n1, i2, i3

    def _copy_kernel(self, src_dt, dst_dt, src, dst, n, n1, n2, n3, *strides):
        a, b = strides[:4], strides[4:]
        for idx in self._boxes(n, n1, n2, n3):
            s = self.check(src + sum(i * k for i, k in zip(idx, a)), src_dt.itemsize)
            d = self.check(dst + sum(i * k for i, k in zip(idx, b)), dst_dt.itemsize)
            value = np.frombuffer(ctypes.string_at(s, src_dt.itemsize), src_dt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = value.astype(dst_dt).tobytes()
            ctypes.memmove(d, out, dst_dt.itemsize)

    def _fill_kernel(self, itemsize, dst, n, n1, n2, n3, b0, b1, b2, b3, lo, hi):
        bits = (lo.to_bytes(8, "little") + hi.to_bytes(8, "little"))[:itemsize]
        for idx in self._boxes(n, n1, n2, n3):
            d = self.check(dst + sum(i * k for i, k in zip(idx, (b0, b1, b2, b3))), itemsize)
            ctypes.memmove(d, bits, itemsize)


DRIVER_FUNCTIONS = [name for name in vars(EmulatedGPU) if name.startswith("cu")]
# (function, status) of each emulated call answered with an error (not
# CUDA_ERROR_NOT_READY): tests/conftest.py reads and clears it after each test.
FAILED_CALLS = []


def install(monkeypatch):
    """Put an EmulatedGPU in place of the driver functions cubind.Array calls;
    yields it, and takes it away (with what a test left queued) after."""
    emulated = EmulatedGPU()
    for name in DRIVER_FUNCTIONS:
        method = getattr(emulated, name)

        def recorded(*args, _method=method, _name=name):
            emulated.calls.append((_name, args))
            result = _method(*args)
            if result[0] not in (0, NOT_READY):
                FAILED_CALLS.append((_name, int(result[0])))
            return result

        monkeypatch.setattr(cuda, name, recorded)
    monkeypatch.setattr(kernels, "_kernel", emulated.kernel)
    previous = _memory.use_python_driver(True)  # DeviceMemory calls the emulated functions too
    yield emulated
    _memory.use_python_driver(previous)
    _pending._pending.clear()  # what a test left queued goes with its emulator
    emulated.calls.clear()
    gc.collect()
