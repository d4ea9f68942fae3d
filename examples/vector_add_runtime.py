"""Vector addition with the runtime API only, in the classic CUDA Python style:
NVRTC compiles the kernel, the runtime loads it as a library, launches it
(the (values, types) form, then pre-packed arguments through
cudaLaunchKernelExC with a launch attribute), copies the result back and
checks it. Without a GPU it says so and exits 0."""

import ctypes
import sys

import numpy as np
from _runtime_common import check, load_kernel, open_device

from cuda import cudart

SOURCE = b"""
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def main():
    arch = open_device()
    if arch is None:
        return 0
    name = check(cudart.cudaGetDeviceProperties(0)).name.split(b"\0")[0].decode()
    print(f"device 0: {name}, sm_{arch}")
    library, kernel = load_kernel(SOURCE, "vector_add", arch)

    n = 1 << 20
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.random.default_rng(1).random(n, dtype=np.float32)
    c = np.full(n, np.nan, dtype=np.float32)
    nbytes = a.nbytes
    d_a, d_b, d_c = (check(cudart.cudaMalloc(nbytes)) for _ in range(3))
    stream = check(cudart.cudaStreamCreate())
    check(cudart.cudaMemcpy(d_a, a, nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice))
    check(cudart.cudaMemcpy(d_b, b, nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice))

    block = 256
    grid = cudart.dim3(x=(n + block - 1) // block, y=1, z=1)
    args = ((d_a, d_b, d_c, n), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t))
    check(cudart.cudaLaunchKernel(kernel, grid, cudart.dim3(x=block, y=1, z=1), args, 0, stream))
    check(cudart.cudaStreamSynchronize(stream))
    check(cudart.cudaMemcpy(c, d_c, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    assert np.array_equal(c, a + b), "vector_add (cudaLaunchKernel) gave a wrong result"

    # The same launch through cudaLaunchKernelExC, arguments pre-packed.
    values = [ctypes.c_void_p(d_b), ctypes.c_void_p(d_a), ctypes.c_void_p(d_c), ctypes.c_size_t(n)]
    packed = (ctypes.c_void_p * 4)(*(ctypes.addressof(v) for v in values))
    config = cudart.cudaLaunchConfig_t(gridDim=grid, blockDim=cudart.dim3(x=block, y=1, z=1), stream=stream)
    check(cudart.cudaLaunchKernelExC(config, kernel, ctypes.addressof(packed)))
    check(cudart.cudaStreamSynchronize(stream))
    c[:] = np.nan
    check(cudart.cudaMemcpy(c, d_c, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    assert np.array_equal(c, a + b), "vector_add (cudaLaunchKernelExC) gave a wrong result"

    for ptr in (d_a, d_b, d_c):
        check(cudart.cudaFree(ptr))
    check(cudart.cudaStreamDestroy(stream))
    check(cudart.cudaLibraryUnload(library))
    print(f"vector_add of {n} floats: ok (cudaLaunchKernel and cudaLaunchKernelExC)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
