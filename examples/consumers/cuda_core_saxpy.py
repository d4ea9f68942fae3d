#!/usr/bin/env python3
"""SAXPY (out = a * x + y) with NVIDIA's cuda.core 1.x, unchanged, on cubind.

cuda.core is compiled against NVIDIA's C-level modules
(cuda.bindings.cydriver, cynvrtc, cynvjitlink); with CUBIND_CUDA_BINDINGS=1
cubind serves them, and this program says which bindings it ran on. It takes
the current device, compiles the kernel with NVRTC for its architecture,
fills device buffers from pinned host memory on a stream, launches, copies
back and checks the result with numpy. Without a GPU it says so and exits 0.

    CUBIND_CUDA_BINDINGS=1 python examples/consumers/cuda_core_saxpy.py
"""

import ctypes
import sys

import numpy as np
from _gpu import no_gpu_reason, served_by

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


def host_view(buf, count):
    """A float32 numpy array over a pinned Buffer's memory."""
    raw = (ctypes.c_char * (4 * count)).from_address(int(buf.handle))
    return np.frombuffer(raw, dtype=np.float32, count=count)


def main(n=1 << 20, a=2.0):
    reason = no_gpu_reason()
    if reason:
        print(f"No GPU available: {reason}; cuda.core's saxpy needs one.")
        return True
    import cuda.core  # type: ignore[import-untyped]  # NVIDIA's cuda-core, untyped
    from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch

    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    kernel = Program(SAXPY, "c++", ProgramOptions(arch=f"sm_{dev.arch}")).compile("cubin").get_kernel("saxpy")
    who, how = served_by()
    print(f"cuda.core {cuda.core.__version__} on {dev.name} (sm_{dev.arch}); cuda.bindings served by {who}: {how}")

    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pinned = LegacyPinnedMemoryResource()
    hx, hy, hout = (pinned.allocate(4 * n) for _ in range(3))
    host_view(hx, n)[:], host_view(hy, n)[:] = x, y
    dx, dy, dout = (dev.allocate(4 * n, stream=stream) for _ in range(3))
    dx.copy_from(hx, stream=stream)
    dy.copy_from(hy, stream=stream)
    launch(stream, LaunchConfig(grid=(n + 255) // 256, block=256), kernel, np.float32(a), dx, dy, dout, np.uint64(n))
    dout.copy_to(hout, stream=stream)
    stream.sync()
    ok = np.allclose(host_view(hout, n), a * x + y, rtol=1e-6)
    for buf in (dx, dy, dout):
        buf.close(stream)
    stream.sync()
    for buf in (hx, hy, hout):
        buf.close()
    stream.close()
    print(f"saxpy of {n} floats: {'correct' if ok else 'WRONG'}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
