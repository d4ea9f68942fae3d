"""What the consumer examples share: whether there is a GPU (asked of the
driver through ctypes, before any consumer is imported) and which bindings
serve ``cuda.bindings``."""

import ctypes
import sys


def no_gpu_reason():
    """None where a driver answers with at least one device, else why not."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        if libcuda.cuInit(0) != 0:
            return "cuInit failed"
        count = ctypes.c_int(0)
        if libcuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
            return "the driver reports no device"
    except (OSError, AttributeError) as exc:
        return f"libcuda.so.1 not usable ({exc})"
    return None


def served_by():
    """("cubind" or "NVIDIA", a description) of what ``cuda.bindings`` is here:
    cubind's modules answer under CUBIND_CUDA_BINDINGS=1 (cuda.bindings.driver
    is cubind's ``cuda``, cuda.bindings.cydriver its ``cuda/_cydriver``)."""
    from cuda.bindings import driver  # type: ignore[import-untyped]  # served by cubind under the switch; NVIDIA ships no stubs

    cydriver = sys.modules.get("cuda.bindings.cydriver")
    where = getattr(cydriver, "__file__", None) or "not imported"
    who = "cubind" if driver.__name__ == "cuda" else "NVIDIA"
    return who, f"cuda.bindings.driver is {driver.__name__}, cuda.bindings.cydriver from {where}"
