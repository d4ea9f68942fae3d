"""Link-time optimisation at run time: NVRTC compiles two translation units to
LTO-IR (-dlto), nvJitLink links them into one cubin, the driver loads and
launches it and the result is checked. Without a GPU it says so and exits 0."""

import ctypes
import sys

import numpy as np
from _driver_common import loader_reason

import nvjitlink
import nvrtc

AXPY = b"""
extern __device__ float scale(float x);
extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = scale(a) * x[i] + y[i];
}
"""
SCALE = b"__device__ float scale(float x) { return 2.0f * x; }\n"


def check(result):
    err, *outputs = result
    if int(err) != 0:
        raise RuntimeError(f"error: {err!r}")
    return outputs[0] if len(outputs) == 1 else (tuple(outputs) or None)


def lto_ir(source, name, arch):
    prog = check(nvrtc.nvrtcCreateProgram(source, name, 0, None, None))
    opts = [b"-dlto", b"-rdc=true", f"-arch=sm_{arch}".encode()]
    check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts))
    ir = bytearray(check(nvrtc.nvrtcGetLTOIRSize(prog)))
    check(nvrtc.nvrtcGetLTOIR(prog, ir))
    check(nvrtc.nvrtcDestroyProgram(prog))
    return bytes(ir)


def link(arch):
    options = [f"-arch=sm_{arch}".encode(), b"-lto"]
    handle = check(nvjitlink.nvJitLinkCreate(len(options), options))
    for source, name in ((AXPY, b"axpy.cu"), (SCALE, b"scale.cu")):
        ir = lto_ir(source, name, arch)
        check(nvjitlink.nvJitLinkAddData(handle, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR, ir, len(ir),
                                         name))
    check(nvjitlink.nvJitLinkComplete(handle))
    cubin = bytearray(check(nvjitlink.nvJitLinkGetLinkedCubinSize(handle)))
    check(nvjitlink.nvJitLinkGetLinkedCubin(handle, cubin))
    check(nvjitlink.nvJitLinkDestroy(handle))
    return bytes(cubin)


def open_gpu():
    try:
        import cuda

        err, = cuda.cuInit(0)
    except ImportError as exc:
        return None, str(exc)
    except OSError as exc:  # cubind's LibraryNotFoundError
        return None, loader_reason(exc)
    if err != cuda.CUresult.CUDA_SUCCESS:
        return None, f"cuInit returned {err.name}"
    return cuda, ""


def main():
    cuda, reason = open_gpu()
    if cuda is None:
        link(90)  # the link needs no GPU
        print(f"No GPU available: {reason}; skipping.")
        return 0
    dev = check(cuda.cuDeviceGet(0))
    attr = cuda.CUdevice_attribute
    major = check(cuda.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(cuda.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    ctx = check(cuda.cuDevicePrimaryCtxRetain(dev))
    check(cuda.cuCtxSetCurrent(ctx))
    module = check(cuda.cuModuleLoadData(link(major * 10 + minor)))
    kernel = check(cuda.cuModuleGetFunction(module, b"axpy"))

    n = 4096
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.random.default_rng(1).random(n, dtype=np.float32)
    d_x, d_y = check(cuda.cuMemAlloc(x.nbytes)), check(cuda.cuMemAlloc(y.nbytes))
    check(cuda.cuMemcpyHtoD(d_x, x, x.nbytes))
    check(cuda.cuMemcpyHtoD(d_y, y, y.nbytes))
    args = ((3.0, d_x, d_y, n), (ctypes.c_float, None, None, ctypes.c_int))
    check(cuda.cuLaunchKernel(kernel, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, args, None))
    out = np.empty_like(y)
    check(cuda.cuMemcpyDtoH(out, d_y, out.nbytes))
    assert np.allclose(out, 2.0 * 3.0 * x + y), "axpy through LTO gave a wrong result"
    check(cuda.cuMemFree(d_x))
    check(cuda.cuMemFree(d_y))
    check(cuda.cuModuleUnload(module))
    check(cuda.cuDevicePrimaryCtxRelease(dev))
    print(f"LTO link of 2 translation units for sm_{major}{minor}, axpy of {n} floats: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
