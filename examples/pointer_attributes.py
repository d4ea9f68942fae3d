#!/usr/bin/env python3
"""Ask the driver what a pointer is: cuPointerGetAttribute.

Allocates device memory (cuMemAlloc) and page-locked host memory
(cuMemAllocHost), then queries, for a pointer into the middle of each, its
memory type, device ordinal, owning context, managed flag and the range it
belongs to. As in NVIDIA's CUDA Python, cuPointerGetAttribute(attribute, ptr)
returns the value typed by its attribute: a CUmemorytype member, a CUcontext,
a CUdeviceptr, an int. Every answer is checked against what was allocated.

    python examples/pointer_attributes.py
"""

import argparse

from _driver_common import call, exit_with, gpu_context, open_gpu

NBYTES = 1 << 20
OFFSET = 4096   # query a pointer inside the allocation, not its start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)

    cuda, dev = open_gpu()
    A = cuda.CUpointer_attribute
    M = cuda.CUmemorytype
    queries = (A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
               A.CU_POINTER_ATTRIBUTE_CONTEXT, A.CU_POINTER_ATTRIBUTE_IS_MANAGED,
               A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, A.CU_POINTER_ATTRIBUTE_RANGE_SIZE)

    def attributes(ptr):
        return {attribute: call(cuda.cuPointerGetAttribute, attribute, ptr) for attribute in queries}

    with gpu_context(cuda, dev) as ctx:
        dptr = call(cuda.cuMemAlloc, NBYTES)
        try:
            on_device = attributes(int(dptr) + OFFSET)
        finally:
            call(cuda.cuMemFree, dptr)
        host = call(cuda.cuMemAllocHost, NBYTES)
        try:
            on_host = attributes(int(host) + OFFSET)
        finally:
            call(cuda.cuMemFreeHost, host)

    common = {A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: int(dev), A.CU_POINTER_ATTRIBUTE_CONTEXT: ctx,
              A.CU_POINTER_ATTRIBUTE_IS_MANAGED: 0, A.CU_POINTER_ATTRIBUTE_RANGE_SIZE: NBYTES}
    want_device = {**common, A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: M.CU_MEMORYTYPE_DEVICE,
                   A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: int(dptr)}
    want_host = {**common, A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: M.CU_MEMORYTYPE_HOST,
                 A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: int(host)}
    good = True
    for label, got, want in (("cuMemAlloc", on_device, want_device), ("cuMemAllocHost", on_host, want_host)):
        print(f"{label} pointer + {OFFSET}:")
        for attribute, value in got.items():
            # The driver may round a range up to its allocation granularity.
            if attribute == A.CU_POINTER_ATTRIBUTE_RANGE_SIZE:
                ok = value >= want[attribute]
            elif attribute == A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:   # a CUdeviceptr
                ok = int(value) == want[attribute]
            else:
                ok = value == want[attribute]
            if attribute == A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
                shown = value.name
            elif attribute in (A.CU_POINTER_ATTRIBUTE_CONTEXT, A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR):
                shown = hex(value)
            else:
                shown = str(value)
            print(f"    {attribute.name:<40} {shown}{'' if ok else f'   WRONG, expected {want[attribute]!r}'}")
            good &= ok
    return good


if __name__ == "__main__":
    exit_with(main)
