"""Streams and events.

A :class:`Stream` either owns its ``CUstream`` (made by cubind, destroyed by
:meth:`Stream.close`, ``with``, or when collected) or wraps one it does not own
(a CuPy, PyTorch or cuda.core stream, a raw handle, a device's default
stream), keeping the foreign object alive and never destroying it. Both speak
``__cuda_stream__``, so other libraries take ours as readily as we take theirs.
"""

import operator

from cubind._core import lifetime as _lifetime
from cubind._core.context import Device, current_context, ensure_context
from cubind._core.driver import initialized as _cuda
from cubind._core.errors import CUDAError, check
from cubind._core.handles import current as _current
from cubind._core.handles import current_stream, stream_handle

__all__ = ["Stream", "Event", "current_stream"]

_NOT_READY = 600  # CUDA_ERROR_NOT_READY
_STREAM_NON_BLOCKING = 0x1
_EVENT_DISABLE_TIMING = 0x2
_EVENT_BLOCKING_SYNC = 0x1
_EVENT_INTERPROCESS = 0x4
_UINT_MAX = 2**32 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


_LOST = "{0}: its context was destroyed by Device.reset(); make a new {0}"


def _destroy_stream(handle):
    try:
        _cuda().cuStreamDestroy(handle)
    except Exception:  # a finalizer has no caller to tell; at exit the driver may be gone
        pass


def _destroy_event(handle):
    try:
        _cuda().cuEventDestroy(handle)
    except Exception:  # as above
        pass


def _ready(result, call):
    """True/False from a query's status (NOT_READY is an answer, not an error)."""
    err = result[0]
    if err == 0:
        return True
    if err == _NOT_READY:
        return False
    raise CUDAError(err, call)


class Stream:
    """A CUDA stream.

    ``Stream()`` creates one in the current context (device 0's primary
    context where none is current): ``non_blocking=True`` (or ``flags``) for
    a stream that does not synchronize with the legacy default stream,
    ``priority`` (lower is higher priority; see
    ``cuCtxGetStreamPriorityRange``). ``Stream(device=1)`` creates it in
    device 1's primary context. ``Stream.from_handle(obj)`` wraps a stream made
    elsewhere without owning it.
    """

    __slots__ = ("_raw", "_handle", "_owner", "_finalizer", "_device", "__weakref__")

    def __init__(self, *, non_blocking=False, priority=None, flags=None, device=None):
        # Every argument is checked before the driver is asked for anything.
        flags = 0 if flags is None else _flag(flags, "flags", 0, _UINT_MAX)
        if non_blocking:
            flags = _STREAM_NON_BLOCKING
        priority = 0 if priority is None else _flag(priority, "priority", _INT_MIN, _INT_MAX)
        if device is not None:
            device = Device(device)
        cuda = _cuda()
        if device is not None:
            with device:
                handle = check(cuda.cuStreamCreateWithPriority(flags, priority), "cuStreamCreateWithPriority")
                context = current_context()
        else:
            ensure_context()
            handle = check(cuda.cuStreamCreateWithPriority(flags, priority), "cuStreamCreateWithPriority")
            context = current_context()
        self._set(handle, None, device)
        self._finalizer = _lifetime.track(self, context, _destroy_stream, handle)

    def _set(self, handle, owner, device):
        self._handle = handle
        self._raw = int(handle)
        self._owner = owner
        self._device = device
        self._finalizer = None

    @classmethod
    def from_handle(cls, stream, device=None):
        """Wraps a stream cubind does not own: anything ``stream`` arguments
        take (a ``CUstream``, an int, an object with ``__cuda_stream__``, a
        CuPy or PyTorch stream). The object is kept alive while this wrapper is;
        the stream is never destroyed by cubind."""
        if isinstance(stream, Stream):
            return stream
        raw = stream_handle(stream, "stream")
        device = Device(device) if device is not None else None
        self = cls.__new__(cls)
        self._set(_cuda().CUstream(raw), stream, device)
        return self

    @classmethod
    def _default_for(cls, device):
        self = cls.__new__(cls)
        self._set(_cuda().CUstream(0), None, device)
        return self

    # -- identity and protocols ----------------------------------------------

    @property
    def handle(self):
        """The ``cuda.CUstream`` for the 1:1 functions."""
        self._check_open()
        return self._handle

    def __cuda_stream__(self):
        """``(0, handle)``: the stream protocol of cuda.core, which CuPy,
        PyTorch and cubind read."""
        self._check_open()
        return (0, self._raw)

    def __int__(self):
        self._check_open()
        return self._raw

    def _check_open(self):
        if self._raw is None:
            raise ValueError(_LOST.format("stream") if self._owner is _LOST else "stream: the stream is closed")

    def _context_lost(self):
        self._raw = None
        self._owner = _LOST

    @property
    def closed(self):
        """Whether :meth:`close` ended the stream (it then refuses use)."""
        return self._raw is None

    @property
    def owned(self):
        """Whether cubind made this stream (and destroys it)."""
        return self._finalizer is not None

    @property
    def device(self):
        """The :class:`Device` of the stream's context."""
        if self._device is None:
            self._device = Device(int(check(_cuda().cuStreamGetDevice(self._handle), "cuStreamGetDevice")))
        return self._device

    @property
    def priority(self):
        """The stream's priority (lower numbers are higher priority), as the driver reports it."""
        return int(self._call("cuStreamGetPriority"))

    @property
    def flags(self):
        """The stream's creation flags (``CU_STREAM_NON_BLOCKING`` or 0), as the driver reports them."""
        return int(self._call("cuStreamGetFlags"))

    def __eq__(self, other):
        return isinstance(other, Stream) and other._raw == self._raw

    def __hash__(self):
        return hash((Stream, self._raw))

    def __repr__(self):
        if self._raw is None:
            return "<cubind.Stream (closed)>"
        kind = "owned" if self.owned else "default" if self._raw == 0 else "borrowed"
        return f"<cubind.Stream 0x{self._raw:x} ({kind})>"

    # -- operations -----------------------------------------------------------

    def _call(self, name, *args):
        self._check_open()
        fn = getattr(_cuda(), name)
        if self._raw in (0, 1, 2) and self._device is not None:
            # The NULL/legacy/per-thread handles mean "of the current context":
            # use the device's own.
            with self._device:
                return check(fn(self._handle, *args), name)
        return check(fn(self._handle, *args), name)

    def synchronize(self):
        """Waits until all work queued on the stream has finished."""
        self._call("cuStreamSynchronize")

    def query(self):
        """True when all work queued on the stream has finished."""
        self._check_open()
        if self._raw in (0, 1, 2) and self._device is not None:
            with self._device:
                return _ready(_cuda().cuStreamQuery(self._handle), "cuStreamQuery")
        return _ready(_cuda().cuStreamQuery(self._handle), "cuStreamQuery")

    def wait(self, event_or_stream):
        """Makes later work on this stream wait for ``event_or_stream``: an
        :class:`Event`, or any stream (its work queued so far)."""
        if isinstance(event_or_stream, Event):
            self._call("cuStreamWaitEvent", event_or_stream.handle, 0)
            return
        try:
            other = Stream.from_handle(event_or_stream)
        except TypeError:
            raise TypeError(f"event_or_stream: expected a cubind.Event or a stream, "
                            f"not {type(event_or_stream).__name__}") from None
        marker = Event(timing=False)
        marker.record(other)
        self._call("cuStreamWaitEvent", marker.handle, 0)
        marker.close()  # the driver keeps the event until the wait is resolved

    def record(self, event=None):
        """Records ``event`` (a new timing :class:`Event` when None) on this
        stream; returns it."""
        if event is None:
            event = Event()
        elif not isinstance(event, Event):
            raise TypeError(f"event: expected a cubind.Event or None, not {type(event).__name__}")
        event.record(self)
        return event

    def close(self):
        """Destroys the stream now if cubind owns it (idempotent); a closed
        stream refuses every use with ValueError instead of handing the driver
        a dead handle."""
        if self._finalizer is not None:
            self._finalizer()
            self._raw = None

    def __enter__(self):
        """Makes the stream this thread's current one for the block: the
        layer's calls given no stream (launches, copies, allocations) use it,
        as under CuPy's ``with stream:``. Blocks nest; the stream stays open."""
        self._check_open()
        _current.push(self)
        return self

    def __exit__(self, *exc):
        _current.pop(self)
        return False


class Event:
    """A CUDA event. ``timing=True`` (the default) lets :meth:`elapsed_time`
    and ``end - start`` measure between two events, in milliseconds;
    ``blocking_sync`` makes :meth:`synchronize` sleep instead of spin."""

    __slots__ = ("_handle", "_raw", "_finalizer", "_timing", "__weakref__")

    def __init__(self, *, timing=True, blocking_sync=False, interprocess=False):
        flags = (0 if timing else _EVENT_DISABLE_TIMING) | (_EVENT_BLOCKING_SYNC if blocking_sync else 0)
        if interprocess:
            flags |= _EVENT_INTERPROCESS | _EVENT_DISABLE_TIMING
        ensure_context()
        handle = check(_cuda().cuEventCreate(flags), "cuEventCreate")
        self._handle = handle
        self._raw = int(handle)
        self._timing = bool(timing) and not interprocess
        self._finalizer = _lifetime.track(self, current_context(), _destroy_event, handle)

    @property
    def handle(self):
        """The ``cuda.CUevent`` for the 1:1 functions."""
        self._check_open()
        return self._handle

    def _check_open(self):
        if self._raw is None:
            raise ValueError(_LOST.format("event") if self._timing is None else "event: the event is closed")

    def _context_lost(self):
        self._raw = None
        self._timing = None

    @property
    def timing(self):
        """Whether the event records time (:meth:`elapsed_time` needs it at both ends)."""
        return bool(self._timing)

    def record(self, stream=None):
        """Records the event on ``stream`` (any stream; None: the default
        stream of the current context); returns the event."""
        self._check_open()
        raw = int(stream) if isinstance(stream, Stream) else stream_handle(stream, "stream")
        if raw in (0, 1, 2) and isinstance(stream, Stream) and stream._device is not None:
            with stream._device:
                check(_cuda().cuEventRecord(self._handle, raw), "cuEventRecord")
        else:
            check(_cuda().cuEventRecord(self._handle, raw), "cuEventRecord")
        return self

    def synchronize(self):
        """Waits until the work before the event's record has finished."""
        self._check_open()
        check(_cuda().cuEventSynchronize(self._handle), "cuEventSynchronize")

    def query(self):
        """True when the work before the event's record has finished."""
        self._check_open()
        return _ready(_cuda().cuEventQuery(self._handle), "cuEventQuery")

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (both recorded, both with timing)."""
        if not isinstance(end, Event):
            raise TypeError(f"end: expected a cubind.Event, not {type(end).__name__}")
        for which, ev in (("start", self), ("end", end)):
            if ev._raw is None:
                raise ValueError(f"{which}: the event is closed")
            if not ev._timing:
                raise ValueError(f"{which}: the event was created with timing=False")
        return float(check(_cuda().cuEventElapsedTime(self._handle, end._handle), "cuEventElapsedTime"))

    def __sub__(self, start):
        """``end - start``: milliseconds between two events."""
        if not isinstance(start, Event):
            return NotImplemented
        return start.elapsed_time(self)

    def close(self):
        """Destroys the event now (idempotent); a closed event refuses every use."""
        self._finalizer()
        self._raw = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __eq__(self, other):
        return isinstance(other, Event) and other._raw == self._raw

    def __hash__(self):
        return hash((Event, self._raw))

    def __repr__(self):
        return "<cubind.Event (closed)>" if self._raw is None else f"<cubind.Event 0x{self._raw:x}>"


def _flag(value, param, low, high):
    """An int argument within the C type the driver takes it as."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{param}: expected an int, not {type(value).__name__}") from None
    if not low <= value <= high:
        raise OverflowError(f"{param}: {value} is out of range ({low} to {high})")
    return value


Device._make_default_stream = Stream._default_for  # type: ignore[assignment]
