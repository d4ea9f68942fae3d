"""The suite's one emulated driver in Python: the driver functions the
Pythonic layer calls (memory, copies, memsets, contexts, streams, events) and
cubind.Array's copy and fill kernels, over host memory. Besides it there is
only the C stand-in, tests/fake_driver (a real libcuda the bindings load).

It checks what a real driver would crash on or refuse: every device access
must lie in a live allocation (an AssertionError otherwise), and an event
used after its destruction, an event destroyed twice or memory freed twice is
answered with an error and written to ``violations``. It is safe to call from
any thread. Its options make the one class serve every user:

- ``event_queries``: how many times cuEventQuery answers NOT_READY for a new
  event before it is done: a number, or "random" (0 to 3, each event its own)
  so that pending work piles up and many threads sweep it;
- ``latency``: seconds to sleep before each use or destruction of an event,
  0 for just giving up the GIL (as the binding does around every C call),
  which widens the window where another thread's destroy slips in; None
  (the default) for no pause;
- ``kernels``: emulate cubind.Array's copy and fill kernels (the default), or
  refuse any kernel with an AssertionError (a test whose layouts need none);
- ``record_calls``: keep each call's (name, args) in ``calls`` (the default;
  the thread stress leaves it off, which would keep every host buffer alive).

``install`` puts it in place of the ``cuda`` module's functions (the
``emulated_gpu`` / ``array_gpu`` fixtures of tests/conftest.py, and
tests/pythonic/test_threads.py's arrays from many threads); ``install_pending``
in place of the driver of cubind/_core/pending.py alone (test_threads.py's
bookkeeping test). Both can make the interpreter switch threads as often as
it can (``switch_interval``). Every call answered with an error (other than
NOT_READY) goes to FAILED_CALLS, which tests/conftest.py reads after each
test.

The private modules it patches are imported here, at the top, and nowhere
else in the tests that use it."""

import contextlib
import ctypes
import gc
import itertools
import random
import sys
import threading
import time
import types
import warnings

import numpy as np
import pytest

import cubind._arrays.kernels as kernels
import cubind._core.pending as _pending
import cubind._memory.memory as _memory
from tests._helpers import import_cubind_driver

cuda = import_cubind_driver()

NOT_READY, INVALID_VALUE, INVALID_HANDLE = 600, 1, 400


class EmulatedGPU:
    """The driver functions the Pythonic layer calls, over host memory (the
    module's docstring tells the checks and the options)."""

    real = False
    name = "emulated"

    def __init__(self, *, event_queries=0, latency=None, kernels=True, record_calls=True):
        if event_queries != "random" and not (isinstance(event_queries, int) and event_queries >= 0):
            raise ValueError(f"event_queries must be a count or 'random', not {event_queries!r}")
        self.event_queries = event_queries
        self.latency = latency
        self.kernels = kernels
        self.record_calls = record_calls
        self.lock = threading.RLock()
        self.allocs = {}  # address -> numpy uint8 buffer
        self.events = {}  # live handle -> queries left before it reports done
        self.handles = itertools.count(0x1001)
        self.events_done = True  # False: every event reports NOT_READY (its work still queued)
        self.calls = []  # (function name, args), with record_calls
        self.launches = []  # (kernel name, args, stream)
        self.violations = []  # what a real driver would crash on or refuse

    def _violation(self, text):
        with self.lock:
            self.violations.append(text)

    def _pause(self):
        if self.latency is not None:
            time.sleep(self.latency)  # another thread's turn: where a destroy would slip in between

    # memory

    def _alloc(self, nbytes):
        buf = np.full(nbytes, 0xCD, np.uint8)  # "uninitialised" memory that no test value equals
        with self.lock:
            self.allocs[buf.ctypes.data] = buf
        return 0, buf.ctypes.data

    def device(self, addr, nbytes):
        """The bytes [addr, addr + nbytes), asserting they lie in one live
        allocation; the view keeps its buffer alive should another thread
        free it meanwhile."""
        addr = int(addr)
        with self.lock:
            for base, buf in self.allocs.items():
                if base <= addr and addr + nbytes <= base + buf.size:
                    return buf[addr - base:addr - base + nbytes]
        raise AssertionError(f"device access of {nbytes} bytes at {addr:#x} is outside every live allocation")

    @staticmethod
    def host(obj, nbytes):
        """The first nbytes of a host buffer, or of the memory at an address."""
        if isinstance(obj, int):
            return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(obj))
        return np.frombuffer(memoryview(obj).cast("B"), np.uint8)[:nbytes]

    def cuMemAlloc(self, nbytes):
        return self._alloc(nbytes)

    def cuMemAllocAsync(self, nbytes, stream):
        return self._alloc(nbytes)

    def cuMemFree(self, ptr):
        with self.lock:
            freed = self.allocs.pop(int(ptr), None)
        if freed is None:
            self._violation(f"cuMemFree of {int(ptr):#x}, not allocated")
            return (INVALID_VALUE,)
        return (0,)

    def cuMemFreeAsync(self, ptr, stream):
        return self.cuMemFree(ptr)

    def cuMemcpyHtoD(self, dst, src, n):
        self.device(dst, n)[:] = self.host(src, n)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        self.host(dst, n)[:] = self.device(src, n)
        return (0,)

    def cuMemcpyDtoDAsync(self, dst, src, n, stream):
        self.device(dst, n)[:] = self.device(src, n)
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
            rows = []
            for side in ("src", "dst"):
                kind = int(getattr(copy, f"{side}MemoryType"))
                pitch = getattr(copy, f"{side}Pitch")
                start = getattr(copy, f"{side}XInBytes") + (getattr(copy, f"{side}Y") + row) * pitch
                if kind == host:
                    rows.append(self.host(int(getattr(copy, f"{side}Host")) + start, width))
                else:
                    assert kind == device
                    rows.append(self.device(int(getattr(copy, f"{side}Device")) + start, width))
            rows[1][:] = rows[0]
        return (0,)

    def cuMemcpy2DAsync(self, copy, stream):
        return self.cuMemcpy2D(copy)

    def _memset(self, ptr, value, count, width):
        pattern = np.frombuffer(int(value).to_bytes(width, "little"), np.uint8)
        self.device(ptr, count * width)[:] = np.tile(pattern, count)
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

    # context, streams

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

    # events: each live one counts the queries left before it reports done

    def _live(self, call, event):
        self._pause()
        with self.lock:
            if int(event) in self.events:
                return True
        self._violation(f"{call} on event {int(event):#x} after its destruction")
        return False

    def cuEventCreate(self, flags):
        queries = random.randrange(4) if self.event_queries == "random" else self.event_queries
        with self.lock:
            handle = next(self.handles)
            self.events[handle] = queries
        return 0, handle

    def cuEventRecord(self, event, stream):
        return (0 if self._live("cuEventRecord", event) else INVALID_HANDLE,)

    def cuEventQuery(self, event):
        if not self._live("cuEventQuery", event):
            return (INVALID_HANDLE,)
        with self.lock:
            left = self.events.get(int(event), 0)
            if left:
                self.events[int(event)] = left - 1
        return (NOT_READY if left or not self.events_done else 0,)

    def cuEventSynchronize(self, event):
        if not self._live("cuEventSynchronize", event):
            return (INVALID_HANDLE,)
        with self.lock:
            if int(event) in self.events:
                self.events[int(event)] = 0
        return (0,)

    def cuStreamWaitEvent(self, stream, event, flags):
        return (0 if self._live("cuStreamWaitEvent", event) else INVALID_HANDLE,)

    def cuEventDestroy(self, event):
        self._pause()
        with self.lock:
            gone = self.events.pop(int(event), None) is None
        if gone:
            self._violation(f"cuEventDestroy of event {int(event):#x}, already destroyed")
            return (INVALID_HANDLE,)
        return (0,)

    # what the tests read

    def names(self):
        return [name for name, _ in self.calls]

    def driver(self):
        """The functions as a driver module offers them: each call recorded
        (with record_calls) and, when answered with an error, put in FAILED_CALLS."""
        functions = {}
        for name in DRIVER_FUNCTIONS:
            method = getattr(self, name)

            def call(*args, _method=method, _name=name):
                if self.record_calls:
                    self.calls.append((_name, args))
                result = _method(*args)
                if result[0] not in (0, NOT_READY):
                    FAILED_CALLS.append((_name, int(result[0])))
                return result

            functions[name] = call
        return types.SimpleNamespace(**functions)

    # kernels

    def kernel(self, key, source, name):
        if not self.kernels:
            raise AssertionError(f"the test's layouts need no {name} kernel")
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
            s = self.device(src + sum(i * k for i, k in zip(idx, a)), src_dt.itemsize)
            d = self.device(dst + sum(i * k for i, k in zip(idx, b)), dst_dt.itemsize)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d[:] = np.frombuffer(s.tobytes(), src_dt).astype(dst_dt).view(np.uint8)

    def _fill_kernel(self, itemsize, dst, n, n1, n2, n3, b0, b1, b2, b3, lo, hi):
        bits = np.frombuffer((lo.to_bytes(8, "little") + hi.to_bytes(8, "little"))[:itemsize], np.uint8)
        for idx in self._boxes(n, n1, n2, n3):
            self.device(dst + sum(i * k for i, k in zip(idx, (b0, b1, b2, b3))), itemsize)[:] = bits


DRIVER_FUNCTIONS = [name for name in vars(EmulatedGPU) if name.startswith("cu")]
# (function, status) of each emulated call answered with an error (not
# CUDA_ERROR_NOT_READY): tests/conftest.py reads and clears it after each test.
FAILED_CALLS = []


@contextlib.contextmanager
def _switching(interval):
    """With an interval, the interpreter switches threads that often."""
    if interval is None:
        yield
        return
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def install(monkeypatch, *, switch_interval=None, **options):
    """Put an EmulatedGPU(**options) in place of the ``cuda`` module's
    functions and cubind.Array's kernels; yields it, and takes it away (with
    what a test left queued) after."""
    if cuda is None:
        pytest.skip("cubind's cuda driver package is not built")
    _settle_real_work()
    _pending.retire_order_events(True)  # the real driver's, destroyed by it: the emulator knows none
    emulated = EmulatedGPU(**options)
    driver = emulated.driver()
    for name in DRIVER_FUNCTIONS:
        monkeypatch.setattr(cuda, name, getattr(driver, name))
    monkeypatch.setattr(kernels, "_kernel", emulated.kernel)
    previous = _memory.use_python_driver(True)  # DeviceMemory calls the emulated functions too
    try:
        with _switching(switch_interval):
            yield emulated
    finally:
        _memory.use_python_driver(previous)
        _pending._pending.clear()  # what a test left queued goes with its emulator
        _pending.retire_order_events(True)  # the emulator's, never handed to a real driver
        emulated.calls.clear()
        gc.collect()


def _settle_real_work():
    """Before the emulator takes the driver's place: what an earlier test left
    for a real GPU (a pending hold's event, garbage holding real streams and
    events) is finished and released by the real driver, not handed to the
    emulator, which would refuse the handles it never made (an H100 run saw
    cuEventQuery and cuEventDestroy answered 400 after a GPU test)."""
    gc.collect()
    if _pending._pending:
        err, ctx = cuda.cuCtxGetCurrent()
        if err == 0 and ctx is not None and int(ctx):
            cuda.cuCtxSynchronize()
        _pending.sweep()


def install_pending(monkeypatch, *, switch_interval=None, **options):
    """Put an EmulatedGPU(**options) in place of the driver of
    cubind/_core/pending.py alone; yields it, and drops what is left queued after."""
    _pending.retire_order_events(True)
    emulated = EmulatedGPU(**options)
    driver = emulated.driver()
    monkeypatch.setattr(_pending, "_driver", lambda: driver)
    try:
        with _switching(switch_interval):
            yield emulated
    finally:
        with _pending._lock:
            _pending._pending.clear()
        _pending.retire_order_events(True)
