"""One kernel argument to the bytes its parameter takes.

The launch path (cubind/_launch/launch.pyx) packs Python floats and ints itself and
comes here for everything else: numpy scalars and ctypes values (their own
bytes, which must be the parameter's size), device arrays of any library
(their device pointer), structs by value, and the errors. Each array type's
way to its pointer is found once and kept in :data:`POINTER_GETTERS`, which
the launch path reads first: for the getters named here (``PTR``, ``DATA_PTR``,
``torch_pointer``, ``cai_pointer``) it reads the pointer as they do, in C,
and calls only the others (``dlpack_pointer`` with the launch's stream).
"""

import ctypes
import math
import operator
import struct

from cubind._core import pending as _pending
from cubind._launch.capsule import dlpack_address
from cubind._launch.params import ANY, BYTES, F32, F64, INT

__all__ = ["convert", "POINTER_GETTERS", "count_error", "describe", "PTR", "DATA_PTR", "torch_pointer",
           "cai_pointer", "cai_stream", "dlpack_pointer", "learn_pointer_getter", "order_producers", "type_name"]

# type -> callable giving a device address; filled as types are first seen.
POINTER_GETTERS: dict = {}

# One object per way, never made anew: the launch path tells them apart by
# identity (a type's entry is then its way to the pointer, no call needed).
PTR = operator.attrgetter("ptr")  # cubind.Array, PyCUDA, cupy.cuda.MemoryPointer
DATA_PTR = operator.attrgetter("data.ptr")  # cupy.ndarray

LEGACY_STREAM = 1  # CU_STREAM_LEGACY: what a launch on stream 0 runs on
NO_STREAM = -1  # DLPack's "no ordering": arguments packed for a graph node
UNSEEN = object()  # convert()'s getter when its caller has not looked the value's type up
_CTYPES_VALUES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
_F32_MAX = 3.4028234663852886e38


def describe(kernel, param):
    return f"{kernel}: parameter {param.index} ({param.text})"


def count_error(kernel, params, got):
    shown = ", ".join(p.text for p in params)
    return TypeError(f"{kernel} takes {len(params)} argument{'' if len(params) == 1 else 's'} "
                     f"({shown}), got {got}")


def type_name(value):
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _explicit_bytes(value):
    """The bytes of a value that says its own C type (numpy scalar, ctypes
    instance), or None."""
    if isinstance(value, _CTYPES_VALUES):
        return ctypes.string_at(ctypes.addressof(value), ctypes.sizeof(value))
    tobytes = getattr(value, "tobytes", None)
    if tobytes is not None and getattr(value, "shape", None) == () and hasattr(value, "dtype") \
            and type(value).__module__ == "numpy":
        return tobytes()  # a numpy scalar (np.float32(1), a structured np.void)
    return None


def _pointer_getter(value):
    """How to get a device address from objects of ``value``'s type, or None
    where they are not device memory."""
    t = type(value)
    try:
        cai = hasattr(value, "__cuda_array_interface__")
    except Exception:  # a property refusing (a PyTorch CPU tensor): not device memory
        cai = False
    if cai or hasattr(t, "__dlpack__"):
        ptr = getattr(value, "ptr", None)
        if ptr is not None and not callable(ptr) and hasattr(ptr, "__index__"):
            return PTR  # cubind.Array, PyCUDA
        data_ptr = getattr(getattr(value, "data", None), "ptr", None)
        if data_ptr is not None and t.__module__.startswith("cupy"):
            return DATA_PTR
        if t.__module__.startswith("torch") and callable(getattr(value, "data_ptr", None)):
            return torch_pointer
        if cai:
            return cai_pointer
        if hasattr(t, "__dlpack_device__") and not hasattr(t, "__array_interface__"):  # not numpy's host arrays
            return dlpack_pointer
    if t.__module__.startswith("cupy") and hasattr(t, "ptr"):  # cupy.cuda.MemoryPointer
        return PTR
    return None


def learn_pointer_getter(value):
    """The way to ``value``'s device address (kept for its type), or None
    where its type is no device array."""
    getter = POINTER_GETTERS.get(type(value))
    if getter is None:
        getter = _pointer_getter(value)
        if getter is not None:
            POINTER_GETTERS[type(value)] = getter
    return getter


def torch_pointer(tensor):
    """A PyTorch tensor's device address: ``data_ptr()`` costs a tenth of
    its ``__cuda_array_interface__``, which builds a dict in Python; a CPU
    tensor is refused as that property refuses it."""
    if not tensor.is_cuda:
        raise TypeError(f"a tensor on {tensor.device} is not CUDA device memory")
    return tensor.data_ptr()


def dlpack_pointer(value, stream=NO_STREAM):
    """The device address of a DLPack producer's memory (an object with
    ``__dlpack__`` and ``__dlpack_device__``, neither a CAI nor one of the
    libraries read directly): its capsule's data plus byte offset, the
    producer having ordered its work before ``stream`` (its DLPack value: 1
    the legacy default stream, 2 the per-thread one, else a handle; -1, no
    ordering: a graph node's arguments, which no stream launches yet). The
    launch path passes its stream; one capsule is made per call."""
    return dlpack_address(value, stream)


def cai_pointer(value):
    """The pointer of ``__cuda_array_interface__``: its "data" tuple's first
    item. The launch path reads an exact dict and tuple in C and comes here
    for anything else, or to say what is wrong."""
    interface = value.__cuda_array_interface__
    try:
        return interface["data"][0]
    except (LookupError, TypeError):  # a KeyError or IndexError would not name the parameter
        raise TypeError('its __cuda_array_interface__ has no "data": (pointer, read-only) tuple') from None


def cai_stream(value):
    """The "stream" of an interface that is not exactly a dict (the launch
    path reads a dict's in C), or None."""
    interface = value.__cuda_array_interface__
    get = getattr(interface, "get", None)
    return get("stream") if callable(get) else None


def order_producers(kernel, params, waits, stream):
    """Makes ``stream`` (the launch's raw handle; 0, the legacy default
    stream) wait for the work queued so far on each stream that an argument's
    ``__cuda_array_interface__`` names, as version 3 of the protocol asks of
    a consumer; ``waits``: [(parameter index, the interface's "stream")].
    1 and 2 are the legacy and per-thread default streams; 0 is refused, as
    the protocol forbids it."""
    launch = stream or LEGACY_STREAM
    ordered = {launch}
    for index, producer in waits:
        if type(producer) is not int:
            try:
                producer = operator.index(producer)
            except TypeError:
                raise TypeError(f"{describe(kernel, params[index])}: its __cuda_array_interface__ 'stream' is "
                                f"a {type(producer).__name__}, not an int stream handle") from None
        if producer == 0:
            raise ValueError(f"{describe(kernel, params[index])}: its __cuda_array_interface__ 'stream' is 0, "
                             f"which the protocol forbids (1: legacy default stream, 2: per-thread default stream)")
        if producer not in ordered:  # one wait per stream, however many arrays name it
            ordered.add(producer)
            _pending.order(stream, producer)


def _int_bytes(kernel, param, number, size, signed):
    bits = 8 * size
    low = -(1 << (bits - 1))
    high = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    if not low <= number <= high:
        raise OverflowError(f"{describe(kernel, param)}: {number} is out of range [{low}, {high}]")
    return (number & ((1 << bits) - 1)).to_bytes(size, "little")


def _float_bytes(kernel, param, number, size):
    number = float(number)
    if size == 4:
        if math.isfinite(number) and abs(number) > _F32_MAX:
            raise OverflowError(f"{describe(kernel, param)}: {number} is out of range for a float32")
        return struct.pack("<f", number)
    return struct.pack("<d", number)


def _host_hint(value):
    if hasattr(type(value), "__array_interface__") or isinstance(value, (bytes, bytearray, memoryview, list, tuple)):
        return " (host memory: copy it to the device first, e.g. cubind.to_gpu)"
    return ""


def convert(kernel, param, value, getter=UNSEEN):
    """``value`` as the ``param.size`` bytes ``param`` takes. TypeError or
    OverflowError name the kernel, the parameter index and its type.
    ``getter``: its type's way to a device address where the caller has
    looked it up already (None: no device array)."""
    size = param.size
    raw = _explicit_bytes(value)
    if raw is not None:
        if len(raw) != size:
            raise TypeError(f"{describe(kernel, param)}: {type_name(value)} is {len(raw)} bytes, "
                            f"the parameter {size}")
        return raw
    if param.kind == BYTES or param.kind == ANY and isinstance(value, (bytes, bytearray, memoryview)):
        return _struct_bytes(kernel, param, value)
    if param.takes_address:
        if getter is UNSEEN:
            getter = learn_pointer_getter(value)
        if getter is not None:
            try:
                address = operator.index(getter(value))
            except (AttributeError, RuntimeError, TypeError, BufferError) as exc:  # e.g. a CPU tensor's CAI
                raise TypeError(f"{describe(kernel, param)}: {type_name(value)} is not device memory "
                                f"({exc})") from exc
            return _int_bytes(kernel, param, address, 8, False)
    if isinstance(value, float):
        width = param.float_width
        if width:
            return _float_bytes(kernel, param, value, width)
        if param.kind == INT and value.is_integer():
            return _int_bytes(kernel, param, int(value), size, param.signed)
        raise TypeError(f"{describe(kernel, param)}: expected an int, got float {value!r}")
    index = getattr(type(value), "__index__", None)
    if index is not None and not _host_hint(value):
        number = index(value)
        if param.kind in (F32, F64):
            return _float_bytes(kernel, param, number, size)
        return _int_bytes(kernel, param, number, size, param.signed)
    raise TypeError(f"{describe(kernel, param)}: cannot pass {type_name(value)}; expected "
                    f"{_expected(param)}{_host_hint(value)}")


def _expected(param):
    if param.kind == F32 or param.kind == F64:
        return "a float, an int, or a numpy scalar / ctypes value of its size"
    if param.takes_address:
        return ("a device array (__cuda_array_interface__, DLPack, .ptr), a CUdeviceptr, an int, "
                "or a numpy scalar / ctypes value of 8 bytes")
    if param.kind == ANY and param.size == 4:
        return "an int, a float (as float32), or a numpy scalar / ctypes value of 4 bytes"
    if param.kind == ANY:
        return f"an int, bytes, or a numpy scalar / ctypes value of {param.size} bytes"
    return f"an int, or a numpy scalar / ctypes value of {param.size} bytes"


def _struct_bytes(kernel, param, value):
    """A by-value struct/vector: bytes-like or any contiguous buffer of its size."""
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(f"{describe(kernel, param)}: a {param.size}-byte struct by value takes bytes, a "
                        f"ctypes.Structure, a numpy structured scalar or a buffer of {param.size} bytes, "
                        f"not {type_name(value)}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{describe(kernel, param)}: the buffer is not contiguous")
        if view.nbytes != param.size:
            raise TypeError(f"{describe(kernel, param)}: {type_name(value)} is {view.nbytes} bytes, "
                            f"the parameter {param.size}")
        return view.tobytes()
