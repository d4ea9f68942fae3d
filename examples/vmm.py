#!/usr/bin/env python3
"""Virtual memory management: reserve an address range, back it, map it, use it.

Creates physical allocations with cuMemCreate (a CUmemAllocationProp for
pinned device memory), reserves one contiguous virtual range with
cuMemAddressReserve, maps the allocations side by side into it with cuMemMap,
grants the device read/write access with cuMemSetAccess (a CUmemAccessDesc),
then fills the whole range with cuMemsetD32 and a kernel and reads it back.
Everything is unmapped, freed and released at the end.

    python examples/vmm.py --chunks 3
"""

import argparse
import contextlib
import ctypes

import numpy as np
from _driver_common import Skip, call, device_arch, exit_with, gpu_context, load_kernel, open_gpu

KERNEL = """\
extern "C" __global__ void add_index(unsigned int *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        x[i] += (unsigned int)i;
    }
}
"""
FILL = 0x1000_0000


def allocation_prop(cuda, dev):
    prop = cuda.CUmemAllocationProp()
    prop.type = cuda.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = int(dev)
    return prop


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=3, help="physical allocations mapped side by side")
    args = parser.parse_args(argv)

    cuda, dev = open_gpu()
    supported = call(cuda.cuDeviceGetAttribute,
                     cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev)
    if not supported:
        raise Skip("this device does not support virtual memory management")
    arch = device_arch(cuda, dev)

    with gpu_context(cuda, dev), contextlib.ExitStack() as cleanup:
        prop = allocation_prop(cuda, dev)
        granularity = call(cuda.cuMemGetAllocationGranularity, prop,
                           cuda.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
        chunk = granularity   # each allocation: one granule (2 MiB on current GPUs)
        size = chunk * args.chunks
        base = call(cuda.cuMemAddressReserve, size, 0, 0, 0)
        cleanup.callback(call, cuda.cuMemAddressFree, base, size)
        for i in range(args.chunks):
            handle = call(cuda.cuMemCreate, chunk, prop, 0)
            # The mapping keeps the memory; the handle can go once mapped (CUDA's VMM pattern).
            call(cuda.cuMemMap, int(base) + i * chunk, chunk, 0, handle, 0)
            cleanup.callback(call, cuda.cuMemUnmap, int(base) + i * chunk, chunk)
            call(cuda.cuMemRelease, handle)

        access = cuda.CUmemAccessDesc()
        access.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        access.location.id = int(dev)
        access.flags = cuda.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        call(cuda.cuMemSetAccess, base, size, [access], 1)

        n = size // 4
        call(cuda.cuMemsetD32, base, FILL, n)
        add_index = load_kernel(cuda, cleanup, KERNEL, "add_index", arch)
        call(cuda.cuLaunchKernel, add_index, 1024, 1, 1, 256, 1, 1, 0, None,
             ((base, n), (None, ctypes.c_size_t)), None)  # fmt: skip
        result = np.zeros(n, dtype=np.uint32)
        call(cuda.cuMemcpyDtoH, result, base, size)

    want = (np.arange(n, dtype=np.uint64) + FILL).astype(np.uint32)
    if not np.array_equal(result, want):
        bad = int(np.flatnonzero(result != want)[0])
        print(f"VMM range: WRONG at word {bad}: {result[bad]:#x} != {want[bad]:#x}")
        return False
    print(f"{args.chunks} allocations of {chunk >> 10} KiB mapped at {int(base):#x}: "
          f"memset + kernel over {size >> 10} KiB read back correctly")
    return True


if __name__ == "__main__":
    exit_with(main)
