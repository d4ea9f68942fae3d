"""Messages: entities carrying named components (tensors, timestamps, any
object), as GXF's messages are. A message is filled by its producer before
it is published and only read afterwards (by every receiver it reaches)."""

from dataclasses import dataclass

import numpy as np

import cubind

from .component import new_id

STORAGES = ("host", "pinned", "device")
# GXF's MemoryStorageType names: kSystem is malloc'd memory, kHost pinned memory.
GXF_STORAGES = {"kSystem": "host", "kHost": "pinned", "kDevice": "device", "system": "host"}


def storage_name(value, where="storage"):
    name = GXF_STORAGES.get(value, value)
    if name not in STORAGES:
        raise ValueError(f"{where}: {value!r} is not a storage; one of {', '.join(STORAGES)} "
                         f"(or GXF's {', '.join(GXF_STORAGES)})")
    return name


_DTYPES: dict = {}  # what numpy made of a dtype-like seen before (np.float32, "f4"): 1 us a conversion


def _as_dtype(like):
    try:
        return _DTYPES[like]
    except KeyError:
        dtype = np.dtype(like)
        if len(_DTYPES) < 256:
            _DTYPES[like] = dtype
        return dtype
    except TypeError:  # unhashable (a structured dtype's field list)
        return np.dtype(like)


@dataclass(frozen=True)
class TensorDescription:
    """Shape, dtype, strides (bytes; None is C-contiguous) and storage of a
    tensor, as GXF's ``TensorDescription``; an allocator makes a tensor from one."""

    name: str
    storage: str
    shape: tuple
    dtype: np.dtype
    strides: tuple | None = None

    def __post_init__(self):
        if self.storage not in STORAGES:
            object.__setattr__(self, "storage", storage_name(self.storage, f"{self.name}: storage"))
        shape = self.shape
        # A tuple of ints (what allocate() is mostly given) is taken as it is:
        # numpy's normalisation was a third of making a device tensor.
        if type(shape) is not tuple or not all(type(n) is int for n in shape):
            shape = () if type(shape) is tuple and not shape else tuple(int(n) for n in np.atleast_1d(shape))
            object.__setattr__(self, "shape", shape)
        if not isinstance(self.dtype, np.dtype):
            object.__setattr__(self, "dtype", _as_dtype(self.dtype))
        if any(n < 0 for n in shape):
            raise ValueError(f"{self.name}: shape {shape} has a negative extent")
        if self.strides is not None:
            strides = tuple(int(s) for s in self.strides)
            if len(strides) != len(self.shape):
                raise ValueError(f"{self.name}: strides {strides} do not match shape {self.shape}")
            object.__setattr__(self, "strides", strides)

    @property
    def bytes_per_element(self):
        return self.dtype.itemsize

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self):
        """Bytes spanned by the elements (the allocation a strided layout needs)."""
        if self.size == 0:
            return 0
        if self.strides is None:
            return self.size * self.dtype.itemsize
        return sum((n - 1) * abs(s) for n, s in zip(self.shape, self.strides)) + self.dtype.itemsize


def _is_cubind_array(obj):
    return isinstance(obj, cubind.Array)


def as_tensor_data(obj):
    """``obj`` as a numpy array (host) or a ``cubind.Array`` (device), without
    a copy: a cubind array or numpy array as it is; another library's device
    array through ``__cuda_array_interface__`` or DLPack; host memory through
    DLPack, the array interface or the buffer protocol."""
    if isinstance(obj, np.ndarray) or _is_cubind_array(obj):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return cubind.asarray(obj)
    if hasattr(obj, "__dlpack_device__"):
        kind = obj.__dlpack_device__()[0]
        if kind == 1:  # kDLCPU
            return np.from_dlpack(obj)
        return cubind.from_dlpack(obj)
    return np.asarray(obj)


class Tensor:
    """A tensor component: ``data`` (a numpy array or a ``cubind.Array``) and
    its ``description``. It passes its data on through numpy's array interface,
    ``__cuda_array_interface__`` and DLPack, so CuPy, PyTorch and numpy take it
    without a copy (``cupy.asarray(t)``, ``torch.from_dlpack(t)``, ``np.asarray(t)``)."""

    __slots__ = ("name", "data", "storage")

    def __init__(self, name, data, storage=None):
        self.name = name
        self.data = data = as_tensor_data(data)
        device = not isinstance(data, np.ndarray)  # as_tensor_data's answer is numpy's or cubind's
        self.storage = "device" if device else storage_name(storage or "host", f"{name}: storage")
        if device != (self.storage == "device"):
            raise ValueError(f"{name}: a {'device' if device else 'host'} array cannot have storage "
                             f"{self.storage!r}")

    @classmethod
    def _of(cls, name, data, storage):
        """A tensor of ``data`` as it is: a ``cubind.Array`` with storage
        "device", or a numpy array with "host" or "pinned" (the caller
        made it so: a received message's, one per tensor, skips the checks)."""
        self = cls.__new__(cls)
        self.name, self.data, self.storage = name, data, storage
        return self

    @property
    def description(self):
        d = self.data
        contiguous = d.flags.c_contiguous if isinstance(d, np.ndarray) else d.c_contiguous
        strides = None if contiguous else d.strides
        return TensorDescription(self.name, self.storage, d.shape, d.dtype, strides)

    @property
    def is_device(self):
        return self.storage == "device"

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    strides = property(lambda self: self.data.strides)

    def host(self):
        """A numpy array with the data: the data itself on the host, else a
        copy from the device (waits for it)."""
        return self.data.get() if self.is_device else self.data

    def __repr__(self):
        return f"<Tensor {self.name} {self.storage} {self.dtype}{list(self.shape)}>"

    def __array__(self, dtype=None, copy=None):
        if self.is_device:
            raise TypeError(f"tensor {self.name!r} is on the device: use .host() (a copy) or a GPU library")
        return self.data if dtype is None else self.data.astype(dtype, copy=False)

    @property
    def __array_interface__(self):
        if self.is_device:
            raise AttributeError("__array_interface__")
        return self.data.__array_interface__

    @property
    def __cuda_array_interface__(self):
        if not self.is_device:
            raise AttributeError("__cuda_array_interface__")
        return self.data.__cuda_array_interface__

    def __dlpack__(self, *args, **kwargs):
        return self.data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()


@dataclass
class Timestamp:
    """GXF's ``Timestamp``: when the data was acquired and when the message
    was published (nanoseconds of the graph's clock; publishing fills
    ``pubtime`` where it is None)."""

    acqtime: int | None = None
    pubtime: int | None = None


class Message:
    """An entity of named components: ``add_tensor``, ``add_timestamp``,
    ``add`` (any object); read by name with ``tensor``, ``timestamp``, ``get``."""

    __slots__ = ("eid", "_components", "ready_event", "__weakref__")

    def __init__(self):
        self.eid = new_id()
        self._components = {}
        self.ready_event = None  # recorded at publish when the message carries device tensors

    @classmethod
    def _of(cls, components):
        """A message of ``components`` (a dict, kept as it is), made as
        ``Message()`` and its ``add`` calls would without their calls: a
        receiver's (recvpath) checked the names itself, one per message."""
        self = cls.__new__(cls)
        self.eid, self._components, self.ready_event = new_id(), components, None
        return self

    def add(self, name, value):
        if not isinstance(name, str) or not name:
            raise TypeError(f"name: a component needs a non-empty str name, got {name!r}")
        if name in self._components:
            raise ValueError(f"name: the message already has a component {name!r}")
        self._components[name] = value
        return value

    def add_tensor(self, name, data, storage=None):
        """``data`` (numpy, ``cubind.Array``, CuPy, PyTorch, ...) as the tensor ``name``, without a copy."""
        return self.add(name, data if isinstance(data, Tensor) and data.name == name else Tensor(name, data, storage))

    def add_timestamp(self, acqtime=None, pubtime=None, name="timestamp"):
        return self.add(name, Timestamp(acqtime, pubtime))

    def get(self, name, default=KeyError):
        if default is not KeyError:  # a miss without an exception: publish asks every message for its timestamp
            return self._components.get(name, default)
        try:
            return self._components[name]
        except KeyError:
            raise KeyError(f"the message has no component {name!r}; it has "
                           f"{', '.join(map(repr, self._components)) or 'none'}") from None

    def tensor(self, name):
        value = self.get(name)
        if not isinstance(value, Tensor):
            raise TypeError(f"component {name!r} is a {type(value).__name__}, not a Tensor")
        return value

    def tensors(self):
        """The tensors by name, in the order they were added."""
        return {k: v for k, v in self._components.items() if isinstance(v, Tensor)}

    def timestamp(self, name="timestamp"):
        return self._components.get(name)

    def replace(self, name, value):
        """Used by a receiver that copied a tensor to its entity's device."""
        self._components[name] = value

    def copy(self):
        """A new message with the same components (not copies of them)."""
        other = Message()
        other._components = dict(self._components)
        other.ready_event = self.ready_event
        return other

    def has_device_tensors(self):
        return any(isinstance(v, Tensor) and v.is_device for v in self._components.values())

    def names(self):
        return list(self._components)

    def __contains__(self, name):
        return name in self._components

    def __len__(self):
        return len(self._components)

    def __iter__(self):
        return iter(self._components.items())

    def __repr__(self):
        return f"<Message {self.eid}: {', '.join(self._components) or 'empty'}>"
