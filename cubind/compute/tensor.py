"""Tensor: device memory paired with a host mirror, in Kompute's terms.

A tensor is made by :meth:`Manager.tensor`; its data reaches the device only
through a sequence (``OpTensorSyncDevice``), as in Kompute. ``data()`` is a
numpy array over the host memory whose ``.base`` is the tensor itself, so a
view keeps the tensor (and that memory) alive.
"""

from __future__ import annotations

import enum
import logging
import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

import cubind

if TYPE_CHECKING:
    from collections.abc import Sequence as _Seq
    from typing import Any, SupportsIndex, TypeAlias

    import numpy.typing as npt

    from .manager import Manager

    _Number: TypeAlias = int | float | bool | np.number[Any] | np.bool_
    _Values: TypeAlias = _Seq[_Number] | npt.NDArray[Any]
    _Dims: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]

log = logging.getLogger("cubind.compute")



class TensorTypes(enum.Enum):
    """Where a tensor's memory lives (Kompute's ``kp.TensorTypes``)."""

    device = "device"    # device memory + a pinned host mirror, copied by the sync ops
    host = "host"        # pinned host memory mapped into the device: kernels use it directly
    storage = "storage"  # device memory only: no host data, the sync ops refuse it


class Tensor:
    """One tensor of a :class:`Manager` (``mgr.tensor(data)``)."""

    def __init__(self, manager, data, dtype=None, tensor_type=TensorTypes.device):
        if not isinstance(tensor_type, TensorTypes):
            raise TypeError(f"tensor_type: expected a cubind.compute.TensorTypes member, not {tensor_type!r}")
        host = _host_values(data, dtype)
        self._manager = manager
        self._dtype, self._shape, self._size = host.dtype, host.shape, host.size
        self._type = tensor_type
        self._lock = threading.Lock()
        self._destroyed = False
        self._array = None        # device memory (device and storage tensors)
        self._pinned = None       # host memory (device and host tensors)
        self._users = weakref.WeakSet()  # sequences that recorded an op on it
        self._last = None         # (stream handle, event) of the last evaluation using it
        device = manager.device
        with device:
            if tensor_type is not TensorTypes.host:
                self._array = cubind.empty(self._shape, self._dtype)
            if tensor_type is not TensorTypes.storage:
                # The host memory lives as long as this object (numpy views of
                # data() keep it, their base, alive after destroy()), and goes
                # at interpreter exit with the rest of the layer's memory.
                self._pinned = cubind.PinnedMemory(host.nbytes, mapped=tensor_type is TensorTypes.host)
                self._pinned.asarray(self._dtype, self._shape)[...] = host
        log.debug("tensor of %d %s (%s) created", self._size, self._dtype, tensor_type.name)

    # -- what it is ---------------------------------------------------------------

    @property
    def manager(self) -> Manager:
        return self._manager

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def nbytes(self) -> int:
        return self._size * self._dtype.itemsize

    def size(self) -> int:
        """The number of elements (Kompute's ``size()``)."""
        return self._size

    def data_type(self) -> np.dtype[Any]:
        """The numpy dtype (Kompute's name for it)."""
        return self._dtype

    def tensor_type(self) -> TensorTypes:
        return self._type

    def is_init(self) -> bool:
        """False once the tensor or its manager was destroyed."""
        return not self._destroyed

    def __repr__(self):
        state = "destroyed" if self._destroyed else self._type.name
        return f"<cubind.compute.Tensor {self._shape} {self._dtype} ({state})>"

    # -- host data ------------------------------------------------------------------

    def data(self) -> npt.NDArray[Any]:
        """The host data as a numpy array whose ``.base`` is this tensor: after
        an ``OpTensorSyncLocal`` it holds what the device computed."""
        return np.asarray(self)

    @property
    def __array_interface__(self):
        self._check_alive("data")
        if self._pinned is None:
            raise ValueError("data: a storage tensor has no host data (TensorTypes.storage)")
        return {"shape": self._shape, "typestr": self._dtype.str, "data": (self._pinned.ptr, False),
                "strides": None, "version": 3}

    def set_data(self, data: npt.ArrayLike) -> None:
        """Copies ``data`` (same number of elements) into the host data."""
        values = np.asarray(data, dtype=self._dtype)
        if values.size != self._size:
            raise ValueError(f"data: {values.size} elements given, the tensor has {self._size}")
        self.data()[...] = values.reshape(self._shape)

    # -- for ops and sequences -----------------------------------------------------------

    def _check_alive(self, what):
        if self._destroyed:
            raise ValueError(f"{what}: the tensor was destroyed (Tensor.destroy() or Manager.destroy())")

    @property
    def device_ptr(self) -> int:
        """The address kernels and copies use on the device."""
        self._check_alive("tensor")
        if self._array is not None:
            return self._array.ptr
        return self._pinned.device_ptr

    @property
    def host_ptr(self) -> int | None:
        """The host data's address, or None for a storage tensor."""
        self._check_alive("tensor")
        return None if self._pinned is None else self._pinned.ptr

    # -- release -------------------------------------------------------------------

    def destroy(self) -> None:
        """Frees the device memory (after any evaluation still using it); the
        host memory stays while numpy views of ``data()`` exist. Sequences that
        recorded this tensor refuse to evaluate afterwards."""
        with self._lock:
            if self._destroyed:
                return
            users = list(self._users)
        for sequence in users:
            sequence._await_quietly()
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            array, self._array = self._array, None
        if array is not None:
            with self._manager.device:
                array.free()
        for sequence in users:
            sequence._invalidate(f"a tensor it uses was destroyed ({self!r})")
        log.debug("tensor of %d %s destroyed", self._size, self._dtype)


def _host_values(data, dtype):
    """``data`` as a C-contiguous numpy array: float32 where neither ``data``
    (a numpy array) nor ``dtype`` says otherwise, as Kompute's default."""
    if dtype is None and not isinstance(data, np.ndarray):
        dtype = np.float32
    try:
        values = np.ascontiguousarray(data, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"data: cannot make a tensor of {type(data).__name__} ({exc})") from None
    if values.size == 0:
        raise ValueError("data: a tensor needs at least one element")
    if values.dtype.hasobject or values.dtype.fields is not None:
        raise TypeError(f"dtype: {values.dtype} is not a tensor element type")
    return values
