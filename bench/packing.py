"""What each kernelParams form costs cubind, apart from the launch.

    python bench/packing.py [--rounds N]      # on a GPU machine

Launches a NULL function, which the driver refuses at once, so nothing but
the binding's work differs between the rows; each row is paired, round by
round, with the pre-packed int form. bench/README.md quotes it.
"""

import argparse
import ctypes as C
import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cuda  # noqa: E402

_X = 0x7F0000001000   # a pointer value; never dereferenced, the launch is refused
FORMS = {
    "packed_int": 12345678,
    "none": None,
    "empty": ((), ()),
    "1float": ((2.0,), (C.c_float,)),
    "1ptr": ((_X,), (C.c_void_p,)),
    "1size_t": ((32,), (C.c_size_t,)),
    "1int": ((32,), (C.c_int,)),
    "5float": ((2.0,) * 5, (C.c_float,) * 5),
    "5ptr": ((_X,) * 5, (C.c_void_p,) * 5),
    "values5": ((2.0, _X, _X, _X, 32), (C.c_float, C.c_void_p, C.c_void_p, C.c_void_p, C.c_size_t)),
    "values5_list": ([2.0, _X, _X, _X, 32], [C.c_float, C.c_void_p, C.c_void_p, C.c_void_p, C.c_size_t]),
}


def _loop(n, stream, params):
    launch, null = cuda.cuLaunchKernel, cuda.CUfunction(0)
    for _ in range(n):
        launch(null, 1, 1, 1, 32, 1, 1, 0, stream, params, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    cuda.cuInit(0)
    _, dev = cuda.cuDeviceGet(0)
    _, ctx = cuda.cuCtxCreate(None, 0, dev)
    _, stream = cuda.cuStreamCreate(0)
    gc.disable()
    samples = {name: [] for name in FORMS}
    for _ in range(args.rounds):
        for name, params in FORMS.items():
            _loop(200, stream, params)
            t0 = time.perf_counter_ns()
            _loop(3000, stream, params)
            samples[name].append((time.perf_counter_ns() - t0) / 3000)
    base = samples["packed_int"]
    print("| kernelParams | median | minus pre-packed (paired) |\n|---|---|---|")
    for name, values in samples.items():
        extra = statistics.median(a - b for a, b in zip(values, base))
        print(f"| {name} | {statistics.median(values):.0f} ns | {extra:.0f} ns |")
    cuda.cuCtxDestroy(ctx)


if __name__ == "__main__":
    main()
