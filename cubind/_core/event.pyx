# cython: language_level=3
"""CUDA events (``cubind.Event``), compiled and calling the driver's C level.

Why compiled: an event is made, recorded and dropped per message in a codelet
graph (a ready event, a timing pair), and as a Python class with a weak
reference per event for its release, making and dropping one cost 2.4 us on
the emulated driver where the driver's own calls took 0.3: on the H200 the
bench's timing pairs alone were 14 % of a ticked pipeline's time.

An event destroys its ``CUevent`` when closed or collected. The events alive
are linked into a list through themselves (``allocations.Linked``, as it keeps
device memory: a few pointer writes with no Python call between them, which
the GIL makes whole, no lock), so that ``lifetime`` destroys those still
alive at exit (``release_all``), before the primary contexts are released,
and forgets those of a context ``Device.reset()`` destroys (``abandon``):
they then refuse use. The driver is called without the GIL, as the 1:1
functions call it.
"""

cimport cython
from libc.stdint cimport uintptr_t

cimport cuda.cdriver as cdrv
from cubind._core.allocations cimport Linked, link_into, linked_members, unlink_from

from cubind._core.context import LOST, ensure_context, primary_context
from cubind._core.driver import module as _driver
from cubind._core.errors import CUDAError
from cubind._core.handles import int_streams as _int_streams
from cubind._core.handles import stream_handle

__all__ = ["Event", "release_all", "abandon", "live_count"]

cdef enum:
    _BLOCKING_SYNC = 0x1
    _DISABLE_TIMING = 0x2
    _INTERPROCESS = 0x4

cdef void* _head = NULL  # the events alive and open, newest first


cdef _fail(int err, str call):
    raise CUDAError(_driver().CUresult(err), call)


@cython.auto_pickle(False)
cdef class Event(Linked):
    """A CUDA event. ``timing=True`` (the default) lets :meth:`elapsed_time`
    and ``end - start`` measure between two events, in milliseconds;
    ``blocking_sync`` makes :meth:`synchronize` sleep instead of spin."""

    cdef uintptr_t _ev      # the CUevent; 0 once closed or lost
    cdef uintptr_t _ctx     # the CUcontext it was made in
    cdef object _handle     # its cuda.CUevent, made when first asked for
    cdef bint _timed
    cdef bint _lost         # its context was destroyed by Device.reset()
    cdef object __weakref__

    def __cinit__(self, *, timing=True, blocking_sync=False, interprocess=False):
        cdef unsigned int flags = (0 if timing else _DISABLE_TIMING) | (_BLOCKING_SYNC if blocking_sync else 0)
        cdef cdrv.CUcontext ctx = NULL
        cdef cdrv.CUevent ev = NULL
        cdef cdrv.CUresult err
        if interprocess:
            flags |= _INTERPROCESS | _DISABLE_TIMING
        if cdrv.cuCtxGetCurrent(&ctx) != cdrv.CUDA_SUCCESS or ctx == NULL:
            ensure_context()  # device 0's primary context, initializing the driver where nothing did yet
            err = cdrv.cuCtxGetCurrent(&ctx)
            if err != cdrv.CUDA_SUCCESS:
                _fail(err, "cuCtxGetCurrent")
        with nogil:
            err = cdrv.cuEventCreate(&ev, flags)
        if err != cdrv.CUDA_SUCCESS:
            _fail(err, "cuEventCreate")
        self._ev, self._ctx = <uintptr_t>ev, <uintptr_t>ctx
        self._timed = bool(timing) and not interprocess
        self._link()

    def __dealloc__(self):
        self._release()

    # -- the live list

    cdef void _link(self) noexcept:
        link_into(self, &_head)

    cdef void _unlink(self) noexcept:
        unlink_from(self, &_head)

    cdef void _release(self) noexcept:
        """Destroys the event, once (close, collection and the exit hook may race)."""
        cdef uintptr_t ev = self._ev
        self._unlink()
        if ev == 0:
            return
        self._ev = 0
        # Without the GIL like every call here, in __dealloc__ too: under
        # compute-sanitizer a destroy may wait for the device, whose work may
        # wait for another thread that needs the GIL (test_threads.py hung
        # there with the GIL held). No caller to tell of an error; a
        # destroyed context took the event already.
        with nogil:
            cdrv.cuEventDestroy(<cdrv.CUevent>ev)

    cdef void _lose(self) noexcept:
        """Its context is being destroyed: forgotten without a driver call."""
        self._unlink()
        self._ev = 0
        self._lost = True

    cdef int _check_open(self) except -1:
        if self._ev == 0:
            raise ValueError(LOST.format("event") if self._lost else "event: the event is closed")
        return 0

    # -- what users call

    @property
    def handle(self):
        """The ``cuda.CUevent`` for the 1:1 functions."""
        self._check_open()
        if self._handle is None:
            self._handle = _driver().CUevent(self._ev)
        return self._handle

    @property
    def timing(self):
        """Whether the event records time (:meth:`elapsed_time` needs it at both ends)."""
        return self._timed and not self._lost

    @property
    def _raw(self):
        """The CUevent as an int; None once closed or lost."""
        return self._ev if self._ev != 0 else None

    def record(self, stream=None):
        """Records the event on ``stream`` (any stream; None: the default
        stream of the current context); returns the event."""
        cdef uintptr_t raw = 0
        self._check_open()
        if stream is not None:
            raw = _raw_stream(stream)
            if raw <= 2:  # a per-context handle: a cubind.Stream of a device records in that device's context
                device = _stream_device(stream)
                if device is not None and not _is_current(device):
                    with device:
                        self._record(raw)
                    return self
        self._record(raw)
        return self

    cdef int _record(self, uintptr_t stream) except -1:
        cdef uintptr_t ev = self._ev
        cdef cdrv.CUresult err
        with nogil:
            err = cdrv.cuEventRecord(<cdrv.CUevent>ev, <cdrv.CUstream>stream)
        if err != cdrv.CUDA_SUCCESS:
            _fail(err, "cuEventRecord")
        return 0

    def synchronize(self):
        """Waits until the work before the event's record has finished."""
        cdef cdrv.CUresult err
        self._check_open()
        cdef uintptr_t ev = self._ev
        with nogil:
            err = cdrv.cuEventSynchronize(<cdrv.CUevent>ev)
        if err != cdrv.CUDA_SUCCESS:
            _fail(err, "cuEventSynchronize")

    def query(self):
        """True when the work before the event's record has finished."""
        cdef cdrv.CUresult err
        self._check_open()
        cdef uintptr_t ev = self._ev
        with nogil:
            err = cdrv.cuEventQuery(<cdrv.CUevent>ev)
        if err == cdrv.CUDA_SUCCESS:
            return True
        if err == cdrv.CUDA_ERROR_NOT_READY:  # an answer, not an error
            return False
        _fail(err, "cuEventQuery")

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (both recorded, both with timing)."""
        cdef float ms = 0
        cdef cdrv.CUresult err
        if not isinstance(end, Event):
            raise TypeError(f"end: expected a cubind.Event, not {type(end).__name__}")
        cdef Event other = <Event>end
        for which, ev in (("start", self), ("end", other)):
            if (<Event>ev)._ev == 0:
                raise ValueError(f"{which}: the event is closed")
            if not (<Event>ev)._timed:
                raise ValueError(f"{which}: the event was created with timing=False")
        cdef uintptr_t start_ev = self._ev, end_ev = other._ev
        with nogil:
            err = cdrv.cuEventElapsedTime(&ms, <cdrv.CUevent>start_ev, <cdrv.CUevent>end_ev)
        if err != cdrv.CUDA_SUCCESS:
            _fail(err, "cuEventElapsedTime")
        return float(ms)

    def __sub__(self, start):
        """``end - start``: milliseconds between two events."""
        if not isinstance(start, Event):
            return NotImplemented
        return start.elapsed_time(self)

    def close(self):
        """Destroys the event now (idempotent); a closed event refuses every use."""
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._release()
        return False

    def __eq__(self, other):
        return isinstance(other, Event) and other._raw == self._raw

    def __hash__(self):
        return hash((Event, self._raw))

    def __repr__(self):
        return "<cubind.Event (closed)>" if self._ev == 0 else f"<cubind.Event 0x{self._ev:x}>"


cdef uintptr_t _raw_stream(object stream) except? 0:
    """A stream argument's raw handle (handles.stream_handle's rule; a
    cubind.Stream's own int(), which refuses a closed one)."""
    value = int(stream) if type(stream) in _int_streams else stream_handle(stream, "stream")
    if value < 0:
        raise ValueError(f"stream: a handle is not negative, got {value}")
    if value > <uintptr_t>-1:
        raise OverflowError(f"stream: {value:#x} is wider than a handle")
    return value


# Each device's primary context (CUcontext as an int) by ordinal, as _is_current last asked
# context.py: asking it per record (a call and a CUcontext's int) was half of what a record on
# a device's default stream added to the driver's call on the H200. Emptied by ``abandon``, which
# a reset calls before the driver destroys the context (a new one may have another handle).
cdef dict _primaries = {}


cdef bint _is_current(object device) except -1:
    """Whether ``device``'s primary context is the current one: a record on
    its default stream then needs no push and pop, two driver calls through
    the 1:1 functions (a ready event per device message records there)."""
    cdef cdrv.CUcontext current = NULL
    if cdrv.cuCtxGetCurrent(&current) != cdrv.CUDA_SUCCESS or current == NULL:
        return False
    ordinal = device._ordinal
    primary = _primaries.get(ordinal)
    if primary is None:
        primary = _primaries[ordinal] = int(primary_context(ordinal))
    return <uintptr_t>current == <uintptr_t>primary


cdef object _stream_device(object stream):
    """The device a cubind.Stream of a per-context handle (0, 1, 2) belongs to, or None."""
    for cls in _int_streams:
        if isinstance(stream, cls):
            return stream._device
    return None


cdef list _live():
    return linked_members(_head)


def release_all():
    """Destroys every event still alive, newest first: the exit hook calls
    it before the primary contexts are released."""
    while _head != NULL:
        (<Event>_head)._release()


def abandon(contexts):
    """Forgets, without a driver call, every event made in one of
    ``contexts`` (CUcontext values as ints), which a reset is about to
    destroy: they refuse use afterwards."""
    cdef Event ev
    _primaries.clear()
    wanted = {int(c) for c in contexts}
    for ev in _live():
        if ev._ctx in wanted:
            ev._lose()


def live_count():
    """Events alive and open (for tests and diagnostics)."""
    return len(_live())
