#!/usr/bin/env python3
"""numba-cuda's ``@cuda.jit`` kernels on cubind: numba-cuda imports cuda.core
and NVIDIA's bindings (their C-level modules and cuda.bindings.nvvm, which
compiles its NVVM IR and links libdevice); with CUBIND_CUDA_BINDINGS=1 cubind
serves them, and this program says which bindings it ran on.

Three kernels, compiled, launched on device arrays and checked with numpy:
a saxpy; a sum, each block reducing in shared memory and adding its part
with ``cuda.atomic.add``; and ``math.sin``, which numba lowers to libdevice's
``__nv_sinf`` (NVVM links libdevice). Without a GPU it says so and exits 0.

    CUBIND_CUDA_BINDINGS=1 python examples/consumers/numba_kernels.py
"""

import importlib.metadata
import math
import sys

import numpy as np
from _gpu import no_gpu_reason, served_by

BLOCK = 256


def main(n=1 << 20):
    reason = no_gpu_reason()
    if reason:
        print(f"No GPU available: {reason}; numba-cuda's kernels need one.")
        return True
    import numba  # type: ignore[import-not-found]  # numba-cuda's, not a dependency of cubind
    from numba import cuda, float32

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def block_sum(x, total):
        part = cuda.shared.array(BLOCK, dtype=float32)
        i = cuda.grid(1)
        t = cuda.threadIdx.x
        part[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if t < step:
                part[t] += part[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(total, 0, part[0])

    @cuda.jit
    def sines(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = math.sin(x[i])

    rng = np.random.default_rng(2)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    grid = (n + BLOCK - 1) // BLOCK
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)

    saxpy[grid, BLOCK](np.float32(2.0), dx, dy, dout)
    results = {"saxpy": np.allclose(dout.copy_to_host(), 2.0 * x + y, rtol=1e-6)}
    total = cuda.to_device(np.zeros(1, np.float32))
    block_sum[grid, BLOCK](dx, total)
    results["shared-memory sum with atomic.add"] = np.isclose(total.copy_to_host()[0], x.sum(dtype=np.float64),
                                                              rtol=1e-4)
    sines[grid, BLOCK](dx, dout)
    results["math.sin (libdevice)"] = np.allclose(dout.copy_to_host(), np.sin(x), rtol=1e-5, atol=1e-6)
    libdevice = "__nv_sinf" in sines.inspect_llvm(sines.signatures[0])

    who, how = served_by()
    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else name
    print(f"numba {numba.__version__}, numba-cuda {importlib.metadata.version('numba-cuda')} on {name}; "
          f"cuda.bindings served by {who}: {how}")
    for name, ok in results.items():
        print(f"{name}: {'correct' if ok else 'WRONG'}")
    print(f"libdevice linked for math.sin: {'yes' if libdevice else 'NO (no __nv_sinf in the kernel IR)'}")
    return all(results.values()) and libdevice


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
