"""Stream-ordered allocation with the runtime: cudaMallocAsync/cudaFreeAsync
on a stream, the device's default pool kept warm by its release threshold
(cudaMemPoolSetAttribute, read back typed by cudaMemPoolGetAttribute), and an
explicit pool (cudaMemPoolCreate) used by cudaMallocFromPoolAsync. A kernel
fills each allocation; the results are checked. Without a GPU it says so and
exits 0."""

import ctypes
import sys

import numpy as np
from _runtime_common import check, load_kernel, open_device

from cuda import cudart

SOURCE = b"""
extern "C" __global__ void iota(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}
"""
N = 1 << 16
A = cudart.cudaMemPoolAttr


def fill_and_check(kernel, ptr, stream):
    args = ((ptr, N), (ctypes.c_void_p, ctypes.c_int))
    check(cudart.cudaLaunchKernel(kernel, cudart.dim3(x=N // 256, y=1, z=1), cudart.dim3(x=256, y=1, z=1),
                                  args, 0, stream))
    host = np.empty(N, dtype=np.int32)
    check(cudart.cudaMemcpyAsync(host, ptr, host.nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream))
    check(cudart.cudaStreamSynchronize(stream))
    assert np.array_equal(host, np.arange(N, dtype=np.int32)), "iota gave a wrong result"


def main():
    arch = open_device()
    if arch is None:
        return 0
    library, kernel = load_kernel(SOURCE, "iota", arch)
    stream = check(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking))

    # The default pool: keep up to 64 MiB cached instead of returning it at each sync.
    pool = check(cudart.cudaDeviceGetDefaultMemPool(0))
    check(cudart.cudaMemPoolSetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold, 64 << 20))
    threshold = check(cudart.cudaMemPoolGetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold))
    for _ in range(3):
        ptr = check(cudart.cudaMallocAsync(N * 4, stream))
        fill_and_check(kernel, ptr, stream)
        check(cudart.cudaFreeAsync(ptr, stream))
    check(cudart.cudaStreamSynchronize(stream))
    reserved = check(cudart.cudaMemPoolGetAttribute(pool, A.cudaMemPoolAttrReservedMemCurrent))
    assert reserved >= N * 4, f"the pool released what its threshold should keep ({reserved} bytes)"

    # An explicit pool on device 0.
    props = cudart.cudaMemPoolProps()
    props.allocType = cudart.cudaMemAllocationType.cudaMemAllocationTypePinned
    props.location.type = cudart.cudaMemLocationType.cudaMemLocationTypeDevice
    props.location.id = 0
    own = check(cudart.cudaMemPoolCreate(props))
    ptr = check(cudart.cudaMallocFromPoolAsync(N * 4, own, stream))
    fill_and_check(kernel, ptr, stream)
    used = check(cudart.cudaMemPoolGetAttribute(own, A.cudaMemPoolAttrUsedMemCurrent))
    check(cudart.cudaFreeAsync(ptr, stream))
    check(cudart.cudaStreamSynchronize(stream))
    check(cudart.cudaMemPoolDestroy(own))

    check(cudart.cudaMemPoolSetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold, 0))
    check(cudart.cudaMemPoolTrimTo(pool, 0))
    check(cudart.cudaStreamDestroy(stream))
    check(cudart.cudaLibraryUnload(library))
    print(f"stream-ordered allocation: default pool (threshold {threshold >> 20} MiB, {reserved} bytes kept), "
          f"own pool ({used} bytes in use): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
