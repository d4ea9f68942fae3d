"""What the runtime examples share: the status check, the device, a kernel
compiled by NVRTC and loaded through the runtime alone."""

import nvrtc
from cuda import cudart


def check(result):
    """The outputs of a binding's (err, outputs...) tuple; raise on a bad status."""
    err, *outputs = result
    if err not in (cudart.cudaError_t.cudaSuccess, nvrtc.nvrtcResult.NVRTC_SUCCESS):
        raise RuntimeError(f"CUDA error: {err!r}")
    return outputs[0] if len(outputs) == 1 else (tuple(outputs) or None)


def device_count():
    """The number of devices, or 0 without a GPU, having said so in the examples'
    one wording (``No GPU available: <reason>; skipping.``, as _driver_common's)."""
    err, count = cudart.cudaGetDeviceCount()
    if err != cudart.cudaError_t.cudaSuccess or not count:
        print(f"No GPU available: cudaGetDeviceCount returned {getattr(err, 'name', err)}; skipping.")
        return 0
    return count


def open_device():
    """Device 0's architecture (e.g. 90), or None (printed why) without a GPU."""
    if not device_count():
        return None
    check(cudart.cudaSetDevice(0))
    prop = check(cudart.cudaGetDeviceProperties(0))
    return prop.major * 10 + prop.minor


def load_kernel(source, name, arch):
    """NVRTC -> cubin -> cudaLibraryLoadData -> cudaLibraryGetKernel: (library, kernel)."""
    prog = check(nvrtc.nvrtcCreateProgram(source, name.encode() + b".cu", 0, None, None))
    opts = [f"--gpu-architecture=sm_{arch}".encode()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = bytearray(check(nvrtc.nvrtcGetProgramLogSize(prog)))
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.decode(errors="replace"))
    cubin = bytearray(check(nvrtc.nvrtcGetCUBINSize(prog)))
    check(nvrtc.nvrtcGetCUBIN(prog, cubin))
    check(nvrtc.nvrtcDestroyProgram(prog))
    library = check(cudart.cudaLibraryLoadData(bytes(cubin), None, None, 0, None, None, 0))
    return library, check(cudart.cudaLibraryGetKernel(library, name.encode()))
