"""Devices and their primary contexts.

The layer works in primary contexts only, as the runtime API and the array
libraries it exchanges memory with do: a context cubind makes current is the
device's primary context, retained once per process and released at exit, so
a CuPy or PyTorch array on the same device lives in the same context as ours.
A context the user made current (their own ``cuCtxCreate``, another library's)
is respected: :func:`ensure_context` only acts where none is current.
"""

import operator
import os
import threading

from cubind._core import driver
from cubind._core import lifetime as _lifetime
from cubind._core.enums import enum_member
from cubind._core.errors import CUDAError, check

__all__ = ["Device", "ensure_context", "current_device"]

_ATTRIBUTE_PREFIX = "CU_DEVICE_ATTRIBUTE_"
_NOT_INITIALIZED = 3  # CUDA_ERROR_NOT_INITIALIZED
_NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE
_INT_MAX = 2**31 - 1  # cuDeviceGet's ordinal is a C int

_lock = threading.Lock()
_primary: dict = {}  # ordinal -> retained primary CUcontext


def ensure_context():
    """The ordinal of the device whose context is current, making device 0's
    primary context current first where none is.

    One driver call when a context is current (two the first time, for
    ``cuInit``): the array helpers and launches call it on every entry.
    """
    cuda = driver.module()
    err, ctx = cuda.cuCtxGetCurrent()
    if err == _NOT_INITIALIZED:
        driver.initialized()
        err, ctx = cuda.cuCtxGetCurrent()
    if err != 0:
        raise CUDAError(err, "cuCtxGetCurrent")
    if ctx is None or int(ctx) == 0:
        check(cuda.cuCtxSetCurrent(_primary_context(0)), "cuCtxSetCurrent")
        return 0
    return int(check(cuda.cuCtxGetDevice(), "cuCtxGetDevice"))


def current_device():
    """The :class:`Device` whose context is current (device 0's primary
    context made current where none is)."""
    return Device(ensure_context())


def _primary_context(ordinal):
    """Device ``ordinal``'s primary context, retained on first use; released
    when the interpreter exits, after the memory, streams, events and modules
    made in it (cubind._core.lifetime)."""
    ctx = _primary.get(ordinal)
    if ctx is not None:
        return ctx
    cuda = driver.initialized()
    with _lock:
        ctx = _primary.get(ordinal)
        if ctx is None:
            dev = check(cuda.cuDeviceGet(ordinal), "cuDeviceGet")
            ctx = check(cuda.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
            _lifetime.retained_primary(ordinal, dev)
            _primary[ordinal] = ctx
    return ctx


def _ordinal(value):
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


def _device_count():
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


def current_context():
    """The current CUcontext as an int (0 where none is): what the layer's
    objects record as theirs, for Device.reset()."""
    cuda = driver.module()
    err, ctx = cuda.cuCtxGetCurrent()
    return int(ctx or 0) if err == 0 else 0


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

    _instances: dict = {}

    def __new__(cls, ordinal=None):
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
    def count():
        """How many CUDA devices there are: 0 where there is no driver library
        (``libcuda.so.1`` not found) or the driver finds no device
        (``CUDA_ERROR_NO_DEVICE``), as ``torch.cuda.device_count()``. Any other
        failure raises: a driver that fails otherwise, or a
        ``CUBIND_CUDA_LIBRARY`` that names no loadable library."""
        from _cubind.loader import LibraryNotFoundError  # type: ignore[import-not-found]  # compiled, no stub

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
    def ordinal(self):
        """The device's ordinal (``cuDeviceGet``'s argument)."""
        return self._ordinal

    @property
    def handle(self):
        """The ``cuda.CUdevice`` for the 1:1 functions."""
        return self._handle

    def __int__(self):
        return self._ordinal

    def __index__(self):
        return self._ordinal

    def __eq__(self, other):
        return isinstance(other, Device) and other._ordinal == self._ordinal

    def __hash__(self):
        return hash((Device, self._ordinal))

    def __repr__(self):
        try:
            return f"<cubind.Device {self._ordinal}: {self.name} ({self.arch})>"
        except Exception:  # a repr must not fail because the driver did
            return f"<cubind.Device {self._ordinal}>"

    # -- properties -----------------------------------------------------------

    @property
    def name(self):
        """The device's name (``cuDeviceGetName``)."""
        if "name" not in self._cache:
            raw = check(driver.initialized().cuDeviceGetName(256, self._handle), "cuDeviceGetName")
            self._cache["name"] = raw.split(b"\0", 1)[0].decode(errors="replace")
        return self._cache["name"]

    @property
    def uuid(self):
        """The device's 16-byte UUID (``cuDeviceGetUuid``)."""
        return check(driver.initialized().cuDeviceGetUuid(self._handle), "cuDeviceGetUuid").bytes

    @property
    def compute_capability(self):
        """``(major, minor)``."""
        if "cc" not in self._cache:
            self._cache["cc"] = (self.attribute("COMPUTE_CAPABILITY_MAJOR"),
                                 self.attribute("COMPUTE_CAPABILITY_MINOR"))
        return self._cache["cc"]

    @property
    def arch(self):
        """The real architecture NVRTC names the device by: ``"sm_90"``."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def multiprocessor_count(self):
        """Number of streaming multiprocessors."""
        return self.attribute("MULTIPROCESSOR_COUNT")

    @property
    def total_memory(self):
        """Bytes of device memory (``cuDeviceTotalMem``)."""
        return int(check(driver.initialized().cuDeviceTotalMem(self._handle), "cuDeviceTotalMem"))

    def attribute(self, attribute):
        """Any ``CUdevice_attribute``: the member, its value, or its name with or
        without the prefix, any case (``"max_threads_per_block"``,
        ``"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"``)."""
        member = _attribute_enum(attribute)
        return int(check(driver.initialized().cuDeviceGetAttribute(member, self._handle), "cuDeviceGetAttribute"))

    def mem_info(self):
        """``(free, total)`` bytes of device memory, read in the device's context."""
        with self:
            free, total = check(driver.initialized().cuMemGetInfo(), "cuMemGetInfo")
        return int(free), int(total)

    # -- context --------------------------------------------------------------

    @property
    def context(self):
        """The device's primary context (``cuda.CUcontext``), retained on first use."""
        return _primary_context(self._ordinal)

    def set_current(self):
        """Makes the device's primary context current in this thread (replacing
        whatever context was current)."""
        check(driver.initialized().cuCtxSetCurrent(_primary_context(self._ordinal)), "cuCtxSetCurrent")

    def __enter__(self):
        check(driver.initialized().cuCtxPushCurrent(_primary_context(self._ordinal)), "cuCtxPushCurrent")
        return self

    def __exit__(self, *exc):
        # Popping restores the context current before __enter__, whatever the
        # block made current meanwhile (set_current replaces the top only).
        check(driver.initialized().cuCtxPopCurrent(), "cuCtxPopCurrent")
        return False

    def synchronize(self):
        """Waits for all work on the device (in its primary context)."""
        with self:
            check(driver.initialized().cuCtxSynchronize(), "cuCtxSynchronize")

    def reset(self):
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
        with _lock:
            old = _primary.pop(self._ordinal, None)
        was_current = old is not None and current_context() == int(old)
        if old is not None:
            _lifetime.reset_contexts({int(old)})
        check(cuda.cuDevicePrimaryCtxReset(self._handle), "cuDevicePrimaryCtxReset")
        if old is not None:
            # Our retain outlives the reset (the driver says so); give it back
            # and retain afresh, so the handle we hand out is the new context's.
            if _lifetime.released_primary(self._ordinal):
                check(cuda.cuDevicePrimaryCtxRelease(self._handle), "cuDevicePrimaryCtxRelease")
            new = _primary_context(self._ordinal)
            if was_current:
                check(cuda.cuCtxSetCurrent(new), "cuCtxSetCurrent")

    # Installed by cubind._core.stream, which imports this module (a Stream
    # knows its Device); cubind._core's __init__ imports it, so it is always set.
    _make_default_stream = None

    @property
    def default_stream(self):
        """The device's default stream (the NULL stream of its primary context;
        ``CUBIND_DEFAULT_STREAM=per-thread`` makes it the per-thread one)."""
        if self._default_stream is None:
            self._default_stream = Device._make_default_stream(self)
        return self._default_stream
