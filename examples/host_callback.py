#!/usr/bin/env python3
"""Run Python on a stream's timeline with cuLaunchHostFunc.

A kernel writes a value into page-locked host memory that the device can
address (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP); the Python callable
queued after it with cuLaunchHostFunc reads that memory and records what it
saw into a list. Stream order promises the callable runs after the kernel has
finished, so it must see the value of the launch just before it, for every one
of ``--rounds`` kernel/callback pairs.

    python examples/host_callback.py --rounds 4
"""

import argparse
import contextlib
import ctypes
import threading

import numpy as np
from _driver_common import call, device_arch, exit_with, gpu_context, load_kernel, open_gpu

KERNEL = """\
extern "C" __global__ void stamp(volatile unsigned int *flag, unsigned int value, long long spin)
{
    long long start = clock64();
    while (clock64() - start < spin) { }   // make the kernel slow enough to notice a race
    *flag = value;
    __threadfence_system();
}
"""
SPIN_CYCLES = 2_000_000


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="kernel + callback pairs")
    args = parser.parse_args(argv)

    cuda, dev = open_gpu()
    arch = device_arch(cuda, dev)
    seen = []   # (round, value read by the callback, thread name)

    def record(round_):
        seen.append((round_, int(flag[0]), threading.current_thread().name))

    with gpu_context(cuda, dev), contextlib.ExitStack() as cleanup:
        stamp = load_kernel(cuda, cleanup, KERNEL, "stamp", arch)
        host = call(cuda.cuMemHostAlloc, 4, cuda.CU_MEMHOSTALLOC_DEVICEMAP)
        cleanup.callback(call, cuda.cuMemFreeHost, host)
        flag = np.ctypeslib.as_array((ctypes.c_uint32 * 1).from_address(int(host)))
        flag[0] = 0
        device_flag = call(cuda.cuMemHostGetDevicePointer, host, 0)
        stream = call(cuda.cuStreamCreate, 0)
        cleanup.callback(call, cuda.cuStreamDestroy, stream)

        for round_ in range(args.rounds):
            params = ((device_flag, 100 + round_, SPIN_CYCLES), (None, ctypes.c_uint, ctypes.c_longlong))
            call(cuda.cuLaunchKernel, stamp, 1, 1, 1, 1, 1, 1, 0, stream, params, None)
            call(cuda.cuLaunchHostFunc, stream, record, round_)   # record(round_) on a driver thread
        call(cuda.cuStreamSynchronize, stream)

    want = [(r, 100 + r) for r in range(args.rounds)]
    got = [(r, value) for r, value, _ in seen]
    if got != want:
        print(f"host callbacks saw {got}, expected {want}")
        return False
    thread = seen[0][2] if seen else "?"
    print(f"{args.rounds} host callbacks ran in stream order, each after its kernel (on thread {thread!r})")
    return True


if __name__ == "__main__":
    exit_with(main)
