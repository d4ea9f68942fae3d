#!/usr/bin/env python3
"""Time a kernel with CUDA events.

Records an event before and after a vector-add kernel on a stream, waits for
the second with cuEventSynchronize and reads the time between them with
cuEventElapsedTime; then checks the kernel's result, that the time is positive,
and that it is no more than the host's wall clock for the same span.

    python examples/event_timing.py --n 16777216 --repeat 20
"""

import argparse
import contextlib
import ctypes
import time

import numpy as np
from _driver_common import call, device_arch, exit_with, gpu_context, load_kernel, open_gpu

KERNEL = """\
extern "C" __global__ void vadd(const float *a, const float *b, float *c, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}
"""
THREADS = 256


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24, help="element count")
    parser.add_argument("--repeat", type=int, default=20, help="launches between the two events")
    args = parser.parse_args(argv)

    cuda, dev = open_gpu()
    arch = device_arch(cuda, dev)
    n = args.n
    rng = np.random.default_rng(0)
    ha, hb = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    hc = np.zeros(n, dtype=np.float32)
    with gpu_context(cuda, dev), contextlib.ExitStack() as cleanup:
        vadd = load_kernel(cuda, cleanup, KERNEL, "vadd", arch)
        da, db, dc = (call(cuda.cuMemAlloc, ha.nbytes) for _ in range(3))
        for dptr in (da, db, dc):
            cleanup.callback(call, cuda.cuMemFree, dptr)
        stream = call(cuda.cuStreamCreate, 0)
        cleanup.callback(call, cuda.cuStreamDestroy, stream)
        start, end = (call(cuda.cuEventCreate, cuda.CUevent_flags.CU_EVENT_DEFAULT) for _ in range(2))
        for event in (start, end):
            cleanup.callback(call, cuda.cuEventDestroy, event)
        call(cuda.cuMemcpyHtoD, da, ha, ha.nbytes)
        call(cuda.cuMemcpyHtoD, db, hb, hb.nbytes)

        params = ((da, db, dc, n), (None, None, None, ctypes.c_size_t))
        blocks = min((n + THREADS - 1) // THREADS, 65535)
        call(cuda.cuLaunchKernel, vadd, blocks, 1, 1, THREADS, 1, 1, 0, stream, params, None)   # warm-up
        call(cuda.cuStreamSynchronize, stream)
        wall = time.perf_counter()
        call(cuda.cuEventRecord, start, stream)
        for _ in range(args.repeat):
            call(cuda.cuLaunchKernel, vadd, blocks, 1, 1, THREADS, 1, 1, 0, stream, params, None)
        call(cuda.cuEventRecord, end, stream)
        call(cuda.cuEventSynchronize, end)
        wall_ms = (time.perf_counter() - wall) * 1e3
        ms = call(cuda.cuEventElapsedTime, start, end)
        call(cuda.cuMemcpyDtoH, hc, dc, hc.nbytes)

    if not np.array_equal(hc, ha + hb):
        print("vadd: WRONG result")
        return False
    if not 0 < ms <= wall_ms * 1.01 + 0.1:
        print(f"cuEventElapsedTime gave {ms} ms for a span the host measured as {wall_ms:.3f} ms")
        return False
    gbps = 3 * ha.nbytes * args.repeat / (ms * 1e-3) / 1e9
    print(f"{args.repeat} x vadd on {n} floats: {ms:.3f} ms by events ({ms / args.repeat:.4f} ms each, "
          f"{gbps:.1f} GB/s), {wall_ms:.3f} ms by the host clock; result matches numpy")
    return True


if __name__ == "__main__":
    exit_with(main)
