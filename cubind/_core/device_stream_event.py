"""Devices and their primary contexts, streams and events: one module, named
for the three it holds, since each needs another (a device has its default
stream, a stream its device, ``Stream.record`` makes an ``Event``). The
``Event`` class itself is compiled, in ``event.pyx`` (it says why), and the
contexts' bookkeeping is in ``context.py``, both below this module; their
names are this module's too.

The layer works in primary contexts only, as the runtime API and the array
libraries it exchanges memory with do: a context cubind makes current is the
device's primary context, retained once per process and released at exit, so
a CuPy or PyTorch array on the same device lives in the same context as ours.
A context the user made current (their own ``cuCtxCreate``, another library's)
is respected: :func:`ensure_context` only acts where none is current.
"""

from __future__ import annotations

import operator
import os
from typing import TYPE_CHECKING

from cubind._core import allocations as _allocations
from cubind._core import context as _context
from cubind._core import driver
from cubind._core import lifetime as _lifetime
from cubind._core.context import current_context, ensure_context
from cubind._core.context import primary_context as _primary_context
from cubind._core.driver import initialized as _cuda
from cubind._core.enums import enum_member
from cubind._core.errors import CUDAError, check
from cubind._core.event import Event
from cubind._core.handles import current as _current
from cubind._core.handles import int_streams as _int_streams
from cubind._core.handles import open_blocks, stream_handle

if TYPE_CHECKING:
    from typing import Any, Literal, Protocol, SupportsIndex, TypeAlias

    import cuda

    class _SupportsCudaStream(Protocol):
        """The stream protocol of cuda.core: ``(version, handle)``."""
        def __cuda_stream__(self) -> tuple[int, int]: ...

    class _TorchStreamLike(Protocol):
        @property
        def cuda_stream(self) -> int: ...

    class _CuPyStreamLike(Protocol):
        @property
        def ptr(self) -> int: ...

    # Any ``stream=`` argument: a cubind.Stream, a cuda.CUstream or
    # cudart.cudaStream_t (both have __index__), an int handle, an object with
    # __cuda_stream__ (cuda.core), a PyTorch stream (.cuda_stream), a CuPy stream
    # (.ptr), or None for the default stream.
    _StreamLike: TypeAlias = "Stream | _SupportsCudaStream | _TorchStreamLike | _CuPyStreamLike | SupportsIndex | None"
    _Device: TypeAlias = "Device | SupportsIndex"

__all__ = ["Device", "ensure_context", "current_device", "Stream", "Event", "current_stream"]

_ATTRIBUTE_PREFIX = "CU_DEVICE_ATTRIBUTE_"
_NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE
_INT_MAX = 2**31 - 1  # cuDeviceGet's ordinal is a C int

def current_device() -> Device:
    """The :class:`Device` whose context is current (device 0's primary
    context made current where none is)."""
    return Device(ensure_context())


def _ordinal(value: SupportsIndex) -> int:
    """``value`` as a device ordinal ``cuDeviceGet`` can take, checked
    without the driver (whether that device exists is the driver's to say)."""
    try:
        ordinal = operator.index(value)
    except TypeError:
        raise TypeError(f"device: expected a device ordinal (int), a Device or None, "
                        f"not {type(value).__name__}") from None
    if ordinal < 0:
        raise ValueError(f"device: ordinal {ordinal} is negative")
    if ordinal > _INT_MAX:
        raise OverflowError(f"device: ordinal {ordinal} does not fit cuDeviceGet's int")
    return ordinal


def _device_count() -> int:
    """The driver's device count (0 for ``CUDA_ERROR_NO_DEVICE``); a missing
    driver library raises the loader's error, which :class:`Device` passes on
    (a user asking for a device is told the driver is missing, not that there
    are 0 devices)."""
    err = driver.try_init()
    if err == _NO_DEVICE:
        return 0
    if err != 0:
        raise CUDAError(err, "cuInit")
    return int(check(driver.module().cuDeviceGetCount(), "cuDeviceGetCount"))


def _attribute_enum(attribute):
    """A ``CUdevice_attribute`` from a member, an int, or a name with or without
    the ``CU_DEVICE_ATTRIBUTE_`` prefix (any case)."""
    return enum_member(driver.module().CUdevice_attribute, _ATTRIBUTE_PREFIX, attribute, "attribute")


class Device:
    """A CUDA device and its primary context.

    ``Device(n)`` is the same object each time for the same ordinal;
    ``Device()`` is the device whose context is current (device 0 where none
    is). Properties read the device without making its context current;
    :meth:`set_current`, ``with device:`` and :meth:`synchronize` use its
    primary context, retained once and released when the interpreter exits.
    """

    _instances: dict[int, Device] = {}
    # Set in __new__ (no __init__): declared here for the type checker only.
    _ordinal: int
    _handle: cuda.CUdevice
    _default_stream: Stream | None
    _cache: dict[str, Any]

    def __new__(cls, ordinal: Device | SupportsIndex | None = None) -> Device:
        if isinstance(ordinal, Device):
            return ordinal
        if ordinal is None:
            ordinal = ensure_context()
        elif type(ordinal) is not int:
            ordinal = _ordinal(ordinal)
        self = cls._instances.get(ordinal)
        if self is not None:  # a device made before: its ordinal was checked then
            return self
        _ordinal(ordinal)
        count = _device_count()
        if not 0 <= ordinal < count:
            raise ValueError(f"device: ordinal {ordinal} is out of range ({count} device"
                             f"{'' if count == 1 else 's'} present)")
        self = super().__new__(cls)
        self._ordinal = ordinal
        self._handle = check(driver.initialized().cuDeviceGet(ordinal), "cuDeviceGet")
        self._default_stream = None
        self._cache = {}
        return cls._instances.setdefault(ordinal, self)

    @staticmethod
    def count() -> int:
        """How many CUDA devices there are: 0 where there is no driver library
        (``libcuda.so.1`` not found) or the driver finds no device
        (``CUDA_ERROR_NO_DEVICE``), as ``torch.cuda.device_count()``. Any other
        failure raises: a driver that fails otherwise, or a
        ``CUBIND_CUDA_LIBRARY`` that names no loadable library."""
        from _cubind.loader import LibraryNotFoundError

        try:
            return _device_count()
        except LibraryNotFoundError:
            # The variable is the user saying where the driver is: a wrong
            # path is a mistake to report, not the absence of a driver.
            if os.environ.get("CUBIND_CUDA_LIBRARY"):
                raise
            return 0

    # -- identity -------------------------------------------------------------

    @property
    def ordinal(self) -> int:
        """The device's ordinal (``cuDeviceGet``'s argument)."""
        return self._ordinal

    @property
    def handle(self) -> cuda.CUdevice:
        """The ``cuda.CUdevice`` for the 1:1 functions."""
        return self._handle

    def __int__(self) -> int:
        return self._ordinal

    def __index__(self) -> int:
        return self._ordinal

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other._ordinal == self._ordinal

    def __hash__(self) -> int:
        return hash((Device, self._ordinal))

    def __repr__(self):
        try:
            return f"<cubind.Device {self._ordinal}: {self.name} ({self.arch})>"
        except Exception:  # a repr must not fail because the driver did
            return f"<cubind.Device {self._ordinal}>"

    # -- properties -----------------------------------------------------------

    @property
    def name(self) -> str:
        """The device's name (``cuDeviceGetName``)."""
        if "name" not in self._cache:
            raw = check(driver.initialized().cuDeviceGetName(256, self._handle), "cuDeviceGetName")
            self._cache["name"] = raw.split(b"\0", 1)[0].decode(errors="replace")
        return self._cache["name"]

    @property
    def uuid(self) -> bytes:
        """The device's 16-byte UUID (``cuDeviceGetUuid``)."""
        return check(driver.initialized().cuDeviceGetUuid(self._handle), "cuDeviceGetUuid").bytes

    @property
    def compute_capability(self) -> tuple[int, int]:
        """``(major, minor)``."""
        if "cc" not in self._cache:
            self._cache["cc"] = (self.attribute("COMPUTE_CAPABILITY_MAJOR"),
                                 self.attribute("COMPUTE_CAPABILITY_MINOR"))
        return self._cache["cc"]

    @property
    def arch(self) -> str:
        """The real architecture NVRTC names the device by: ``"sm_90"``."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def multiprocessor_count(self) -> int:
        """Number of streaming multiprocessors."""
        return self.attribute("MULTIPROCESSOR_COUNT")

    @property
    def total_memory(self) -> int:
        """Bytes of device memory (``cuDeviceTotalMem``)."""
        return int(check(driver.initialized().cuDeviceTotalMem(self._handle), "cuDeviceTotalMem"))

    def attribute(self, attribute: cuda.CUdevice_attribute | SupportsIndex | str) -> int:
        """Any ``CUdevice_attribute``: the member, its value, or its name with or
        without the prefix, any case (``"max_threads_per_block"``,
        ``"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"``)."""
        member = _attribute_enum(attribute)
        return int(check(driver.initialized().cuDeviceGetAttribute(member, self._handle), "cuDeviceGetAttribute"))

    def mem_info(self) -> tuple[int, int]:
        """``(free, total)`` bytes of device memory, read in the device's context."""
        with self:
            free, total = check(driver.initialized().cuMemGetInfo(), "cuMemGetInfo")
        return int(free), int(total)

    # -- context --------------------------------------------------------------

    @property
    def context(self) -> cuda.CUcontext:
        """The device's primary context (``cuda.CUcontext``), retained on first use."""
        return _primary_context(self._ordinal)

    def set_current(self) -> None:
        """Makes the device's primary context current in this thread (replacing
        whatever context was current)."""
        check(driver.initialized().cuCtxSetCurrent(_primary_context(self._ordinal)), "cuCtxSetCurrent")

    def __enter__(self) -> Device:
        check(driver.initialized().cuCtxPushCurrent(_primary_context(self._ordinal)), "cuCtxPushCurrent")
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        # Popping restores the context current before __enter__, whatever the
        # block made current meanwhile (set_current replaces the top only).
        check(driver.initialized().cuCtxPopCurrent(), "cuCtxPopCurrent")
        return False

    def synchronize(self) -> None:
        """Waits for all work on the device (in its primary context)."""
        with self:
            check(driver.initialized().cuCtxSynchronize(), "cuCtxSynchronize")

    def reset(self) -> None:
        """Destroys the device's primary context and everything in it
        (``cuDevicePrimaryCtxReset``) and retains a new one: the device starts
        afresh in this process after an error that is not sticky.

        It does not recover from a sticky error (``CUDAError.sticky``: an
        illegal address in a kernel, a device-side assert...): CUDA keeps
        those for the life of the process, and on driver 580 the new context
        is refused with the same error, which ``reset()`` raises. After one,
        end the process; run work that may fault in a subprocess (e.g.
        ``multiprocessing`` with the 'spawn' start method: a forked child
        inherits the parent's CUDA state) and start a new one when it fails.

        Every array, stream and event of cubind in that context is invalid
        afterwards and refuses use with an error; loaded modules are unloaded
        (a module reloads on its next use; kernels got from it before refuse
        use: call ``get_kernel`` again). Other libraries' objects in the
        context (CuPy, PyTorch) are destroyed too: they must not be used
        after. A new primary context is retained at once (and made current
        where the old one was)."""
        cuda = driver.initialized()
        old = _context.forget_primary(self._ordinal)
        was_current = old is not None and current_context() == int(old)
        if old is not None:
            _lifetime.reset_contexts({int(old)})
        check(cuda.cuDevicePrimaryCtxReset(self._handle), "cuDevicePrimaryCtxReset")
        if old is not None:
            # Our retain outlives the reset (the driver says so); give it back
            # and retain afresh, so the handle we hand out is the new context's.
            if _context.released_primary(self._ordinal):
                check(cuda.cuDevicePrimaryCtxRelease(self._handle), "cuDevicePrimaryCtxRelease")
            new = _primary_context(self._ordinal)
            if was_current:
                check(cuda.cuCtxSetCurrent(new), "cuCtxSetCurrent")

    @property
    def default_stream(self) -> Stream:
        """The device's default stream (the NULL stream of its primary context;
        ``CUBIND_DEFAULT_STREAM=per-thread`` makes it the per-thread one)."""
        if self._default_stream is None:
            self._default_stream = Stream._default_for(self)
        return self._default_stream


# -- streams and events ------------------------------------------------------------
#
# Streams and events.
#
# A :class:`Stream` either owns its ``CUstream`` (made by cubind, destroyed by
# :meth:`Stream.close`, ``with``, or when collected) or wraps one it does not own
# (a CuPy, PyTorch or cuda.core stream, a raw handle, a device's default
# stream), keeping the foreign object alive and never destroying it. Both speak
# ``__cuda_stream__``, so other libraries take ours as readily as we take theirs.

_NOT_READY = 600  # CUDA_ERROR_NOT_READY
_STREAM_NON_BLOCKING = 0x1
_UINT_MAX = 2**32 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


_LOST = _context.LOST


def _destroy_stream(handle):
    # Deferred while memory is still ordered on the stream: in a reference
    # cycle the collector runs this before the memory's own release.
    _allocations.destroy_stream(int(handle), _destroy_stream_now, handle)


def _destroy_stream_now(handle):
    try:
        _cuda().cuStreamDestroy(handle)
    except Exception:  # a finalizer has no caller to tell; at exit the driver may be gone
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

    def __init__(self, *, non_blocking: bool = False, priority: SupportsIndex | None = None,
                 flags: SupportsIndex | None = None, device: _Device | None = None) -> None:
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
    def from_handle(cls, stream: _StreamLike, device: _Device | None = None) -> Stream:
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
    def handle(self) -> cuda.CUstream:
        """The ``cuda.CUstream`` for the 1:1 functions."""
        self._check_open()
        return self._handle

    def __cuda_stream__(self) -> tuple[int, int]:
        """``(0, handle)``: the stream protocol of cuda.core, which CuPy,
        PyTorch and cubind read."""
        self._check_open()
        return (0, self._raw)

    def __int__(self) -> int:
        self._check_open()
        return self._raw

    def _check_open(self):
        if self._raw is None:
            raise ValueError(_LOST.format("stream") if self._owner is _LOST else "stream: the stream is closed")

    def _context_lost(self):
        self._raw = None
        self._owner = _LOST

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ended the stream (it then refuses use)."""
        return self._raw is None

    @property
    def owned(self) -> bool:
        """Whether cubind made this stream (and destroys it)."""
        return self._finalizer is not None

    @property
    def device(self) -> Device:
        """The :class:`Device` of the stream's context."""
        if self._device is None:
            self._device = Device(int(check(_cuda().cuStreamGetDevice(self._handle), "cuStreamGetDevice")))
        return self._device

    @property
    def priority(self) -> int:
        """The stream's priority (lower numbers are higher priority), as the driver reports it."""
        return int(self._call("cuStreamGetPriority"))

    @property
    def flags(self) -> int:
        """The stream's creation flags (``CU_STREAM_NON_BLOCKING`` or 0), as the driver reports them."""
        return int(self._call("cuStreamGetFlags"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other._raw == self._raw

    def __hash__(self) -> int:
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

    def synchronize(self) -> None:
        """Waits until all work queued on the stream has finished."""
        self._call("cuStreamSynchronize")

    @property
    def capturing(self) -> bool:
        """Whether work queued on the stream is being captured into a CUDA
        graph now (``cubind.CUDAGraph.capture``; a capture a forbidden call
        invalidated counts until it ends), so that code can refuse what
        capture forbids (a synchronisation, reading results) before trying."""
        return int(self._call("cuStreamIsCapturing")) != 0

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        self._check_open()
        if self._raw in (0, 1, 2) and self._device is not None:
            with self._device:
                return _ready(_cuda().cuStreamQuery(self._handle), "cuStreamQuery")
        return _ready(_cuda().cuStreamQuery(self._handle), "cuStreamQuery")

    def wait(self, event_or_stream: Event | _StreamLike) -> None:
        """Makes later work on this stream wait for ``event_or_stream``: an
        :class:`Event`, or any stream (its work queued so far)."""
        if isinstance(event_or_stream, Event):
            if self._raw is not None and self._raw > 2:  # not a per-context handle: no device to make current
                check(_cuda().cuStreamWaitEvent(self._raw, event_or_stream.handle, 0), "cuStreamWaitEvent")
                return
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

    def record(self, event: Event | None = None) -> Event:
        """Records ``event`` (a new timing :class:`Event` when None) on this
        stream; returns it."""
        if event is None:
            event = Event()
        elif not isinstance(event, Event):
            raise TypeError(f"event: expected a cubind.Event or None, not {type(event).__name__}")
        event.record(self)
        return event

    def close(self) -> None:
        """Destroys the stream now if cubind owns it (idempotent); a closed
        stream refuses every use with ValueError instead of handing the driver
        a dead handle."""
        if self._finalizer is not None:
            self._finalizer()
            self._raw = None

    def __enter__(self) -> Stream:
        """Makes the stream this thread's current one for the block: the
        layer's calls given no stream (launches, copies, allocations) use it,
        as under CuPy's ``with stream:``. Blocks nest; the stream stays open."""
        if self._raw is None:
            self._check_open()
        _current.push(self)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _current.pop(self)
        return False


_int_streams.add(Stream)


def current_stream() -> Stream | None:
    """The stream of the innermost ``with stream:`` block of this thread, or
    None (the layer's calls then use the default stream, or an array's own).
    Here, beside Stream, not in handles.py: its type is this module's class."""
    return _current.top if open_blocks else None


def _flag(value, param, low, high):
    """An int argument within the C type the driver takes it as."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{param}: expected an int, not {type(value).__name__}") from None
    if not low <= value <= high:
        raise OverflowError(f"{param}: {value} is out of range ({low} to {high})")
    return value

