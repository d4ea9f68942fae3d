#!/usr/bin/env python3
"""Capture kernel launches into a CUDA graph and replay it.

Three launches on a stream (x += 1, x *= 3, x -= 2, in unsigned 32-bit
arithmetic) are captured with cuStreamBeginCapture/cuStreamEndCapture,
instantiated once with cuGraphInstantiate and launched ``--replays`` times;
the result is checked against the same arithmetic on the host. Capturing
runs nothing: x still holds its start values after the capture.

    python examples/graph_capture.py --replays 10
"""

import argparse
import contextlib
import ctypes

import numpy as np
from _driver_common import call, device_arch, exit_with, gpu_context, load_kernel, open_gpu

KERNELS = """\
extern "C" __global__ void axpb(unsigned int *x, unsigned int a, unsigned int b, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = a * x[i] + b;
    }
}
"""
THREADS = 256
STEPS = [(1, 1), (3, 0), (1, 2**32 - 2)]   # x = a * x + b (mod 2**32), in this order: x = 3x + 1


def expected(n, replays):
    host = np.arange(n, dtype=np.uint64)
    for _ in range(replays):
        for a, b in STEPS:
            host = (a * host + b) % 2**32
    return host.astype(np.uint32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096, help="element count")
    parser.add_argument("--replays", type=int, default=10, help="graph launches")
    args = parser.parse_args(argv)

    cuda, dev = open_gpu()
    arch = device_arch(cuda, dev)
    n = args.n
    start = np.arange(n, dtype=np.uint32)
    result = np.zeros(n, dtype=np.uint32)
    with gpu_context(cuda, dev), contextlib.ExitStack() as cleanup:
        axpb = load_kernel(cuda, cleanup, KERNELS, "axpb", arch)
        x = call(cuda.cuMemAlloc, start.nbytes)
        cleanup.callback(call, cuda.cuMemFree, x)
        stream = call(cuda.cuStreamCreate, 0)
        cleanup.callback(call, cuda.cuStreamDestroy, stream)
        call(cuda.cuMemcpyHtoD, x, start, start.nbytes)

        mode = cuda.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
        call(cuda.cuStreamBeginCapture, stream, mode)
        status = call(cuda.cuStreamIsCapturing, stream)
        blocks = (n + THREADS - 1) // THREADS
        for a, b in STEPS:
            params = ((x, a, b, n), (None, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint))
            call(cuda.cuLaunchKernel, axpb, blocks, 1, 1, THREADS, 1, 1, 0, stream, params, None)
        graph = call(cuda.cuStreamEndCapture, stream)
        cleanup.callback(call, cuda.cuGraphDestroy, graph)
        call(cuda.cuStreamSynchronize, stream)
        call(cuda.cuMemcpyDtoH, result, x, result.nbytes)
        if status != cuda.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE:
            print(f"cuStreamIsCapturing during the capture: {status!r}, not ACTIVE")
            return False
        if not np.array_equal(result, start):
            print("capturing ran the kernels: x changed before the graph was launched")
            return False

        graph_exec = call(cuda.cuGraphInstantiate, graph, 0)
        cleanup.callback(call, cuda.cuGraphExecDestroy, graph_exec)
        for _ in range(args.replays):
            call(cuda.cuGraphLaunch, graph_exec, stream)
        call(cuda.cuStreamSynchronize, stream)
        call(cuda.cuMemcpyDtoH, result, x, result.nbytes)

    want = expected(n, args.replays)
    if not np.array_equal(result, want):
        bad = int(np.flatnonzero(result != want)[0])
        print(f"graph of {len(STEPS)} kernels x {args.replays} replays: WRONG at {bad}: {result[bad]} != {want[bad]}")
        return False
    print(f"graph of {len(STEPS)} kernels replayed {args.replays} times on {n} elements: result matches numpy")
    return True


if __name__ == "__main__":
    exit_with(main)
