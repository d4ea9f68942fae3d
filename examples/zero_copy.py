"""Zero-copy host memory with the runtime: cudaHostAlloc(cudaHostAllocMapped)
gives page-locked host memory the GPU reads and writes in place;
cudaHostGetDevicePointer gives its device address; a kernel doubles the
values there and the host sees the result with no cudaMemcpy.
cudaPointerGetAttributes confirms what the memory is. Without a GPU it says
so and exits 0."""

import ctypes
import sys

import numpy as np
from _runtime_common import check, load_kernel, open_device

from cuda import cudart

SOURCE = b"""
extern "C" __global__ void twice(float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2.0f;
}
"""
N = 4096


def main():
    arch = open_device()
    if arch is None:
        return 0
    library, kernel = load_kernel(SOURCE, "twice", arch)
    host_ptr = check(cudart.cudaHostAlloc(N * 4, cudart.cudaHostAllocMapped))
    try:
        host = np.ctypeslib.as_array((ctypes.c_float * N).from_address(host_ptr))
        host[:] = np.arange(N, dtype=np.float32)
        device_ptr = check(cudart.cudaHostGetDevicePointer(host_ptr, 0))
        attrs = check(cudart.cudaPointerGetAttributes(host_ptr))
        assert attrs.type == cudart.cudaMemoryType.cudaMemoryTypeHost, attrs.type
        args = ((device_ptr, N), (ctypes.c_void_p, ctypes.c_int))
        check(cudart.cudaLaunchKernel(kernel, cudart.dim3(x=N // 128, y=1, z=1), cudart.dim3(x=128, y=1, z=1),
                                      args, 0, None))
        check(cudart.cudaDeviceSynchronize())
        assert np.array_equal(host, 2 * np.arange(N, dtype=np.float32)), "the kernel's writes are not visible"
    finally:
        check(cudart.cudaFreeHost(host_ptr))
    check(cudart.cudaLibraryUnload(library))
    print(f"zero-copy: {N} floats doubled in mapped host memory (device address {device_ptr:#x}): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
