"""Page-locked (pinned) host memory: the layer's one allocation of it.

``PinnedMemory`` is ``cuMemHostAlloc`` in the current context, tracked by
``cubind._core.lifetime`` like streams and events: freed when the last
reference goes, and at interpreter exit before the primary contexts are
released, so a leak checker (``compute-sanitizer --leak-check full``) finds
none of it left. ``empty_pinned`` is a numpy array over such memory; the
array (and every view of it) keeps the memory alive.
"""

from __future__ import annotations

import ctypes
import operator
from typing import TYPE_CHECKING

import numpy as np

from cubind._core import driver, lifetime
from cubind._core.device_stream_event import current_context, ensure_context
from cubind._core.errors import check

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, SupportsIndex, TypeAlias

    import numpy.typing as npt

    _ShapeLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex]

__all__ = ["PinnedMemory", "empty_pinned"]


def _free_host(context, ptr):
    """cuMemFreeHost with the allocating context current (a finalizer: never
    raises; at exit the driver frees what is left with the context)."""
    cuda = driver.module()
    try:
        if cuda.cuCtxPushCurrent(context)[0] != 0:
            return
        try:
            cuda.cuMemFreeHost(ptr)
        finally:
            cuda.cuCtxPopCurrent()
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def _nbytes(nbytes: SupportsIndex) -> int:
    try:
        n = operator.index(nbytes)
    except TypeError:
        raise TypeError(f"nbytes: expected an int, got {type(nbytes).__name__}") from None
    if n < 0:
        raise ValueError(f"nbytes: {n} is negative")
    return n


class PinnedMemory:
    """``nbytes`` of page-locked host memory, allocated in the current context
    (device 0's primary context where none is current) and usable from every
    context (``CU_MEMHOSTALLOC_PORTABLE``). ``mapped=True`` also maps it into
    the device's address space: ``device_ptr`` is where kernels reach it.

    ``ptr`` is the host address. ``free()`` releases it now; otherwise it goes
    when this object is collected, or at interpreter exit. Numpy arrays from
    :meth:`asarray` keep this object alive.
    """

    __slots__ = ("_ptr", "_nbytes", "_device_ptr", "_mapped", "_finalizer", "__weakref__")
    # For the type checker: free() and a lost context set the pointers to None.
    _ptr: int | None
    _device_ptr: int | None

    def __init__(self, nbytes: SupportsIndex, *, mapped: bool = False) -> None:
        nbytes = _nbytes(nbytes)
        cuda = driver.module()
        flags = cuda.CU_MEMHOSTALLOC_PORTABLE | (cuda.CU_MEMHOSTALLOC_DEVICEMAP if mapped else 0)
        ensure_context()
        context = current_context()
        # A zero-byte request still gets a distinct address (numpy views need one).
        ptr = int(check(cuda.cuMemHostAlloc(max(nbytes, 1), flags), "cuMemHostAlloc"))
        device_ptr = None
        if mapped:
            try:
                device_ptr = int(check(cuda.cuMemHostGetDevicePointer(ptr, 0), "cuMemHostGetDevicePointer"))
            except BaseException:
                cuda.cuMemFreeHost(ptr)
                raise
        self._ptr, self._nbytes, self._mapped, self._device_ptr = ptr, nbytes, bool(mapped), device_ptr
        self._finalizer = lifetime.track(self, int(context), _free_host, context, ptr)

    @property
    def ptr(self) -> int:
        """The host address; ``ValueError`` once freed."""
        if self._ptr is None:
            raise ValueError("the pinned memory was freed (PinnedMemory.free() or a Device.reset())")
        return self._ptr

    @property
    def nbytes(self) -> int:
        """The size asked for, in bytes."""
        return self._nbytes

    @property
    def mapped(self) -> bool:
        """Whether the memory is mapped into the device's address space."""
        return self._mapped

    @property
    def device_ptr(self) -> int | None:
        """Where kernels reach the memory (mapped memory; ``None`` otherwise or once freed)."""
        return self._device_ptr

    @property
    def freed(self) -> bool:
        """Whether the memory was freed (``free()``, or its device's reset)."""
        return self._ptr is None

    def free(self) -> None:
        """Frees the memory now (idempotent). Arrays over it must not be used
        afterwards: they would read freed memory."""
        self._ptr = self._device_ptr = None
        self._finalizer()

    def _context_lost(self):
        # Device.reset() destroyed the context, and this memory with it.
        self._ptr = self._device_ptr = None

    def asarray(self, dtype: npt.DTypeLike = np.uint8, shape: _ShapeLike | None = None) -> npt.NDArray[Any]:
        """A numpy array over the memory (C order), keeping it alive. ``shape``
        defaults to as many ``dtype`` elements as fit."""
        dtype = np.dtype(dtype)
        if shape is None:
            shape = (self.nbytes // dtype.itemsize,)
        shape = tuple(shape) if np.iterable(shape) else (shape,)
        # numpy reads each SupportsIndex dimension with __index__; mypy's numpy stubs want ints
        count = int(np.prod(shape, dtype=np.int64))  # type: ignore[arg-type]
        if count * dtype.itemsize > self.nbytes:
            raise ValueError(f"shape: {shape} of {dtype} takes {count * dtype.itemsize} bytes, "
                             f"the pinned memory holds {self.nbytes}")
        raw = (ctypes.c_uint8 * max(self.nbytes, 1)).from_address(self.ptr)
        raw._owner = self  # type: ignore[attr-defined]  # ctypes instances take attributes; the ctypes array is the numpy array's base: it keeps this object alive
        return np.frombuffer(raw, dtype=np.uint8, count=count * dtype.itemsize).view(dtype).reshape(shape)

    def __repr__(self):
        where = "freed" if self._ptr is None else f"0x{self._ptr:x}"
        return f"<PinnedMemory {self.nbytes} bytes at {where}{' (mapped)' if self.mapped else ''}>"


def empty_pinned(shape: _ShapeLike, dtype: npt.DTypeLike = np.float64, *, mapped: bool = False) -> npt.NDArray[Any]:
    """A numpy array in page-locked host memory (as ``cupyx.empty_pinned``):
    copies between it and the device run at full speed and asynchronously.
    The memory goes with the last array over it, or at interpreter exit."""
    dtype = np.dtype(dtype)
    shape = tuple(shape) if np.iterable(shape) else (shape,)
    try:
        count = int(np.prod([operator.index(n) for n in shape], dtype=np.int64))
    except TypeError:
        raise TypeError(f"shape: expected ints, got {shape!r}") from None
    if any(n < 0 for n in shape):  # type: ignore[operator]  # each n passed operator.index just above
        raise ValueError(f"shape: {shape} has a negative dimension")
    return PinnedMemory(count * dtype.itemsize, mapped=mapped).asarray(dtype, shape)
