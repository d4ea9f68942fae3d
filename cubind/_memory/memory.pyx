# cython: language_level=3
"""Owners of the device memory behind arrays.

An array and all its views share one owner; the memory goes when the owner
does (the last array referring to it is collected) or at ``release()``, which
every view then sees: ``ptr`` becomes ``None`` and the array refuses use.

:class:`DeviceMemory` is cubind's own allocation: by default from the
device's current memory pool in the order of its stream (the default stream
where none is given), ``cuMemAllocAsync``/``cuMemFreeAsync``, as CuPy and
cuda.core allocate, so that allocation and release are ordered with the work
queued there and freed memory is reused without a trip to the driver's
allocator (``cuMemAlloc``/``cuMemFree`` of 1 MiB cost about 80 us of the
182 us a 1 MiB ``to_gpu`` took on the H200); from a pool the caller gives
(``cuMemAllocFromPoolAsync``); or, with ``pool=False``,
``cuMemAlloc``/``cuMemFree``, which memory another process maps through CUDA
IPC needs.
:class:`ForeignMemory` is memory another library owns (through
``__cuda_array_interface__``, DLPack or a raw pointer): releasing it drops the
reference that kept the other library's object alive.

Compiled, and calling the driver through its C level, because every array
made and dropped (``to_gpu``, ``empty``, each temporary) creates and releases
one owner: as Python classes they were most of what ``to_gpu`` cost above its
driver calls, and on the H100 even a few Python-level calls between a 1 MiB
copy and its allocation or free cost microseconds each (bench/README.md,
copies).
"""

import sys

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport uintptr_t

cimport cuda.cdriver as cdrv
from cubind._core.allocations cimport Allocation, any_waiting, stream_unused, stream_used, wait_for_capture

from cubind._core import allocations as _allocations
from cubind._core import pending as _pending
from cubind._core.device_stream_event import ensure_context
from cubind._core.driver import module as _driver
from cubind._core.errors import STICKY, CUDAError
from cubind._core.handles import stream_handle

__all__ = ["DeviceMemory", "ForeignMemory", "release_all", "abandon", "live_count",
           "copy_contiguous", "copy_into"]

cdef list _held = _pending._pending  # entries of queued work holding objects: almost always empty
# Every DeviceMemory not yet freed is linked into cubind._core.allocations'
# list (its base class, Allocation), so that what is still referenced when
# the interpreter exits (a module global of the user's program, a reference
# cycle) is freed before the primary contexts are released, and
# Device.reset() can drop what dies with a context: the core calls the two
# releases DeviceMemory defines below, knowing nothing of this module.
# Set by release_all() at exit: stream-ordered memory is then freed on the
# legacy default stream after its context synchronized, not on its own stream,
# which the program may already have destroyed (a raw handle cubind does not
# own): a free ordered on a dead stream is undefined behaviour.
cdef bint _exiting = False
# Errors after which a release has nothing left to free: the context was
# destroyed (709), the driver deinitialized (4), or a sticky error poisoned it.
_GONE = frozenset((4, 709)) | STICKY


cdef _fail(int err, str call):
    raise CUDAError(_driver().CUresult(err), call)


def copy_contiguous(object host, object ptr, bint to_device):
    """The default stream's synchronous copy between the C-contiguous numpy
    array ``host`` and the contiguous device memory at ``ptr`` (an int):
    ``to_gpu``'s, ``Array.set``'s and ``Array.get``'s common case. In C: on
    the H100 a 4 KiB ``get`` cost 2.5 us above the bare call when it asked
    for the current context through the 1:1 functions and copied through
    them."""
    cdef Py_buffer view
    PyObject_GetBuffer(host, &view, PyBUF_SIMPLE if to_device else PyBUF_WRITABLE)
    try:
        _copy_view(&view, ptr, to_device)
    finally:
        PyBuffer_Release(&view)


def copy_into(object host, object ptr):
    """``copy_contiguous(host, ptr, False)`` where ``host`` exposes a
    writable C-contiguous buffer, and True; False (nothing copied) where it
    does not, for the caller's general path. ``Array.get(out=...)``'s common
    case: the buffer request checks what ``out.flags`` would, without making
    that object (1.0 us over the bare copy at 4 KiB on the H100 before)."""
    cdef Py_buffer view
    try:
        PyObject_GetBuffer(host, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
    except (BufferError, ValueError):  # numpy says ValueError: "ndarray is not C-contiguous", read-only
        return False
    try:
        _copy_view(&view, ptr, False)
    finally:
        PyBuffer_Release(&view)
    return True


cdef int _copy_view(Py_buffer* view, object ptr, bint to_device) except -1:
    """The synchronous copy between a host buffer already requested and the
    device memory at ``ptr``. Where no context is current in this thread,
    ``ensure_context`` makes one current first (asked, not found by a failing
    copy: that would be an API error of the layer's own under compute-sanitizer)."""
    cdef cdrv.CUresult err
    cdef cdrv.CUcontext ctx = NULL
    cdef cdrv.CUdeviceptr dptr = ptr
    if cdrv.cuCtxGetCurrent(&ctx) != cdrv.CUDA_SUCCESS or ctx == NULL:
        ensure_context()   # also initializes the driver where nothing did yet
    if view.len == 0:
        return 0
    with nogil:
        if to_device:
            err = cdrv.cuMemcpyHtoD(dptr, view.buf, view.len)
        else:
            err = cdrv.cuMemcpyDtoH(view.buf, dptr, view.len)
    if err != cdrv.CUDA_SUCCESS:
        _fail(err, "cuMemcpyHtoD" if to_device else "cuMemcpyDtoH")
    return 0


cdef set _pools_kept = set()  # devices whose current pool _keep_pool_memory has seen


cdef _keep_pool_memory(cdrv.CUdevice dev):
    """Before a device's first stream-ordered allocation: where its current
    memory pool still has the driver's release threshold of 0, raise it to
    the most, as cuda.core's DeviceMemoryResource does. At 0 the pool hands
    its free memory back at every synchronisation, and the next allocation
    maps it again: 16 MiB took 222 us on an H100 where reuse takes a few.
    A threshold someone set is left as it is; cuMemPoolTrimTo gives the
    memory back. Errors are left to the allocation itself."""
    cdef cdrv.CUmemoryPool pool = NULL
    cdef cdrv.cuuint64_t threshold = 0
    cdef cdrv.cuuint64_t most = 0xFFFFFFFFFFFFFFFF
    cdef cdrv.CUresult err
    _pools_kept.add(dev)  # once per device, even where the query fails (no pools: the allocation says so)
    with nogil:
        err = cdrv.cuDeviceGetMemPool(&pool, dev)
        if err == 0:
            err = cdrv.cuMemPoolGetAttribute(pool, cdrv.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold)
        if err == 0 and threshold == 0:
            cdrv.cuMemPoolSetAttribute(pool, cdrv.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &most)


cdef inline cdrv.CUstream _stream_of(object handle):
    """The CUstream of a handle (None: the default stream, NULL)."""
    return NULL if handle is None else <cdrv.CUstream><uintptr_t>handle


cdef bint _legacy_joins_capture():
    """Whether work on the default stream would now join a capture: the
    legacy stream synchronizes with every blocking stream, so while one is
    being captured the driver answers CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
    (in per-thread mode the default stream is the thread's own: never)."""
    cdef cdrv.CUstreamCaptureStatus status = cdrv.CU_STREAM_CAPTURE_STATUS_NONE
    cdef cdrv.CUresult err
    with nogil:
        err = cdrv.cuStreamIsCapturing(NULL, &status)
    return err == cdrv.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT


cdef bint _capturing(cdrv.CUstream stream):
    """Whether ``stream`` is in a capture (an invalidated one too); False
    where the driver cannot say (a legacy stream during another thread's
    global capture). cuStreamIsCapturing, not cuStreamGetCaptureInfo: its
    signature is the same in CUDA 12 and 13."""
    cdef cdrv.CUstreamCaptureStatus status = cdrv.CU_STREAM_CAPTURE_STATUS_NONE
    cdef cdrv.CUresult err
    with nogil:
        err = cdrv.cuStreamIsCapturing(stream, &status)
    return err == 0 and status != cdrv.CU_STREAM_CAPTURE_STATUS_NONE


cdef class _Owner(Allocation):
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


# How DeviceMemory allocates (its ``pool`` argument).
cdef enum:
    _DRIVER_ALLOC = 0   # pool=False: cuMemAlloc / cuMemFree
    _CURRENT_POOL = 1   # pool=None (or True): the device's current pool, stream-ordered
    _GIVEN_POOL = 2     # a pool handle: cuMemAllocFromPoolAsync


cdef int _pool_kind(object pool, cdrv.CUmemoryPool* handle) except -1:
    if pool is None or pool is True:
        return _CURRENT_POOL
    if pool is False:
        return _DRIVER_ALLOC
    try:
        if isinstance(pool, (float, str, bytes)):  # int() would take them: 1.5 is no handle
            raise TypeError
        value = int(pool)  # a CUmemoryPool (cubind's or NVIDIA's), or a raw handle
    except (TypeError, ValueError):
        raise TypeError(f"pool: expected None (the device's current pool), False (cuMemAlloc) or a memory pool "
                        f"handle (CUmemoryPool or an int), not {type(pool).__name__}") from None
    if value <= 0:
        raise ValueError(f"pool: {value:#x} is not a memory pool handle")
    handle[0] = <cdrv.CUmemoryPool><uintptr_t>value
    return _GIVEN_POOL


cdef class DeviceMemory(_Owner):
    """``nbytes`` of device memory in the current context (device 0's primary
    context where none is current), ordered on ``stream`` (``None``: the
    default stream). ``pool``: ``None``, the device's current pool
    (``cuMemAllocAsync``); a pool handle (``cuMemAllocFromPoolAsync``); or
    ``False``, ``cuMemAlloc`` (freed by ``cuMemFree``, which waits for all
    work)."""

    cdef readonly object nbytes
    cdef readonly bint pooled  # from a pool, freed with cuMemFreeAsync on its stream
    cdef object _stream_obj
    cdef bint _counted       # counted among its stream's users (allocations.stream_used) until freed
    cdef bint _in_capture    # allocated while its stream was being captured: the graph's own memory
    cdef list _users         # [(handle, stream object)]: other streams whose work uses it (record_stream)

    def __init__(self, nbytes, stream=None, pool=None):
        # A failed allocation leaves ptr None: nothing for __del__ to free.
        cdef cdrv.CUmemoryPool hpool = NULL
        cdef int kind = _pool_kind(pool, &hpool)
        if nbytes < 0:
            raise OverflowError(f"nbytes: {nbytes} is negative")
        self.nbytes = nbytes
        # The stream object itself is kept so that a CuPy, PyTorch or cubind
        # stream is not destroyed before the memory ordered on it is freed.
        self._stream_obj = stream
        self.stream = None if stream is None else stream_handle(stream)
        cdef cdrv.CUcontext ctx = NULL
        cdef cdrv.CUdevice dev = 0
        cdef cdrv.CUresult err = cdrv.cuCtxGetCurrent(&ctx)
        if err == 0 and ctx != NULL:
            err = cdrv.cuCtxGetDevice(&dev)
            if err != 0:
                _fail(err, "cuCtxGetDevice")
            self.device = dev
        else:  # none current (or the driver not initialized): ensure_context makes one so
            self.device = ensure_context()
            err = cdrv.cuCtxGetCurrent(&ctx)
            if err != 0:
                _fail(err, "cuCtxGetCurrent")
            err = cdrv.cuCtxGetDevice(&dev)
            if err != 0:
                _fail(err, "cuCtxGetDevice")
        self._ctx = <uintptr_t>ctx
        if nbytes == 0:  # the driver refuses empty allocations; nothing needs an address
            self.ptr = 0
            return
        self._allocate(nbytes, dev, kind, hpool)
        self._link()

    cdef _allocate(self, size_t n, cdrv.CUdevice dev, int kind, cdrv.CUmemoryPool hpool):
        cdef cdrv.CUdeviceptr ptr = 0
        cdef cdrv.CUstream hstream = _stream_of(self.stream)
        cdef cdrv.CUresult err
        if kind == _DRIVER_ALLOC:
            with nogil:
                err = cdrv.cuMemAlloc(&ptr, n)
            if err != 0:
                _fail(err, "cuMemAlloc")
            self.ptr = ptr
            return
        if kind == _CURRENT_POOL:
            if dev not in _pools_kept:
                _keep_pool_memory(dev)
            with nogil:
                err = cdrv.cuMemAllocAsync(&ptr, n, hstream)
            if err != 0:
                _fail(err, "cuMemAllocAsync")
        else:
            with nogil:
                err = cdrv.cuMemAllocFromPoolAsync(&ptr, n, hpool, hstream)
            if err != 0:
                _fail(err, "cuMemAllocFromPoolAsync")
        self.ptr = ptr
        self.pooled = True
        if self.stream is not None:  # the default stream is neither destroyed nor captured: nothing to note
            stream_used(self.stream)
            self._counted = True
            self._in_capture = _capturing(hstream)

    def record_stream(self, stream):
        """Marks the memory as used by work queued on ``stream``: its
        stream-ordered free then waits for the work queued there by the time
        of the free, not only for its own stream's (PyTorch's
        ``Tensor.record_stream``). Memory from ``cuMemAlloc`` needs nothing:
        ``cuMemFree`` waits for all work."""
        if self.ptr is None:
            raise ValueError("the memory was released; it can no longer be used")
        if not self.pooled or self.nbytes == 0:
            return
        handle = stream_handle(stream)
        if handle == (self.stream or 0):
            return
        if self._users is None:
            self._users = []
        else:
            for h, _ in self._users:
                if h == handle:
                    return
        # Counted as the allocation stream is: cubind defers destroying a
        # stream until this free has ordered itself after it.
        stream_used(handle)
        self._users.append((handle, stream))

    cdef _order_after_users(self):
        # Before the stream-ordered free (in the memory's context): the
        # allocation stream waits for what each using stream queued so far,
        # through the thread's order event (cubind._core.pending), recorded
        # and waited for from C. Their counts go in _uncount, after the free.
        cdef cdrv.CUevent event
        cdef cdrv.CUstream alloc = _stream_of(self.stream)
        cdef cdrv.CUresult err
        # The memory's context is current here (_free pushed it where it was not).
        event = <cdrv.CUevent><uintptr_t>int(_pending.order_event(self._ctx if self._ctx != 0 else None))
        for handle, _ in self._users:
            err = cdrv.cuEventRecord(event, <cdrv.CUstream><uintptr_t>handle)
            if err != 0:
                _fail(err, "cuEventRecord")
            err = cdrv.cuStreamWaitEvent(alloc, event, 0)
            if err != 0:
                _fail(err, "cuStreamWaitEvent")

    cdef _uncount(self, bint destroy):
        # After the free is queued: the stream's deferred destruction (if its
        # owner went first, in a cycle) may run now.
        if self._counted:
            self._counted = False
            stream_unused(self.stream, destroy)
        if self._users is not None:  # after the free is queued, as the allocation stream's count
            users, self._users = self._users, None
            for handle, _ in users:
                stream_unused(handle, destroy)

    cdef _free(self):
        # After work already queued that uses it through cubind, in the order
        # of its allocation stream; in its own context, which a release from a
        # collector in another thread may not find current.
        if self.nbytes == 0:
            return
        self._unlink()
        cdef cdrv.CUcontext current = NULL
        cdef cdrv.CUdeviceptr ptr = self._address
        cdef cdrv.CUstream hstream = NULL
        cdef cdrv.CUresult err = cdrv.cuCtxGetCurrent(&current)
        cdef bint pushed = self._ctx != 0 and (err != 0 or <uintptr_t>current != self._ctx)
        if pushed:
            err = cdrv.cuCtxPushCurrent(<cdrv.CUcontext>self._ctx)
            if err != 0:
                _fail(err, "cuCtxPushCurrent")
        try:
            if _held:
                # Holds whose work is done go first: without a later hold
                # nothing sweeps them, and every free would scan them.
                _pending.sweep()
                if _held:  # a stream-ordered free waits in its stream's order, cuMemFree on the host
                    _pending.wait_for(self, (self.stream or 0) if self.pooled else None)
            if not self.pooled:
                with nogil:
                    err = cdrv.cuMemFree(ptr)
                if err != 0:
                    _fail(err, "cuMemFree")
            else:
                if _exiting:
                    with nogil:
                        cdrv.cuCtxSynchronize()
                else:
                    hstream = _stream_of(self.stream)
                    if self._users is not None:
                        self._order_after_users()
                with nogil:
                    err = cdrv.cuMemFreeAsync(ptr, hstream)
                self._uncount(True)
                if err != 0:
                    _fail(err, "cuMemFreeAsync")
        finally:
            if pushed:
                cdrv.cuCtxPopCurrent(&current)
        self._stream_obj = None

    cdef _abandon(self):
        # The memory died with its context (Device.reset()): forget the
        # address without a driver call; every view refuses use.
        self._unlink()
        self._uncount(False)
        self.ptr = None
        self._address = None
        self._deferred = False
        self._stream_obj = None

    cdef _release_now(self):
        self.release()
        if self._linked and self._deferred:  # a DLPack consumer still holds it, but the context is going
            self._deferred = False
            self._free()

    cdef _release_at_exit(self):
        # Stream-ordered memory is freed on the legacy stream from now on (see _exiting).
        global _exiting
        _exiting = True
        try:
            self._release_now()
        finally:
            if self._linked:  # not freed (an error): forget it, the driver frees it with the context
                self._abandon()

    cdef _release_for_reset(self):
        # Freed, not just forgotten, where it can be: a checker such as
        # compute-sanitizer counts memory that only a context's destruction
        # freed as leaked. Where the context refuses (a sticky error), forgotten.
        try:
            self._release_now()
        finally:
            if self._linked:
                self._abandon()

    def __del__(self):
        if self.ptr is None:
            return
        if sys.is_finalizing():  # the driver may be gone; cubind's exit hook freed what it could before
            return
        if self.pooled and self._captured_apart():
            # Freed after the capture (allocations.pyx says why); kept alive meanwhile.
            wait_for_capture(self)
            return
        self._release_quietly()
        if any_waiting():
            _allocations.release_waiting()

    cdef bint _captured_apart(self) except -1:
        """Whether the stream this memory is ordered on is being captured, the
        memory having been allocated outside a capture (memory a capture
        allocated is freed in it: the graph's own allocation and free)."""
        if self._users is not None:  # ordering after a captured stream would record into its capture
            for handle, _ in self._users:
                if _capturing(<cdrv.CUstream><uintptr_t>handle):
                    return True
        if self.stream is None:
            # The default stream is never captured, but in legacy mode its free
            # would join a blocking stream's capture (and invalidate it).
            return _legacy_joins_capture()
        return not self._in_capture and _capturing(<cdrv.CUstream><uintptr_t>self.stream)

    cdef bint _release_uncaptured(self) except -1:
        if self.ptr is None:
            return True
        if self.pooled and self._captured_apart():
            return False
        self._release_quietly()
        return True

    cdef _release_quietly(self):
        try:
            self.release()
        except CUDAError as exc:
            # A collector has no caller to tell: after a sticky error (already
            # raised by the call that met it) or a destroyed context there is
            # nothing left to free; other failures still print.
            if int(exc.code) not in _GONE:
                raise

    def __repr__(self):
        state = "released" if self.ptr is None else f"0x{self.ptr:x}"
        return f"<cubind DeviceMemory {state}, {self.nbytes} bytes, device {self.device}>"


live_count = _allocations.live_count
release_all = _allocations.release_all
abandon = _allocations.abandon


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

