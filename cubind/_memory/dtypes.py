"""The element types a cubind array holds, and how each is named elsewhere:
in DLPack's (code, bits) and in the C of the copy kernels.

Only fixed-size numeric types cross to the GPU: what a kernel, CuPy or
PyTorch can read as the same bytes. Strings, objects and structured types
have no device meaning, and a byte-swapped type would be read wrongly by
every kernel.
"""

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["as_dtype", "dlpack_code", "from_dlpack_code", "C_TYPES"]

# numpy kind -> DLPack type code (dlpack.h: kDLInt 0, kDLUInt 1, kDLFloat 2,
# kDLComplex 5, kDLBool 6).
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS_BY_CODE = {code: kind for kind, code in _DLPACK_CODES.items()}

# The C storage type each dtype is read and written as by the kernels. bool
# is a byte (numpy may hold any nonzero byte as True), float16 and the complex
# types are structs so that conversions can be spelled per type.
C_TYPES = {
    np.dtype(np.bool_): "unsigned char",
    np.dtype(np.int8): "signed char",
    np.dtype(np.int16): "short",
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long",
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.uint16): "unsigned short",
    np.dtype(np.uint32): "unsigned int",
    np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}

SUPPORTED = tuple(C_TYPES)
_NAMES = ", ".join(str(d) for d in SUPPORTED)


def as_dtype(dtype: "npt.DTypeLike", param: str = "dtype") -> "np.dtype[Any]":
    """``dtype`` as a native-order numpy dtype cubind supports, else a
    TypeError naming ``param``."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{param}: {dtype!r} is not a data type ({exc})") from None
    if dt in C_TYPES:
        return dt
    if dt.newbyteorder("=") in C_TYPES and not dt.isnative:
        raise TypeError(f"{param}: {dt.str} is not in the machine's byte order; a GPU reads native order only "
                        f"(convert with .astype({dt.newbyteorder('=').name!r}) on the host)")
    raise TypeError(f"{param}: {dt} is not supported on the device (supported: {_NAMES})")


def dlpack_code(dtype):
    """DLPack's (type code, bits) for a supported dtype."""
    return _DLPACK_CODES[dtype.kind], dtype.itemsize * 8


def from_dlpack_code(code, bits, lanes):
    """The numpy dtype of DLPack's (code, bits, lanes), else a TypeError."""
    kind = _KINDS_BY_CODE.get(code)
    if kind is None or lanes != 1 or bits % 8:
        raise TypeError(f"DLPack data type (code {code}, bits {bits}, lanes {lanes}) has no numpy equivalent "
                        f"cubind supports (supported: {_NAMES})")
    dt = np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(np.bool_)
    if dt not in C_TYPES or dt.itemsize * 8 != bits:
        raise TypeError(f"DLPack data type (code {code}, bits {bits}) is not supported (supported: {_NAMES})")
    return dt
