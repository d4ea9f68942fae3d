"""``cuda.bindings.utils``: NVIDIA's helpers, with their semantics, over
cubind's modules.

numba-cuda imports ``get_cuda_native_handle`` at module level; cuda.core calls
``warn_if_cuda_major_version_mismatch`` after its first ``cuInit``.
"""

import os
import re
import threading
import warnings

__all__ = ["get_cuda_native_handle", "get_minimal_required_cuda_ver_from_ptx_ver", "get_ptx_ver",
           "warn_if_cuda_major_version_mismatch"]

# The PTX ISA version each CUDA release introduced (the PTX ISA manual's
# release notes), as NVIDIA's cuda-bindings 13.0 maps them.
_PTX_TO_CUDA = {
    "1.0": (1, 0), "1.1": (1, 1), "1.2": (2, 0), "1.3": (2, 1), "1.4": (2, 2),
    "2.0": (3, 0), "2.1": (3, 1), "2.2": (3, 2), "2.3": (4, 0),
    "3.0": (4, 1), "3.1": (5, 0), "3.2": (5, 5),
    "4.0": (6, 0), "4.1": (6, 5), "4.2": (7, 0), "4.3": (7, 5),
    "5.0": (8, 0),
    "6.0": (9, 0), "6.1": (9, 1), "6.2": (9, 2), "6.3": (10, 0), "6.4": (10, 1), "6.5": (10, 2),
    "7.0": (11, 0), "7.1": (11, 1), "7.2": (11, 2), "7.3": (11, 3), "7.4": (11, 4), "7.5": (11, 5),
    "7.6": (11, 6), "7.7": (11, 7), "7.8": (11, 8),
    "8.0": (12, 0), "8.1": (12, 1), "8.2": (12, 2), "8.3": (12, 3), "8.4": (12, 4), "8.5": (12, 5),
    "8.6": (12, 7), "8.7": (12, 8), "8.8": (12, 9),
    "9.0": (13, 0),
}
_PTX_VERSION = re.compile(r"\.version\s+([0-9]+\.[0-9]+)")
DISABLE_WARNING_VARIABLE = "CUDA_PYTHON_DISABLE_MAJOR_VERSION_WARNING"


def get_ptx_ver(ptx):
    """The PTX ISA version of ``ptx`` (its ``.version`` directive) as a str,
    "8.8"; ``ValueError`` where there is none."""
    match = _PTX_VERSION.search(ptx)
    if match is None:
        raise ValueError("No .version directive found in PTX source. Is it a valid PTX?")
    return match.group(1)


def get_minimal_required_cuda_ver_from_ptx_ver(ptx_version):
    """The oldest CUDA (driver, nvJitLink) that loads PTX of ISA
    ``ptx_version`` ("8.8"), as 1000 * major + 10 * minor (12090);
    ``ValueError`` for an unknown version."""
    try:
        major, minor = _PTX_TO_CUDA[ptx_version]
    except KeyError:
        raise ValueError(f"Unknown or unsupported PTX ISA version: {ptx_version}") from None
    return 1000 * major + 10 * minor


def _handle_types():
    """The opaque handle classes of the driver and runtime modules (a pointer
    to a C struct: CUstream, cudaEvent_t, ...), those NVIDIA's modules register
    with get_cuda_native_handle; CUdeviceptr and other integer typedefs are not."""
    import cuda
    import cuda.cudart

    return {cls for module in (cuda, cuda.cudart) for cls in vars(module).values()
            if isinstance(cls, type) and "_c_struct" in vars(cls)}


_handles = {"types": None}


def get_cuda_native_handle(obj):
    """The raw value of the handle ``obj`` (a CUstream's ``cudaStream_t``) as
    an int; ``TypeError`` for a type that is not an opaque handle."""
    types = _handles["types"]
    if types is None:
        types = _handles["types"] = frozenset(_handle_types())
    if type(obj) not in types:
        raise TypeError("Unknown type: " + str(type(obj)))
    return int(obj)


_mismatch = {"checked": False, "lock": threading.Lock()}


def _warning_disabled():
    """``CUDA_PYTHON_DISABLE_MAJOR_VERSION_WARNING``: an integer other than 0
    disables; unset, empty or 0 does not; any other text disables."""
    raw = os.environ.get(DISABLE_WARNING_VARIABLE, "").strip()
    if not raw:
        return False
    try:
        return int(raw) != 0
    except ValueError:
        return True


def warn_if_cuda_major_version_mismatch():
    """A ``UserWarning`` where the driver supports an older CUDA major than
    the one the modules were generated for; checked once per process."""
    with _mismatch["lock"]:
        if _mismatch["checked"]:
            return
        _mismatch["checked"] = True
    if _warning_disabled():
        return
    import cuda

    built_major = int(cuda.CUDA_VERSION) // 1000
    err, driver_version = cuda.cuDriverGetVersion()
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"Failed to query CUDA driver version: {err}")
    driver_major = int(driver_version) // 1000
    if built_major > driver_major:
        warnings.warn(
            f"the CUDA bindings were generated for CUDA {built_major}, but the installed NVIDIA driver supports "
            f"CUDA {driver_major} at most: some functions may fail. Update the driver, or use bindings generated "
            f"for CUDA {driver_major}. (Set {DISABLE_WARNING_VARIABLE}=1 to silence this warning.)",
            UserWarning, stacklevel=3)
