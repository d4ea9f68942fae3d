#!/usr/bin/env python3
"""SAXPY (out = a * x + y) with NVRTC and the CUDA driver API.

The walk-through from NVIDIA's "CUDA Python" blog post, written for cubind:
compile the kernel to PTX with NVRTC, load it with the driver API, copy the
inputs to the GPU, launch, copy the result back and check it with numpy.
Without a GPU (or without the driver package) only the NVRTC part runs.

    python examples/saxpy.py --n 1000000
"""

import argparse
import contextlib
import math

import numpy as np

import nvrtc

SAXPY = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        out[tid] = a * x[tid] + y[tid];
    }
}
"""
THREADS_PER_BLOCK = 512
A = 2.0


class NoGPU(Exception):
    """No usable GPU or driver: only the NVRTC part of the example runs."""


def call(fn, *args):
    """Call a binding; raise RuntimeError on a bad status, else return the outputs."""
    err, *outputs = fn(*args)
    if err != 0:
        raise RuntimeError(f"{fn.__name__} failed: {err.name}")
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def compile_ptx(src, arch):
    """Compile ``src`` for compute_<arch>; return the PTX (NUL-terminated bytes)."""
    prog = call(nvrtc.nvrtcCreateProgram, src, b"saxpy.cu", 0, [], [])
    try:
        opts = [b"--fmad=false", f"--gpu-architecture=compute_{arch}".encode()]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = bytearray(call(nvrtc.nvrtcGetProgramLogSize, prog))
            call(nvrtc.nvrtcGetProgramLog, prog, log)
            text = log.rstrip(b"\0").decode(errors="replace")
            raise RuntimeError(f"nvrtcCompileProgram failed: {err.name}\n{text}")
        ptx = bytearray(call(nvrtc.nvrtcGetPTXSize, prog))
        call(nvrtc.nvrtcGetPTX, prog, ptx)
        return bytes(ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def open_gpu():
    """Initialise the driver; return (driver module, device 0) or raise NoGPU."""
    try:
        import cuda

        cuda.cuInit  # noqa: B018 (NVIDIA's bare cuda namespace has no driver API)
    except (ImportError, AttributeError) as exc:
        raise NoGPU(f"the cuda driver package is not importable ({exc})") from exc
    try:
        (err,) = cuda.cuInit(0)
    except OSError as exc:  # cubind's LibraryNotFoundError is an OSError
        first = str(exc).splitlines()[0].rstrip(".")  # the rest lists every place searched
        if first.startswith("cubind: cannot find the CUDA driver library"):
            raise NoGPU("no CUDA driver (libcuda.so.1 not found)") from exc
        raise NoGPU(first.removeprefix("cubind: ")) from exc
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise NoGPU(f"cuInit returned {err.name}")
    err, dev = cuda.cuDeviceGet(0)
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise NoGPU(f"cuDeviceGet(0) returned {err.name}")
    return cuda, dev


def device_arch(cuda, dev):
    """The newest NVRTC architecture that the device can run (PTX JITs forward)."""
    attr = cuda.CUdevice_attribute
    major = call(
        cuda.cuDeviceGetAttribute,
        attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        dev,
    )
    minor = call(
        cuda.cuDeviceGetAttribute,
        attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        dev,
    )
    usable = [a for a in call(nvrtc.nvrtcGetSupportedArchs) if a <= 10 * major + minor]
    if not usable:
        raise RuntimeError(
            f"compute capability {major}.{minor} is too old for this NVRTC"
        )
    return max(usable)


def run_saxpy(cuda, dev, ptx, n):
    """Launch the kernel on n elements; return True when the result is right."""
    rng = np.random.default_rng(0)
    hx = rng.random(n, dtype=np.float32)
    hy = rng.random(n, dtype=np.float32)
    hout = np.zeros(n, dtype=np.float32)
    nbytes = hx.nbytes
    with contextlib.ExitStack() as cleanup:  # frees everything, newest first
        # cuda.h maps cuCtxCreate to _v4 (ctxCreateParams, flags, dev) from
        # CUDA 13 on, to _v2 (flags, dev) before: the binding follows its headers.
        create_args = (None, 0, dev) if cuda.CUDA_VERSION >= 13000 else (0, dev)
        ctx = call(cuda.cuCtxCreate, *create_args)
        cleanup.callback(call, cuda.cuCtxDestroy, ctx)
        module = call(cuda.cuModuleLoadData, ptx)
        cleanup.callback(call, cuda.cuModuleUnload, module)
        kernel = call(cuda.cuModuleGetFunction, module, b"saxpy")
        dx, dy, dout = (call(cuda.cuMemAlloc, nbytes) for _ in range(3))
        for dptr in (dx, dy, dout):
            cleanup.callback(call, cuda.cuMemFree, dptr)
        stream = call(cuda.cuStreamCreate, 0)
        cleanup.callback(call, cuda.cuStreamDestroy, stream)

        call(cuda.cuMemcpyHtoDAsync, dx, hx.ctypes.data, nbytes, stream)
        call(cuda.cuMemcpyHtoDAsync, dy, hy.ctypes.data, nbytes, stream)
        # kernelParams is a void*[]: the address of each argument's value.
        values = [
            np.array([A], dtype=np.float32),  # float a
            np.array([int(dx)], dtype=np.uint64),  # float *x
            np.array([int(dy)], dtype=np.uint64),  # float *y
            np.array([int(dout)], dtype=np.uint64),  # float *out
            np.array([n], dtype=np.uint64),  # size_t n
        ]
        args = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        blocks = math.ceil(n / THREADS_PER_BLOCK)
        call(cuda.cuLaunchKernel, kernel, blocks, 1, 1, THREADS_PER_BLOCK, 1, 1,
             0, stream, args.ctypes.data, 0)  # fmt: skip
        call(cuda.cuMemcpyDtoHAsync, hout.ctypes.data, dout, nbytes, stream)
        call(cuda.cuStreamSynchronize, stream)
    return np.allclose(hout, np.float32(A) * hx + hy)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20, help="element count")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")

    try:
        cuda, dev = open_gpu()
        arch, no_gpu = device_arch(cuda, dev), None
    except NoGPU as exc:
        cuda, dev, arch, no_gpu = None, None, 75, str(exc)

    ptx = compile_ptx(SAXPY, arch)
    major, minor = call(nvrtc.nvrtcVersion)
    text = ptx.rstrip(b"\0").decode()
    print(
        f"NVRTC {major}.{minor}: saxpy.cu -> {len(ptx)} bytes of PTX for compute_{arch}"
    )
    for line in text.splitlines():
        if line.startswith(".target") or ".entry" in line:
            print("   ", line.strip())

    if cuda is None:
        print(f"No GPU available: {no_gpu}; compiled saxpy to {len(ptx)} bytes of PTX for compute_{arch}, "
              f"the launch needs a GPU.")
        return 0
    if not run_saxpy(cuda, dev, ptx, args.n):
        print(f"saxpy on {args.n} elements: WRONG result")
        return 1
    print(f"saxpy on {args.n} elements: result matches numpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
