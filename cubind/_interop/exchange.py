"""Zero-copy exchange with other array libraries: ``__cuda_array_interface__``
(version 3) and DLPack, each way.

Both protocols carry a stream so that neither side reads memory the other is
still writing. Exporting, cubind names the stream its array's work is queued
on (the CAI ``stream`` key) or makes the consumer's stream wait for it (the
``stream`` argument of ``__dlpack__``); importing, it makes its own stream
wait for the producer's.
"""

import os

import numpy as np

from cubind._core import pending as _pending
from cubind._memory.dtypes import as_dtype, dlpack_code, from_dlpack_code
from cubind._memory.layout import c_strides, normalize_shape
from cubind._memory.memory import ForeignMemory

__all__ = ["default_stream_token", "export_cai", "import_cai", "export_dlpack", "import_dlpack", "dlpack_device",
           "is_device_object"]

# DLPack device types (dlpack.h): memory a CUDA kernel can address.
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_CUDA_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED)
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
                 10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}
_LEGACY, _PER_THREAD = 1, 2


def default_stream_token():
    """How the protocols name cubind's default stream: 1 (legacy) or 2 (per
    thread, under ``CUBIND_DEFAULT_STREAM=per-thread``); never the ambiguous 0."""
    return _PER_THREAD if os.environ.get("CUBIND_DEFAULT_STREAM") == "per-thread" else _LEGACY


def _token(handle):
    return default_stream_token() if handle == 0 else handle


def is_device_object(obj):
    """Whether ``obj`` offers its memory as GPU memory (CAI, or DLPack on a
    CUDA device)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or not hasattr(obj, "__dlpack__"):
        return False
    try:
        return int(device()[0]) in _CUDA_DEVICE_TYPES
    except Exception:  # a producer whose device query fails is not one we can import
        return False


# -- __cuda_array_interface__ ----------------------------------------------------------

def export_cai(array):
    """Version 3 of the CUDA Array Interface for ``array``; ``stream`` is the
    stream its work is queued on, for the consumer to wait for."""
    c_contiguous = array.c_contiguous
    return {
        "shape": array.shape,
        "typestr": array.dtype.str,
        "data": (array.ptr, array.readonly),
        "version": 3,
        "strides": None if c_contiguous else array.strides,
        "descr": [("", array.dtype.str)],
        "stream": _token(array.stream_handle),
    }


def import_cai(obj, stream):
    """``(memory, shape, strides, dtype, readonly)`` of an object with
    ``__cuda_array_interface__``, after making ``stream`` (a raw handle) wait
    for the producer's stream."""
    cai = obj.__cuda_array_interface__
    if not isinstance(cai, dict):
        raise TypeError(f"obj: __cuda_array_interface__ is a {type(cai).__name__}, not a dict")
    try:
        version, shape, typestr, data = cai.get("version", 0), cai["shape"], cai["typestr"], cai["data"]
    except KeyError as exc:
        raise ValueError(f"obj: __cuda_array_interface__ lacks the required key {exc}") from None
    if version > 3:
        raise ValueError(f"obj: __cuda_array_interface__ version {version} is newer than cubind reads (3)")
    if cai.get("mask") is not None:
        raise ValueError("obj: masked arrays (__cuda_array_interface__ 'mask') are not supported")
    shape = normalize_shape(shape, "__cuda_array_interface__['shape']")
    dtype = as_dtype(np.dtype(typestr), "__cuda_array_interface__['typestr']")
    ptr, readonly = data
    strides = cai.get("strides")
    strides = c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"obj: __cuda_array_interface__ strides {strides} do not match shape {shape}")
    producer = cai.get("stream") if version >= 3 else None
    if producer is not None:
        if producer == 0:
            raise ValueError("obj: __cuda_array_interface__ 'stream' is 0, which the protocol forbids "
                             "(1: legacy default stream, 2: per-thread default stream)")
        if int(producer) != _token(stream):
            _pending.order(stream, int(producer))
    return ForeignMemory(ptr or 0, obj), shape, strides, dtype, bool(readonly)


# -- DLPack -----------------------------------------------------------------------------

def dlpack_device(array):
    """``(kDLCUDA, device ordinal)``, or the device type the memory was
    imported with."""
    return getattr(array.memory, "dlpack_type", None) or KDL_CUDA, array.device_ordinal


class _Export:
    """The owner a DLPack capsule keeps: the array (so its memory) and one
    count on the memory, so that ``free()`` waits for the consumer."""

    __slots__ = ("array", "memory")

    def __init__(self, array):
        self.array = array
        self.memory = array.memory
        self.memory.export()

    def __del__(self):
        self.memory.unexport()


def export_dlpack(array, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of ``array`` (``__dlpack__``): versioned (DLPack 1.x)
    where ``max_version`` allows, after making the consumer's ``stream`` wait
    for the array's (``None``: the legacy default stream, -1: no wait)."""
    from cubind._interop.dlpack import DLPACK_MINOR, FLAG_IS_COPIED, FLAG_READ_ONLY, make_capsule

    if dl_device is not None and tuple(dl_device) != dlpack_device(array):
        raise BufferError(f"dl_device: {tuple(dl_device)} is not the array's device {dlpack_device(array)}; "
                          f"cubind does not copy between devices in __dlpack__")
    flags = FLAG_READ_ONLY if array.readonly else 0
    if copy:
        array = array.copy()
        flags = FLAG_IS_COPIED
    if stream is None:
        stream = _LEGACY
    elif not isinstance(stream, int):
        raise TypeError(f"stream: expected an int stream handle (or None, -1), not {type(stream).__name__}")
    if stream != -1 and stream != _token(array.stream_handle):
        _pending.order(stream, array.stream_handle)
    itemsize = array.itemsize
    if any(s % itemsize for s in array.strides):
        raise BufferError(f"the array's strides {array.strides} are not multiples of its item size {itemsize}; "
                          f"DLPack counts strides in elements")
    device_type, device_id = dlpack_device(array)
    code, bits = dlpack_code(array.dtype)
    versioned = max_version is not None and int(max_version[0]) >= 1
    minor = min(DLPACK_MINOR, int(max_version[1])) if versioned and int(max_version[0]) == 1 else DLPACK_MINOR
    return make_capsule(_Export(array), array.ptr, device_type, device_id, array.shape,
                        tuple(s // itemsize for s in array.strides), code, bits, versioned=versioned, minor=minor,
                        flags=flags)


def import_dlpack(obj, stream):
    """``(memory, shape, strides, dtype, readonly)`` from an object with
    ``__dlpack__`` on a CUDA device (or a DLPack capsule), the producer having
    ordered its work before ``stream`` (a raw handle)."""
    from cubind._interop.dlpack import FLAG_READ_ONLY, consume_capsule

    if hasattr(obj, "__dlpack__"):
        device_type = int(obj.__dlpack_device__()[0]) if hasattr(obj, "__dlpack_device__") else KDL_CUDA
        _check_device_type(device_type)
        token = _token(stream)
        try:
            capsule = obj.__dlpack__(stream=token, max_version=(1, 1))
        except TypeError:  # a producer older than DLPack 1.0 takes no max_version
            capsule = obj.__dlpack__(stream=token)
    elif type(obj).__name__ == "PyCapsule":
        capsule = obj
    else:
        raise TypeError(f"obj: expected an object with __dlpack__ (a PyTorch tensor, a CuPy or JAX array) or a "
                        f"DLPack capsule, not {type(obj).__name__}")
    owner, info = consume_capsule(capsule)
    _check_device_type(info["device_type"])
    dtype = from_dlpack_code(info["code"], info["bits"], info["lanes"])
    shape = tuple(info["shape"])
    itemsize = dtype.itemsize
    strides = c_strides(shape, itemsize) if info["strides"] is None else tuple(s * itemsize for s in info["strides"])
    memory = ForeignMemory(info["data"], owner, device=info["device_id"], on_release=owner.release,
                           dlpack_type=info["device_type"])
    return memory, shape, strides, dtype, bool(info["flags"] & FLAG_READ_ONLY)


def _check_device_type(device_type):
    if device_type not in _CUDA_DEVICE_TYPES:
        name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
        hint = " (host memory: copy it with cubind.to_gpu)" if device_type == KDL_CPU else ""
        raise BufferError(f"obj: its memory is on a {name} device, not a CUDA device{hint}")
