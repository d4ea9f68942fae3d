"""cubind.Array copies against the same transfers made with the 1:1 calls, in
one process (the harness in run.py times them in separate workers).

    python bench/copies_inprocess.py [--sizes-mib 1 16 256]

Each row: the median over 15 samples of 20 calls (5 for 256 MiB), pageable
numpy host memory touched before timing, the default stream.
"""

import argparse
import statistics
import time

import numpy as np

import cubind
import cuda


def _per_call_us(fn, calls):
    fn()
    samples = []
    for _ in range(15):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - t0) / calls / 1000)
    return statistics.median(samples)


def _rows(nbytes):
    host = np.ones(nbytes // 4, np.float32)
    out = np.ones_like(host)
    array = cubind.to_gpu(host)

    def raw_to_gpu():
        _, ptr = cuda.cuMemAlloc(nbytes)
        cuda.cuMemcpyHtoD(ptr, host, nbytes)
        cuda.cuMemFree(ptr)

    return [
        ("to_gpu", lambda: cubind.to_gpu(host), "cuMemAlloc + cuMemcpyHtoD + cuMemFree", raw_to_gpu),
        ("set(host)", lambda: array.set(host), "cuMemcpyHtoD", lambda: cuda.cuMemcpyHtoD(array.ptr, host, nbytes)),
        ("get(out=host)", lambda: array.get(out=out), "cuMemcpyDtoH",
         lambda: cuda.cuMemcpyDtoH(out, array.ptr, nbytes)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 16, 256])
    args = parser.parse_args()
    cubind.Device(0).set_current()
    print("| size | cubind | µs | 1:1 calls | µs | ratio |\n|---|---|---|---|---|---|")
    for mib in args.sizes_mib:
        calls = 5 if mib >= 256 else 20
        for name, fn, raw_name, raw in _rows(mib << 20):
            ours, theirs = _per_call_us(fn, calls), _per_call_us(raw, calls)
            print(f"| {mib} MiB | {name} | {ours:.1f} | {raw_name} | {theirs:.1f} | {ours / theirs:.3f} |")


if __name__ == "__main__":
    main()
