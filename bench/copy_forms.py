"""Which driver calls a host-to-device copy of pageable memory should use:
each form timed in one process, paired round by round (issue 33, item 2).

    python bench/copy_forms.py [--rounds N]          # on a GPU machine

Forms, for 4 KiB, 1 MiB and 256 MiB of pageable numpy memory (written
before timing), the device side one allocation, through the 1:1 ``cuda``
module (the same Python cost in every form):

- ``HtoD``: ``cuMemcpyHtoD``, what ``Array.set`` calls today;
- ``HtoDAsync+sync``: ``cuMemcpyHtoDAsync`` on the default stream, then
  ``cuStreamSynchronize``: the queued form, made to wait for the transfer;
- ``HtoDAsync``: the queued form alone (the sample's last copy waited for);
  from pageable memory the driver has staged the buffer when it returns;
- ``pointer check``: ``cuPointerGetAttributes`` of the host buffer's memory
  type, what telling pinned from pageable memory costs per copy (a queued
  copy from pinned memory returns before the transfer);
- ``to_gpu: alloc+HtoD+free``: ``cuMemAlloc``, ``cuMemcpyHtoD``, ``cuMemFree``;
- ``to_gpu: pool``: ``cuMemAllocAsync``, ``cuMemcpyHtoDAsync``,
  ``cuMemFreeAsync`` on the default stream from the device's default pool
  with its release threshold raised (a stream-ordered cache), one
  synchronization per copy.

A cell is the median per call over the rounds; the last column the median of
paired differences against ``HtoD`` (``to_gpu: alloc+HtoD+free`` for the pool).
"""

import argparse
import statistics
import time

import numpy as np

import cuda

SIZES = {"4KiB": (4 << 10, 500), "1MiB": (1 << 20, 40), "256MiB": (256 << 20, 2)}


def ok(result):
    assert result[0] == 0, result
    return result[1] if len(result) == 2 else result[1:]


def _forms(host, dptr, nbytes):
    memtype = cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE

    def htod():
        ok(cuda.cuMemcpyHtoD(dptr, host, nbytes))

    def htod_async_sync():
        ok(cuda.cuMemcpyHtoDAsync(dptr, host, nbytes, 0))
        ok(cuda.cuStreamSynchronize(0))

    def htod_async():
        ok(cuda.cuMemcpyHtoDAsync(dptr, host, nbytes, 0))

    def check():
        ok(cuda.cuPointerGetAttributes(1, [memtype], host.ctypes.data))

    def alloc_copy_free():
        p = ok(cuda.cuMemAlloc(nbytes))
        ok(cuda.cuMemcpyHtoD(p, host, nbytes))
        ok(cuda.cuMemFree(p))

    def pooled():
        p = ok(cuda.cuMemAllocAsync(nbytes, 0))
        ok(cuda.cuMemcpyHtoDAsync(p, host, nbytes, 0))
        ok(cuda.cuMemFreeAsync(p, 0))
        ok(cuda.cuStreamSynchronize(0))

    return {"HtoD": htod, "HtoDAsync+sync": htod_async_sync, "HtoDAsync": htod_async, "pointer check": check,
            "to_gpu: alloc+HtoD+free": alloc_copy_free, "to_gpu: pool": pooled}


def _sample(fn, calls):
    fn()
    ok(cuda.cuStreamSynchronize(0))
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    ok(cuda.cuStreamSynchronize(0))
    return (time.perf_counter_ns() - t0) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    ok(cuda.cuInit(0))
    dev = ok(cuda.cuDeviceGet(0))
    ctx = ok(cuda.cuDevicePrimaryCtxRetain(dev))
    ok(cuda.cuCtxSetCurrent(ctx))
    pool = ok(cuda.cuDeviceGetDefaultMemPool(dev))
    threshold = cuda.cuuint64_t(0xFFFFFFFFFFFFFFFF)
    ok(cuda.cuMemPoolSetAttribute(pool, cuda.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold))
    print("| size | form | per call | minus the reference, paired |\n|---|---|---|---|")
    for label, (nbytes, calls) in SIZES.items():
        host = np.ones(nbytes // 4, np.float32)
        dptr = ok(cuda.cuMemAlloc(nbytes))
        forms = _forms(host, dptr, nbytes)
        samples = {name: [] for name in forms}
        names = list(forms)
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                samples[name].append(_sample(forms[name], calls))
        for name, times in samples.items():
            ref = samples["to_gpu: alloc+HtoD+free" if name == "to_gpu: pool" else "HtoD"]
            diff = statistics.median(a - b for a, b in zip(times, ref))
            print(f"| {label} | {name} | {statistics.median(times) / 1000:.2f} µs | {diff / 1000:+.2f} µs |")
        ok(cuda.cuMemFree(dptr))
    ok(cuda.cuDevicePrimaryCtxRelease(dev))


if __name__ == "__main__":
    main()
