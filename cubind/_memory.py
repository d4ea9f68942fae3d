"""Owners of the device memory behind arrays.

An array and all its views share one owner; the memory goes when the owner
does (the last array referring to it is collected) or at ``release()``, which
every view then sees: ``ptr`` becomes ``None`` and the array refuses use.

:class:`DeviceMemory` is cubind's own allocation: ``cuMemAlloc``/``cuMemFree``,
or where a stream is given ``cuMemAllocAsync``/``cuMemFreeAsync`` on it, so that
allocation and release are ordered with the work queued there.
:class:`ForeignMemory` is memory another library owns (through
``__cuda_array_interface__``, DLPack or a raw pointer): releasing it drops the
reference that kept the other library's object alive.
"""

import sys

from . import _pending
from ._context import ensure_context
from ._errors import check
from ._handles import stream_handle

__all__ = ["DeviceMemory", "ForeignMemory"]


def _driver():
    import cuda

    return cuda


class _Owner:
    """What both owners share: ``ptr`` (``None`` once released for cubind),
    and release deferred while DLPack consumers still hold the memory.

    ``release()`` ends cubind's use at once (every view refuses use); memory
    another library took through DLPack stays until that library lets go
    (its capsule's deleter ends the last export).
    """

    __slots__ = ()

    def export(self):
        """Counts one DLPack export; :meth:`unexport` ends it."""
        self._exports += 1

    def unexport(self):
        self._exports -= 1
        if self._exports == 0 and self._deferred:
            self._deferred = False
            self._free()

    def release(self):
        """Ends cubind's use now (idempotent); frees now, or when the last
        DLPack export ends."""
        if self.ptr is None:
            return
        self._address, self.ptr = self.ptr, None
        if self._exports:
            self._deferred = True
            return
        self._free()


class DeviceMemory(_Owner):
    """``nbytes`` of device memory in the current context (device 0's primary
    context where none is current); stream-ordered on ``stream`` where one is
    given (``None``: synchronous ``cuMemAlloc``)."""

    __slots__ = ("ptr", "nbytes", "device", "stream", "_stream_obj", "_ctx", "_address", "_exports", "_deferred",
                 "__weakref__")

    def __init__(self, nbytes, stream=None):
        self.ptr = None  # a failed allocation leaves nothing for __del__ to free
        self._exports, self._deferred, self._address = 0, False, None
        cuda = _driver()
        self.device = ensure_context()
        self.nbytes = nbytes
        # The stream object itself is kept so that a CuPy, PyTorch or cubind
        # stream is not destroyed before the memory ordered on it is freed.
        self._stream_obj = stream
        self.stream = None if stream is None else stream_handle(stream)
        self._ctx = int(check(cuda.cuCtxGetCurrent(), "cuCtxGetCurrent") or 0)
        if nbytes == 0:  # the driver refuses empty allocations; nothing needs an address
            self.ptr = 0
        elif self.stream is None:
            self.ptr = int(check(cuda.cuMemAlloc(nbytes), "cuMemAlloc"))
        else:
            self.ptr = int(check(cuda.cuMemAllocAsync(nbytes, self.stream), "cuMemAllocAsync"))

    def _free(self):
        # After work already queued that uses it through cubind, in the order
        # of its allocation stream.
        ptr = self._address
        if self.nbytes == 0:
            return
        cuda = _driver()
        with _CurrentContext(cuda, self._ctx):
            _pending.wait_for(self, self.stream)
            if self.stream is None:
                check(cuda.cuMemFree(ptr), "cuMemFree")
            else:
                check(cuda.cuMemFreeAsync(ptr, self.stream), "cuMemFreeAsync")
        self._stream_obj = None

    def __del__(self):
        if self.ptr is None:
            return
        if sys.is_finalizing():  # the driver may be gone; the process is ending anyway
            return
        self.release()

    def __repr__(self):
        state = "released" if self.ptr is None else f"0x{self.ptr:x}"
        return f"<cubind DeviceMemory {state}, {self.nbytes} bytes, device {self.device}>"


class ForeignMemory(_Owner):
    """Memory another object owns, at ``ptr``; ``owner`` is kept alive until
    :meth:`release`, which also calls ``on_release`` (a DLPack deleter)."""

    __slots__ = ("ptr", "owner", "device", "dlpack_type", "stream", "_on_release", "_address", "_exports",
                 "_deferred", "__weakref__")

    def __init__(self, ptr, owner, device=None, on_release=None, dlpack_type=None):
        self._exports, self._deferred, self._address = 0, False, None
        self.ptr = int(ptr)
        self.owner = owner
        self.device = device
        self.dlpack_type = dlpack_type  # DLPack's device type where it came from DLPack (CUDA, managed, pinned)
        self.stream = None
        self._on_release = on_release

    def _free(self):
        done, self._on_release = self._on_release, None
        self.owner = None
        if done is not None:
            done()

    def __repr__(self):
        state = "released" if self.ptr is None else f"0x{self.ptr:x}"
        return f"<cubind ForeignMemory {state}, owner {type(self.owner).__name__}>"


class _CurrentContext:
    """Makes ``ctx`` current for a block where another (or none) is, as a
    release from a collector in any thread needs."""

    __slots__ = ("cuda", "ctx", "pushed")

    def __init__(self, cuda, ctx):
        self.cuda, self.ctx, self.pushed = cuda, ctx, False

    def __enter__(self):
        err, current = self.cuda.cuCtxGetCurrent()
        if self.ctx and (err != 0 or current is None or int(current) != self.ctx):
            check(self.cuda.cuCtxPushCurrent(self.ctx), "cuCtxPushCurrent")
            self.pushed = True
        return self

    def __exit__(self, *exc):
        if self.pushed:
            self.cuda.cuCtxPopCurrent()
        return False
