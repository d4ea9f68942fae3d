"""``cubind.Array``: an n-dimensional array in GPU memory.

PyCUDA's ``gpuarray`` in spirit (``to_gpu``, ``get``, ``ptr``, slicing), with
numpy's conventions for shapes, strides (bytes) and the default dtype
(float64), and zero-copy exchange with every array library through
``__cuda_array_interface__`` v3 and DLPack.

Streams: an array belongs to the stream it was made on (``stream=`` of
:func:`empty`, :func:`to_gpu`...; ``None`` is the default stream). Every
operation takes ``stream=``; ``None`` means the array's own stream. Transfers
to and from the host wait for completion unless a stream is passed (then they
are queued, and the host buffer is kept alive until they are done); device
work (``fill``, ``astype``, device-to-device copies) is queued and returns at
once, as a kernel launch does. Work on another stream is ordered after the
array's own with an event, so memory made on one stream may be used on another.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

import numpy as np

from cubind._arrays import copy as _array_copy
from cubind._core import pending as _pending
from cubind._core.device_stream_event import ensure_context
from cubind._core.driver import module as _driver_module
from cubind._core.errors import check
from cubind._core.handles import open_blocks, or_current, stream_handle
from cubind._interop import exchange as _interop
from cubind._launch import launch as _launch
from cubind._memory import layout as _layout
from cubind._memory.dtypes import C_TYPES, as_dtype
from cubind._memory.memory import DeviceMemory, ForeignMemory, copy_contiguous, copy_into

if TYPE_CHECKING:
    import sys
    from collections.abc import Iterable, Iterator, Sequence
    from types import EllipsisType
    from typing import Any, Literal, Protocol, SupportsIndex, TypeAlias

    import numpy.typing as npt

    from cubind._core.device_stream_event import Device, _StreamLike
    from cubind._memory.pinned import _ShapeLike

    if sys.version_info >= (3, 13):
        from types import CapsuleType as _PyCapsule
    else:
        _PyCapsule: TypeAlias = Any  # a PyCapsule (types.CapsuleType from Python 3.13)

    class _SupportsCAI(Protocol):
        """An array exporting ``__cuda_array_interface__`` (CuPy, PyTorch, Numba)."""
        @property
        def __cuda_array_interface__(self) -> dict[str, Any]: ...

    class _SupportsDLPack(Protocol):
        """A DLPack producer (PyTorch, CuPy, JAX; on a CUDA device for cubind)."""
        def __dlpack__(self, *, stream: Any = ...) -> Any: ...
        def __dlpack_device__(self) -> tuple[int, int]: ...

    class _Shaped(Protocol):
        """An array of any library: what ``empty_like`` reads."""
        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def dtype(self) -> np.dtype[Any]: ...

    _DeviceArrayLike: TypeAlias = "Array | _SupportsCAI | _SupportsDLPack"
    # None: the device's current pool; False: cuMemAlloc; else a CUmemoryPool or its handle.
    _PoolLike: TypeAlias = "bool | SupportsIndex | None"
    _IndexItem: TypeAlias = SupportsIndex | slice | EllipsisType | None
    _Index: TypeAlias = _IndexItem | tuple[_IndexItem, ...]
    _Scalar: TypeAlias = bool | int | float | complex | np.generic

__all__ = ["Array", "to_gpu", "empty", "zeros", "empty_like", "zeros_like", "from_dlpack", "asarray"]

_FLOAT64 = np.dtype(np.float64)


class Array(_launch.SlotAddressed):
    """An array in GPU memory: ``shape``, ``dtype``, byte ``strides``, and the
    device address of its first element, ``ptr``.

    ``Array(shape, dtype=numpy.float64, stream=None, pool=None)`` allocates
    (uninitialised, as :func:`empty`). Indexing with ints, slices (any step), ``...`` and
    ``None`` gives views sharing the memory; the memory is freed when the last
    array using it goes, or at :meth:`free` / the end of a ``with`` block,
    after which every view refuses use.
    """

    __slots__ = ("_mem", "_offset", "_shape", "_strides", "_dtype", "_stream", "_sh", "_readonly", "_contiguous",
                 "_size", "__weakref__")

    def __init__(self, shape: _ShapeLike, dtype: npt.DTypeLike = _FLOAT64, stream: _StreamLike = None,
                 pool: _PoolLike = None) -> None:
        stream = or_current(stream)
        shape = _layout.normalize_shape(shape)
        dtype = as_dtype(dtype)
        sh = stream_handle(stream)
        mem = DeviceMemory(_layout.size_of(shape) * dtype.itemsize, stream, pool)
        self._set(mem, 0, shape, _layout.c_strides(shape, dtype.itemsize), dtype, stream, sh, False)
        self._contiguous = True  # C strides: nothing to work out

    def _set(self, mem, offset, shape, strides, dtype, stream, sh, readonly):
        self._mem = mem
        self._offset = offset
        self._shape = shape
        self._strides = strides
        self._dtype = dtype
        self._stream = stream
        self._sh = sh
        self._readonly = readonly
        self._contiguous = None  # worked out on first use: every transfer asks
        self._size = None  # likewise: a codelet graph's transmitter asks nbytes twice a message

    @classmethod
    def _make(cls, mem, offset, shape, strides, dtype, stream, sh, readonly=False):
        self = cls.__new__(cls)
        self._set(mem, offset, shape, strides, dtype, stream, sh, readonly)
        return self

    def _view(self, offset, shape, strides, dtype=None):
        return Array._make(self._mem, offset, shape, strides, dtype or self._dtype, self._stream, self._sh,
                           self._readonly)

    @classmethod
    def from_ptr(cls, ptr: SupportsIndex, shape: _ShapeLike, dtype: npt.DTypeLike = _FLOAT64,
                 strides: Iterable[SupportsIndex] | None = None, owner: object = None, stream: _StreamLike = None,
                 readonly: bool = False, device: SupportsIndex | None = None) -> Array:
        """An array over device memory at ``ptr`` that cubind does not own:
        ``owner`` (any object) is kept alive as long as the array is; the
        memory is never freed by cubind. ``strides`` in bytes (default C
        order); ``device``: the ordinal (default: asked of the driver)."""
        try:
            ptr = operator.index(ptr)
        except TypeError:
            raise TypeError(f"ptr: expected a device address (int, CUdeviceptr), not {type(ptr).__name__}") from None
        shape = _layout.normalize_shape(shape)
        dtype = as_dtype(dtype)
        strides = _strides_arg(strides, shape, dtype)
        if device is not None:
            device = operator.index(device)
        return cls._make(ForeignMemory(ptr, owner, device), 0, shape, strides, dtype, stream, stream_handle(stream),
                         bool(readonly))

    # -- what it is -----------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis (a tuple)."""
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type (a ``numpy.dtype``)."""
        return self._dtype

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between neighbours along each axis (a tuple, as numpy's)."""
        return self._strides

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        if self._size is None:
            self._size = _layout.size_of(self._shape)
        return self._size

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (not of the memory a view lies in)."""
        return self.size * self._dtype.itemsize

    @property
    def c_contiguous(self) -> bool:
        """Whether the elements are in C order with no gaps."""
        if self._contiguous is None:
            self._contiguous = _layout.is_c_contiguous(self._shape, self._strides, self._dtype.itemsize)
        return self._contiguous

    @property
    def readonly(self) -> bool:
        """Whether the producer marked the memory read-only (DLPack, CAI);
        writes through cubind are refused."""
        return self._readonly

    @property
    def ptr(self) -> int:
        """The device address of the first element (an int), for kernels and
        the 1:1 functions. A released array raises ValueError."""
        base = self._mem.ptr
        if base is None:
            raise ValueError(_FREED)
        return base + self._offset

    @property
    def memory(self) -> DeviceMemory | ForeignMemory:
        """The owner of the memory this array and its views share."""
        return self._mem

    @property
    def freed(self) -> bool:
        """Whether the memory was released (by :meth:`free`)."""
        return self._mem.ptr is None

    @property
    def stream(self) -> _StreamLike:
        """The stream the array was made on (``None``: the default stream)."""
        return self._stream

    @property
    def stream_handle(self) -> int:
        """The raw handle of :attr:`stream` (0 for the default stream)."""
        return self._sh

    @property
    def device_ordinal(self) -> int:
        """The ordinal of the device whose memory this is."""
        mem = self._mem
        if mem.device is None:
            mem.device = _device_of(self.ptr)
        return mem.device

    @property
    def device(self) -> Device:
        """The :class:`cubind.Device` whose memory this is."""
        from cubind._core.device_stream_event import Device

        return Device(self.device_ordinal)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    def __repr__(self):
        where = "freed" if self._mem.ptr is None else f"ptr=0x{self._mem.ptr + self._offset:x}"
        stream = "" if self._stream is None else f", stream={self._sh:#x}"
        return f"cubind.Array(shape={self._shape}, dtype={self._dtype}, {where}{stream})"

    if not TYPE_CHECKING:  # declared, it would make an Array pass for host data (numpy.typing.ArrayLike)
        def __array__(self, dtype=None, copy=None):
            # As CuPy: an implicit copy to the host would hide a transfer (and a
            # synchronization) in any numpy call.
            raise TypeError("a cubind.Array is GPU memory: use .get() to copy it to a numpy array")

    def __iter__(self) -> Iterator[Array]:
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    # -- views ------------------------------------------------------------------------

    def __getitem__(self, key: _Index) -> Array:
        self._check_alive()
        offset, shape, strides = _layout.index(self._shape, self._strides, key)
        return self._view(self._offset + offset, shape, strides)

    def __setitem__(self, key: _Index, value: _DeviceArrayLike | npt.ArrayLike) -> None:
        view = self[key]
        if isinstance(value, Array) or _interop.is_device_object(value):
            view.copy_from(value)
        # is_device_object() took the device objects mypy still sees in value's type
        elif np.ndim(value) == 0:  # type: ignore[arg-type]
            view.fill(value)  # type: ignore[arg-type]  # a 0-d value: a scalar or a 0-d array
        else:
            host = np.asarray(value, dtype=view.dtype)
            try:
                host = np.broadcast_to(host, view.shape)
            except ValueError:
                raise ValueError(f"value: shape {host.shape} cannot be broadcast to {view.shape}") from None
            view.set(host)

    def reshape(self, *shape: SupportsIndex | Sequence[SupportsIndex]) -> Array:
        """A view with a new shape (one axis may be -1); the array must be
        C-contiguous (copy it first otherwise)."""
        self._check_alive()
        new_shape = _layout.reshape(self._shape, shape[0] if len(shape) == 1 else shape)
        if not self.c_contiguous:
            raise ValueError(f"reshape needs a C-contiguous array (strides {self._strides} are not); "
                             f"use .copy().reshape(...)")
        return self._view(self._offset, new_shape, _layout.c_strides(new_shape, self.itemsize))

    def ravel(self) -> Array:
        """A 1-D view of a C-contiguous array."""
        return self.reshape(-1)

    def transpose(self, *axes: SupportsIndex | Sequence[SupportsIndex]) -> Array:
        """A view with the axes permuted (reversed when none are given)."""
        self._check_alive()
        shape, strides = _layout.transpose(self._shape, self._strides, axes)
        return self._view(self._offset, shape, strides)

    @property
    def T(self) -> Array:
        """The transposed view (axes reversed), as :meth:`transpose`."""
        return self.transpose()

    def view(self, dtype: npt.DTypeLike) -> Array:
        """The same bytes as ``dtype`` of the same item size."""
        dtype = as_dtype(dtype)
        if dtype.itemsize != self.itemsize:
            raise ValueError(f"dtype: {dtype} has item size {dtype.itemsize}, the array's is {self.itemsize} "
                             f"(views may only reinterpret items of the same size)")
        return self._view(self._offset, self._shape, self._strides, dtype)

    # -- moving data -------------------------------------------------------------------

    def get(self, out: npt.NDArray[Any] | None = None, stream: _StreamLike = None) -> npt.NDArray[Any]:
        """The elements as a numpy array (``out`` where given: same shape and
        dtype). Without ``stream`` the copy is done on return; with one it is
        queued there, and ``out`` (then C-contiguous) is filled when the
        stream gets to it."""
        if stream is None and self._contiguous and self._sh == 0 and not open_blocks:
            # The usual calls, first: what _sync_contiguous, ptr and _check_out would check, inline.
            base = self._mem.ptr
            if base is not None:
                if out is None:
                    host = np.empty(self._shape, self._dtype)
                    copy_contiguous(host, base + self._offset, False)
                elif (type(out) is not np.ndarray or out.dtype is not self._dtype or out.shape != self._shape
                      or not copy_into(out, base + self._offset)):  # not writable C-contiguous: below
                    return self._get(out, stream)
                else:
                    host = out
                if _pending._pending:
                    _pending.sweep()
                return host
        return self._get(out, stream)

    def _get(self, out, stream):
        """get's general path: any stream, layout or ``out``."""
        sync = stream is None
        if out is None:
            host = np.empty(self._shape, self._dtype)
        else:
            host = _check_out(out, self._shape, self._dtype, sync)
        if self._sync_contiguous(sync):  # the usual case: one copy, nothing to order or plan
            copy_contiguous(host, self.ptr, False)
        else:
            op = self._op_stream(stream)
            self._order_before(op)
            _array_copy.to_host(self, host, op, sync)
        if sync and _pending._pending:
            # The copy waited for the work before it: what that work held goes
            # now, not at the next hold (memory of arrays already let go).
            _pending.sweep()
        if out is not None and host is not out:
            out[...] = host
        return out if out is not None else host

    def set(self, host: npt.ArrayLike, stream: _StreamLike = None) -> Array:
        """Copies host data (a numpy array or anything ``numpy.asarray`` takes,
        of this shape) into the array; returns the array. Without ``stream``
        the host buffer may be reused on return; with one the copy is queued."""
        self.copy_from(host, stream)
        return self

    def copy_from(self, src: _DeviceArrayLike | npt.ArrayLike, stream: _StreamLike = None) -> None:
        """Copies ``src`` into this array: host data (numpy, buffer, list), a
        cubind array, or any device array (``__cuda_array_interface__`` or
        DLPack on a CUDA device). Same shape; same dtype for arrays (use
        :meth:`astype` to convert)."""
        self._check_writable()
        if not isinstance(src, np.ndarray) and (isinstance(src, Array) or _interop.is_device_object(src)):
            op = self._op_stream(stream)
            src = src if isinstance(src, Array) else asarray(src, stream=op)
            _check_same(src.shape, src.dtype, self, "src")
            src._check_alive()
            self._order_before(op, src)
            if src._mem is self._mem and _overlap(src, self):
                src = src.copy(stream=op)
            _array_copy.device_to_device(self, src, op)
            self._hold(op, src)
            return
        host = _host_source(src, self._dtype, "src")
        _check_same(host.shape, host.dtype, self, "src")
        if self._sync_contiguous(stream is None) and host.flags.c_contiguous:  # as get's
            copy_contiguous(host, self.ptr, True)
            return
        op = self._op_stream(stream)
        self._order_before(op)
        _array_copy.to_device(self, np.ascontiguousarray(host), op, stream is None)

    def copy_to(self, dst: npt.NDArray[Any] | _DeviceArrayLike, stream: _StreamLike = None) -> None:
        """Copies this array into ``dst``: a numpy array (as ``get(out=dst)``),
        a cubind array or any device array. Same shape and dtype."""
        if isinstance(dst, np.ndarray):
            self.get(out=dst, stream=stream)
        elif isinstance(dst, Array) or _interop.is_device_object(dst):
            target = dst if isinstance(dst, Array) else asarray(dst, stream=self._op_stream(stream))
            target.copy_from(self, stream=stream)
        else:
            raise TypeError(f"dst: expected a numpy array or a device array, not {type(dst).__name__}")

    def copy(self, stream: _StreamLike = None) -> Array:
        """A C-contiguous copy in new memory (on ``stream``, else this array's)."""
        self._check_alive()
        out = empty(self._shape, self._dtype, stream=stream if stream is not None else self._stream)
        out.copy_from(self, stream=stream)
        return out

    def astype(self, dtype: npt.DTypeLike, stream: _StreamLike = None) -> Array:
        """A C-contiguous copy converted to ``dtype`` by the copy kernel, as
        numpy's ``astype`` converts (complex to real keeps the real part)."""
        dtype = as_dtype(dtype)
        self._check_alive()
        out = empty(self._shape, dtype, stream=stream if stream is not None else self._stream)
        op = out._sh
        self._order_before(op)
        _array_copy.device_to_device(out, self, op)
        self._hold(op)
        return out

    def fill(self, value: _Scalar, stream: _StreamLike = None) -> Array:
        """Sets every element to ``value`` (a memset where the element's bytes
        allow, else the fill kernel); returns the array."""
        self._check_writable()
        if np.ndim(value) != 0:
            raise ValueError(f"value: expected a scalar, got an array of shape {np.shape(value)}")
        try:
            scalar = np.asarray(value, dtype=self._dtype)
        except (OverflowError, ValueError, TypeError) as exc:
            raise type(exc)(f"value: {value!r} does not convert to {self._dtype} ({exc})") from None
        op = self._op_stream(stream)
        self._order_before(op)
        _array_copy.fill(self, scalar, op)
        self._hold(op)
        return self

    def item(self) -> Any:
        """The one element of a size-1 array, as a Python scalar (waits for it)."""
        if self.size != 1:
            raise ValueError(f"item() needs an array of size 1, this one has {self.size}")
        return self.get().item()

    # -- release --------------------------------------------------------------------------

    def record_stream(self, stream: _StreamLike) -> None:
        """Says that work queued on ``stream`` uses this array's memory, as
        PyTorch's ``Tensor.record_stream``: memory allocated in a stream's
        order is freed in that order, so without it the memory could be
        handed to a new allocation while ``stream``'s work still reads or
        writes it. The free then also waits for what ``stream`` has queued by
        that time. Nothing is needed (and nothing done) for memory from
        ``cuMemAlloc``, whose free waits for all work, or memory cubind does
        not own (the owning library frees it)."""
        self._check_alive()
        if type(self._mem) is DeviceMemory:
            self._mem.record_stream(stream)

    def free(self) -> None:
        """Releases the memory now, for this array and all its views (which
        then raise ValueError on use); idempotent. Memory a library took
        through DLPack is freed once it lets go."""
        self._mem.release()

    def __enter__(self) -> Array:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.free()
        return False

    # -- interop ---------------------------------------------------------------------------

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """Version 3, with ``stream``: the stream the array's work is queued on
        (1 for the legacy default stream), for the consumer to wait for."""
        self._check_alive()
        return _interop.export_cai(self)

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> _PyCapsule:
        """A DLPack capsule sharing the memory (versioned where ``max_version``
        is 1.x or later), after making the consumer's ``stream`` wait for
        this array's work."""
        self._check_alive()
        return _interop.export_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(2, ordinal)``: DLPack's kDLCUDA and the device."""
        self._check_alive()
        return _interop.dlpack_device(self)

    # -- internals --------------------------------------------------------------------------

    def _check_alive(self):
        if self._mem.ptr is None:
            raise ValueError(_FREED)

    def _check_writable(self):
        self._check_alive()
        if self._readonly:
            raise ValueError("the array is read-only (its producer marked the memory so)")

    def _op_stream(self, stream):
        self._check_alive()
        ensure_context()
        if stream is None:
            stream = or_current(None)  # the innermost `with stream:` block, else the array's own
            if stream is None:
                return self._sh
        return stream_handle(stream)

    def _sync_contiguous(self, sync):
        """Whether a copy to or from the host is one synchronous copy of the
        whole memory on the default stream: no stream given, no ``with
        stream:`` block open, the array's own stream the default one, the
        elements contiguous. (``copy_contiguous`` makes a context current
        where none is, so this asks the driver nothing.)"""
        if not sync or self._sh != 0 or open_blocks:
            return False
        contiguous = self._contiguous
        return self.c_contiguous if contiguous is None else contiguous

    def _order_before(self, op, *others):
        """Orders ``op`` after the work queued on the streams of this array and
        ``others`` where those differ from it."""
        for array in (self, *others):
            if array._sh != op:
                _pending.order(op, array._sh)

    def _hold(self, op, *others):
        """Keeps the memories alive until ``op``'s work is done where a release
        on another stream could overtake it."""
        mems = [a._mem for a in (self, *others) if (a._mem.stream or 0) != op]
        if mems:
            _pending.hold(op, *mems)



_FREED = "the array's memory was released (free() or the end of its 'with' block); it can no longer be used"


def _strides_arg(strides, shape, dtype):
    if strides is None:
        return _layout.c_strides(shape, dtype.itemsize)
    try:
        strides = tuple(int(s) for s in strides)
    except TypeError:
        raise TypeError(f"strides: expected a sequence of ints, not {strides!r}") from None
    if len(strides) != len(shape):
        raise ValueError(f"strides: {len(strides)} strides for {len(shape)} axes")
    return strides


def _device_of(ptr):
    """The ordinal of the device holding ``ptr`` (the current one for NULL)."""
    if not ptr:
        return ensure_context()
    cuda = _driver_module()
    attr = cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    return int(check(cuda.cuPointerGetAttribute(attr, ptr), "cuPointerGetAttribute"))


def _check_same(shape, dtype, array, param):
    if tuple(shape) != array.shape:
        raise ValueError(f"{param}: shape {tuple(shape)} does not match the array's {array.shape}")
    if dtype != array.dtype:
        raise TypeError(f"{param}: dtype {dtype} differs from the array's {array.dtype} (convert with astype)")


def _check_out(out, shape, dtype, sync):
    """``out`` itself where the copy can write it directly, else a
    contiguous buffer to copy from afterwards."""
    if type(out) is np.ndarray and out.shape == shape and out.dtype == dtype:
        flags = out.flags
        if flags.writeable and flags.c_contiguous:  # the usual case, checked at a fraction of the cost below
            return out
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out: expected a numpy array, not {type(out).__name__}")
    _check_same(out.shape, out.dtype, _Shape(shape, dtype), "out")
    if not out.flags.writeable:
        raise ValueError("out: the numpy array is read-only")
    if out.flags.c_contiguous:
        return out
    if not sync:
        raise ValueError("out: must be C-contiguous for a copy queued on a stream")
    return np.empty(shape, dtype)


class _Shape:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _host_source(src, dtype, param):
    """``src`` as a numpy array: arrays as they are (their dtype is checked
    by the caller), other data converted to ``dtype``."""
    if isinstance(src, np.ndarray):
        return src
    try:
        return np.asarray(src, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{param}: cannot copy {type(src).__name__} to a {dtype} array ({exc})") from None


def _overlap(a, b):
    """Whether two views of one memory touch a common byte."""
    a_low, a_high = _layout.extent(a.shape, a.strides, a.itemsize)
    b_low, b_high = _layout.extent(b.shape, b.strides, b.itemsize)
    if a_low == a_high or b_low == b_high:
        return False
    return a._offset + a_low < b._offset + b_high and b._offset + b_low < a._offset + a_high


# -- making arrays ------------------------------------------------------------------------

def empty(shape: _ShapeLike, dtype: npt.DTypeLike = _FLOAT64, stream: _StreamLike = None,
          pool: _PoolLike = None) -> Array:
    """An uninitialised array (``dtype`` defaults to float64, as numpy's),
    allocated in ``stream``'s order (the default stream's where none is
    given) from the device's current memory pool (``cuMemAllocAsync``, freed
    with ``cuMemFreeAsync`` there); from ``pool`` where one is given (a
    ``CUmemoryPool`` or its handle), or with ``cuMemAlloc`` for
    ``pool=False``."""
    return Array(shape, dtype, stream, pool)


def zeros(shape: _ShapeLike, dtype: npt.DTypeLike = _FLOAT64, stream: _StreamLike = None,
          pool: _PoolLike = None) -> Array:
    """An array of zeros (``dtype`` defaults to float64, as numpy's); ``pool`` as :func:`empty`'s."""
    out = Array(shape, dtype, stream, pool)
    out.fill(0)
    return out


def empty_like(array: _Shaped, dtype: npt.DTypeLike | None = None, stream: _StreamLike = None,
               pool: _PoolLike = None) -> Array:
    """An uninitialised C-contiguous array of ``array``'s shape (and dtype)."""
    shape, like = _like(array)
    return Array(shape, like if dtype is None else dtype, stream, pool)


def zeros_like(array: _Shaped, dtype: npt.DTypeLike | None = None, stream: _StreamLike = None,
               pool: _PoolLike = None) -> Array:
    """Zeros of ``array``'s shape (and dtype)."""
    shape, like = _like(array)
    return zeros(shape, like if dtype is None else dtype, stream, pool)


def _like(array):
    try:
        return array.shape, array.dtype
    except AttributeError:
        raise TypeError(f"array: expected an array (with shape and dtype), not {type(array).__name__}") from None


def to_gpu(host: npt.ArrayLike, stream: _StreamLike = None, pool: _PoolLike = None) -> Array:
    """A new array holding a copy of ``host`` (a numpy array or anything
    ``numpy.asarray`` takes), on ``stream`` where given (the copy is then
    queued there, and ``host`` kept alive until it is done); ``pool`` as
    :func:`empty`'s."""
    stream = or_current(stream)
    if stream is None and type(host) is np.ndarray and host.dtype in C_TYPES and host.flags.c_contiguous:
        return _to_gpu_contiguous(host, pool)
    try:
        data = np.asarray(host)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"host: {type(host).__name__} is not array data numpy reads ({exc})") from None
    as_dtype(data.dtype, "host")
    out = Array(data.shape, data.dtype, stream, pool)
    out.set(data, stream=stream)
    return out


def _to_gpu_contiguous(host, pool):
    """:func:`to_gpu`'s common case, a C-contiguous numpy array of a supported
    dtype to the default stream: one allocation and one copy, with none of
    the planning, ordering and checks a copy into an existing array needs
    (each is trivially satisfied by a new array)."""
    mem = DeviceMemory(host.nbytes, None, pool)
    # The copy straight after the allocation: on the H100, Python work between
    # the two made the pair measurably slower (bench/README.md, copies).
    copy_contiguous(host, mem.ptr, True)
    return Array._make(mem, 0, host.shape, _layout.c_strides(host.shape, host.itemsize), host.dtype, None, 0)


def asarray(obj: _DeviceArrayLike | npt.ArrayLike, stream: _StreamLike = None) -> Array:
    """``obj`` as a cubind array: itself for a cubind array, the same memory
    for a device array of another library (``__cuda_array_interface__`` or
    DLPack on a CUDA device), else a copy of host data (as :func:`to_gpu`).
    ``stream`` is the stream the result's work goes on; the producer's
    pending work is ordered before it."""
    if isinstance(obj, Array):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        sh = stream_handle(stream)
        mem, shape, strides, dtype, readonly = _interop.import_cai(obj, sh)
        return Array._make(mem, 0, shape, strides, dtype, stream, sh, readonly)
    if _interop.is_device_object(obj):
        return from_dlpack(obj, stream=stream)
    return to_gpu(obj, stream=stream)  # type: ignore[arg-type]  # the device objects returned above


def from_dlpack(obj: _SupportsDLPack | _PyCapsule, stream: _StreamLike = None) -> Array:
    """An array sharing the memory of ``obj``: any object with ``__dlpack__``
    on a CUDA device (a PyTorch tensor, a CuPy or JAX array), or a DLPack
    capsule. The producer orders its pending work before ``stream`` (the
    stream the result's work goes on; ``None``: the default stream)."""
    sh = stream_handle(stream)
    mem, shape, strides, dtype, readonly = _interop.import_dlpack(obj, sh)
    return Array._make(mem, 0, shape, strides, dtype, stream, sh, readonly)
