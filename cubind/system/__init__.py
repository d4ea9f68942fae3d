"""cubind.system: the GPUs as the NVIDIA driver's management library (NVML)
sees them, in the idiom of the Pythonic layer: properties, and failures as
:class:`cubind.CUDAError` (NVML's status in ``code``).

    from cubind import system

    system.driver_version          # "580.65.06"
    for gpu in system.devices():
        print(gpu.name, gpu.memory.used, gpu.temperature, gpu.power_draw)
    system.Device(cubind.Device(0)).utilization   # the GPU of CUDA device 0

Module attributes, each read when asked: ``driver_version`` (str),
``cuda_driver_version`` (int, 13000 for 13.0), ``nvml_version`` (str),
``device_count``. Built on the generated ``nvml`` module (bindings/nvml.toml)
and the core's errors; libnvidia-ml.so.1 comes with the NVIDIA driver, and is
opened on the first use (``LibraryNotFoundError`` without the driver).
``docs/system.md`` compares it with cuda.core's ``system`` and pynvml.
"""

from __future__ import annotations

from typing import Any

from cubind.system._nvml import call, nvml, text
from cubind.system.device import Clocks, Device, Memory, MigMode, Process, Utilization

__all__ = ["Device", "devices", "Memory", "Utilization", "Clocks", "Process", "MigMode",
           "driver_version", "cuda_driver_version", "nvml_version", "device_count"]


def devices() -> list[Device]:
    """Every GPU NVML sees, by its index."""
    return [Device(i) for i in range(call("nvmlDeviceGetCount"))]


def _driver_version() -> str:
    return text("nvmlSystemGetDriverVersion", nvml().NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)


def _nvml_version() -> str:
    return text("nvmlSystemGetNVMLVersion", nvml().NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE)


# Readings of the moment, not constants: a module attribute computed when
# read (a module has no properties).
_READINGS = {
    "driver_version": _driver_version,
    "cuda_driver_version": lambda: call("nvmlSystemGetCudaDriverVersion_v2"),
    "nvml_version": _nvml_version,
    "device_count": lambda: call("nvmlDeviceGetCount"),
}


def __getattr__(name: str) -> Any:
    if name in _READINGS:
        return _READINGS[name]()
    raise AttributeError(f"module 'cubind.system' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_READINGS))
