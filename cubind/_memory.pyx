# cython: language_level=3
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

Compiled, because every array made and dropped (``to_gpu``, ``empty``, each
temporary) creates and releases one owner: as Python classes they were most of
what ``to_gpu`` cost above its three driver calls (bench/copies_inprocess.py).
The driver is still called through the ``cuda`` module's functions, not its C
level, so that the no-GPU tests can stand an emulated driver in for it.
"""

import sys

from cubind import _pending
from cubind._context import ensure_context
from cubind._errors import CUDAError
from cubind._handles import stream_handle

__all__ = ["DeviceMemory", "ForeignMemory"]

cdef object _cuda = None
cdef list _held = _pending._pending  # entries of queued work holding objects: almost always empty


cdef object _driver():
    global _cuda
    if _cuda is None:
        import cuda

        _cuda = cuda
    return _cuda


cdef object _ok(tuple result, str call):
    """The output of a 1:1 call of one output, or CUDAError."""
    if result[0] != 0:
        raise CUDAError(result[0], call)
    return result[1]


cdef object _status(tuple result, str call):
    if result[0] != 0:
        raise CUDAError(result[0], call)


cdef class _Owner:
    """What both owners share: ``ptr`` (``None`` once released for cubind),
    and release deferred while DLPack consumers still hold the memory.

    ``release()`` ends cubind's use at once (every view refuses use); memory
    another library took through DLPack stays until that library lets go
    (its capsule's deleter ends the last export).
    """

    cdef public object ptr
    cdef public object device
    cdef public object stream
    cdef object _address
    cdef readonly int _exports
    cdef bint _deferred
    cdef object __weakref__

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

    cdef _free(self):
        pass


cdef class DeviceMemory(_Owner):
    """``nbytes`` of device memory in the current context (device 0's primary
    context where none is current); stream-ordered on ``stream`` where one is
    given (``None``: synchronous ``cuMemAlloc``)."""

    cdef readonly object nbytes
    cdef object _stream_obj
    cdef object _ctx

    def __init__(self, nbytes, stream=None):
        cuda = _driver()
        # A failed allocation leaves ptr None: nothing for __del__ to free.
        err, ctx = cuda.cuCtxGetCurrent()
        if err == 0 and ctx is not None and int(ctx) != 0:
            self.device = int(_ok(cuda.cuCtxGetDevice(), "cuCtxGetDevice"))
        else:  # none current (or the driver not initialized): ensure_context makes one so
            self.device = ensure_context()
            ctx = _ok(cuda.cuCtxGetCurrent(), "cuCtxGetCurrent")
        self._ctx = int(ctx or 0)
        self.nbytes = nbytes
        # The stream object itself is kept so that a CuPy, PyTorch or cubind
        # stream is not destroyed before the memory ordered on it is freed.
        self._stream_obj = stream
        self.stream = None if stream is None else stream_handle(stream)
        if nbytes == 0:  # the driver refuses empty allocations; nothing needs an address
            self.ptr = 0
        elif self.stream is None:
            self.ptr = int(_ok(cuda.cuMemAlloc(nbytes), "cuMemAlloc"))
        else:
            self.ptr = int(_ok(cuda.cuMemAllocAsync(nbytes, self.stream), "cuMemAllocAsync"))

    cdef _free(self):
        # After work already queued that uses it through cubind, in the order
        # of its allocation stream; in its own context, which a release from a
        # collector in another thread may not find current.
        if self.nbytes == 0:
            return
        cuda = _driver()
        ptr = self._address
        err, current = cuda.cuCtxGetCurrent()
        pushed = self._ctx and (err != 0 or current is None or int(current) != self._ctx)
        if pushed:
            _status(cuda.cuCtxPushCurrent(self._ctx), "cuCtxPushCurrent")
        try:
            if _held:
                _pending.wait_for(self, self.stream)
            if self.stream is None:
                _status(cuda.cuMemFree(ptr), "cuMemFree")
            else:
                _status(cuda.cuMemFreeAsync(ptr, self.stream), "cuMemFreeAsync")
        finally:
            if pushed:
                cuda.cuCtxPopCurrent()
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


cdef class ForeignMemory(_Owner):
    """Memory another object owns, at ``ptr``; ``owner`` is kept alive until
    :meth:`release`, which also calls ``on_release`` (a DLPack deleter)."""

    cdef public object owner
    cdef public object dlpack_type
    cdef object _on_release

    def __init__(self, ptr, owner, device=None, on_release=None, dlpack_type=None):
        self.ptr = int(ptr)
        self.owner = owner
        self.device = device
        self.dlpack_type = dlpack_type  # DLPack's device type where it came from DLPack (CUDA, managed, pinned)
        self.stream = None
        self._on_release = on_release

    cdef _free(self):
        done, self._on_release = self._on_release, None
        self.owner = None
        if done is not None:
            done()

    def __repr__(self):
        state = "released" if self.ptr is None else f"0x{self.ptr:x}"
        return f"<cubind ForeignMemory {state}, owner {type(self.owner).__name__}>"
