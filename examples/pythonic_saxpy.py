#!/usr/bin/env python3
"""SAXPY (out = a * x + y) in cubind's Pythonic layer.

The same computation as examples/saxpy.py in a handful of lines: compile with
NVRTC (for the current GPU, cached on disk), copy the inputs to the GPU,
launch with plain Python values (the kernel's own parameter list types
them: 2.0 becomes a float32, the arrays their device pointers, n a size_t),
copy back and check. Without a GPU it still compiles (NVRTC needs none),
says what it would launch and exits 0.

    python examples/pythonic_saxpy.py
"""

import numpy as np
from _driver_common import NoGPU, describe_launch, exit_with, open_gpu

import cubind

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


def main(n=1 << 20, a=2.0):
    module = cubind.Program(SAXPY).compile()  # NVRTC: no GPU needed
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    grid, block = (n + 255) // 256, 256
    try:
        open_gpu()
    except NoGPU as exc:
        launch = describe_launch(module, "saxpy", grid, block, (a, x, y, np.empty_like(x), n))
        print(f"No GPU available: {exc}; compiled saxpy to {len(module.code)} bytes of PTX for "
              f"compute_{cubind.default_arch()}; with a GPU it would launch {launch}.")
        return True
    saxpy = module.get_kernel("saxpy")
    out = cubind.empty(n, np.float32)
    saxpy(grid, block, a, cubind.to_gpu(x), cubind.to_gpu(y), out, n)
    good = np.allclose(out.get(), np.float32(a) * x + y)
    print(f"saxpy on {n} elements with cubind: {'result matches numpy' if good else 'WRONG result'}")
    return good


if __name__ == "__main__":
    exit_with(main)
