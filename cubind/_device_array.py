"""``DeviceArray``: the typed low-level form of a host buffer and its device
copy, as light control layers for existing kernels offer it
(``DeviceArray_int64(A)``, ``allocate()``, ``to_device()``, ``to_host()``,
``device_data()``).

It is a thin pairing of a host numpy array (the caller's buffer, shared, not
copied) and a :class:`cubind.Array` of the same shape and dtype: the device
side *is* that array (:attr:`DeviceArray.array`), so everything the array
does (views, interop, ``astype``) is one attribute away, and
``DeviceArray.wrap(array)`` goes the other way. Unlike those layers, dtypes
are checked and errors raise.
"""

import numpy as np

from ._dtypes import as_dtype
from ._handles import stream_handle

__all__ = ["DeviceArray"]


class DeviceArray:
    """A host buffer and its device copy.

    ``DeviceArray(host, dtype=None, stream=None)``: ``host`` is a numpy array
    (used in place: :meth:`to_host` writes into it) or any buffer (read as
    ``dtype``). ``DeviceArray[numpy.float32]`` (or ``DeviceArray.typed("float32")``)
    is the class fixed to one dtype (``DeviceArray_float32``): its host buffers
    must be of that dtype.
    """

    fixed_dtype = None
    _typed = {}

    def __class_getitem__(cls, dtype):
        return cls.typed(dtype)

    @classmethod
    def typed(cls, dtype):
        """The subclass whose arrays all have ``dtype``."""
        dtype = as_dtype(dtype)
        sub = cls._typed.get(dtype)
        if sub is None:
            sub = type(f"DeviceArray_{dtype.name}", (DeviceArray,), {"fixed_dtype": dtype, "__slots__": ()})
            sub.__module__ = cls.__module__
            sub = cls._typed.setdefault(dtype, sub)  # racing threads all get the first one made
        return sub

    __slots__ = ("_host", "_array", "_stream")

    def __init__(self, host, dtype=None, stream=None):
        fixed = type(self).fixed_dtype
        if fixed is not None and dtype is not None and as_dtype(dtype) != fixed:
            raise TypeError(f"dtype: {type(self).__name__} holds {fixed}, not {as_dtype(dtype)}")
        want = fixed if fixed is not None else (None if dtype is None else as_dtype(dtype))
        self._host = _host_buffer(host, want)
        as_dtype(self._host.dtype, "host")
        stream_handle(stream, "stream")  # refused now rather than at the first transfer
        self._array = None
        self._stream = stream

    @classmethod
    def wrap(cls, array, host=None):
        """The DeviceArray whose device side is ``array`` (a cubind.Array),
        with ``host`` (default: a new numpy array of its shape) as host side."""
        from ._array import Array

        if not isinstance(array, Array):
            raise TypeError(f"array: expected a cubind.Array, not {type(array).__name__}")
        self = cls(np.empty(array.shape, array.dtype) if host is None else host, stream=array.stream)
        if self._host.shape != array.shape or self._host.dtype != array.dtype:
            raise ValueError(f"host: {self._host.dtype}{list(self._host.shape)} does not match the array's "
                             f"{array.dtype}{list(array.shape)}")
        self._array = array
        return self

    # -- the two sides ----------------------------------------------------------------

    def host_data(self):
        """The host buffer (a numpy array sharing the caller's memory)."""
        return self._host

    def allocate(self):
        """Allocates the device side (once; again after :meth:`free`)."""
        if self._array is None or self._array.freed:
            from ._array import empty

            self._array = empty(self._host.shape, self._host.dtype, stream=self._stream)
        return self

    @property
    def allocated(self):
        """Whether the device side exists (allocated and not freed)."""
        return self._array is not None and not self._array.freed

    @property
    def array(self):
        """The device side: a :class:`cubind.Array` (allocated first if needed)."""
        return self.allocate()._array

    def to_device(self, stream=None):
        """Copies the host buffer to the device (allocating first if needed)."""
        self.allocate()._array.set(self._host, stream=stream)
        return self

    def to_host(self, stream=None):
        """Copies the device side into the host buffer."""
        if not self.allocated:
            raise ValueError("to_host: nothing on the device (call allocate() and to_device() first)")
        if not self._host.flags.writeable:
            raise ValueError("to_host: the host buffer is read-only")
        self._array.get(out=self._host, stream=stream)
        return self

    def device_data(self):
        """The device address (an int) of the device side."""
        if not self.allocated:
            raise ValueError("device_data: nothing on the device (call allocate() first)")
        return self._array.ptr

    @property
    def ptr(self):
        """The device address (as :meth:`device_data`)."""
        return self.device_data()

    def free(self):
        """Releases the device side now (the host buffer stays)."""
        if self._array is not None:
            self._array.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    # -- what it is ---------------------------------------------------------------------

    @property
    def shape(self):
        """The host array's shape, which the device copy shares."""
        return self._host.shape

    @property
    def dtype(self):
        """The element type (the class's fixed dtype)."""
        return self._host.dtype

    @property
    def size(self):
        """Number of elements."""
        return self._host.size

    @property
    def nbytes(self):
        """Bytes of the elements."""
        return self._host.nbytes

    def __len__(self):
        return len(self._host)

    def __repr__(self):
        state = "allocated" if self.allocated else "not allocated"
        return f"<cubind.{type(self).__name__} {self.dtype}{list(self.shape)}, {state}>"

    @property
    def __cuda_array_interface__(self):
        """The device copy's ``__cuda_array_interface__`` (v3)."""
        return self.array.__cuda_array_interface__

    def __dlpack__(self, **kwargs):
        """Exports the device copy through DLPack (as :meth:`cubind.Array.__dlpack__`)."""
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """``(kDLCUDA, device ordinal)`` of the device copy."""
        return self.array.__dlpack_device__()


def _host_buffer(host, dtype):
    """``host`` as a numpy array sharing its memory: numpy arrays as they are
    (their dtype must be ``dtype`` where one is fixed), other buffers read as
    ``dtype``."""
    if isinstance(host, np.ndarray):
        if dtype is not None and host.dtype != dtype:
            raise TypeError(f"host: the buffer holds {host.dtype}, not {dtype} (the types must match: "
                            f"to_host writes into the buffer)")
        return host
    try:
        view = memoryview(host)
    except TypeError:
        raise TypeError(f"host: expected a numpy array or a buffer, not {type(host).__name__}") from None
    if dtype is None:
        return np.asarray(view)
    if view.nbytes % dtype.itemsize:
        raise ValueError(f"host: {view.nbytes} bytes is not a whole number of {dtype} items")
    return np.frombuffer(view.cast("B"), dtype=dtype)
