"""The GPUs as the driver sees them, through the generated ``cuda`` module
(no context is made): or why there are none to list."""

from __future__ import annotations

from _cubind.loader import LibraryNotFoundError


def gpu_lines() -> list[str]:
    try:
        import cuda
    except ImportError as exc:
        return [f"not asked: the cuda package does not import ({exc})"]
    try:
        (status,) = cuda.cuInit(0)
    except LibraryNotFoundError as exc:
        return [f"no driver: {str(exc).splitlines()[0].removeprefix('cubind: ')}"]
    if status != cuda.CUresult.CUDA_SUCCESS:
        what = "no GPU" if status == cuda.CUresult.CUDA_ERROR_NO_DEVICE else "no usable GPU"
        return [f"{what}: cuInit returned {status.name}"]
    _, version = cuda.cuDriverGetVersion()
    _, count = cuda.cuDeviceGetCount()
    lines = [f"driver supports CUDA {version // 1000}.{version % 1000 // 10}; {count} device(s)"]
    return lines + [_device_line(cuda, ordinal) for ordinal in range(count)]


def _device_line(cuda, ordinal: int) -> str:
    attribute = cuda.CUdevice_attribute
    _, device = cuda.cuDeviceGet(ordinal)
    _, name = cuda.cuDeviceGetName(256, device)
    _, major = cuda.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
    _, minor = cuda.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
    _, memory = cuda.cuDeviceTotalMem(device)
    _, bus = cuda.cuDeviceGetPCIBusId(32, device)
    return (f"{ordinal}: {_text(name)}, compute capability {major}.{minor}, {memory / 2**30:.1f} GiB, "
            f"PCI {_text(bus)}")


def _text(value) -> str:
    """A C string the driver filled, up to its NUL."""
    return value.split(b"\0")[0].decode(errors="replace") if isinstance(value, bytes) else str(value)
