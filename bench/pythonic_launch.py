"""What a launch through cubind's Pythonic layer costs, against the 1:1 binding.

    python bench/pythonic_launch.py [--rounds N]                     # on a GPU machine
    CUBIND_CUDA_LIBRARY=.bench/fake/libcuda.so.1 python bench/pythonic_launch.py   # no GPU

Launches saxpy (5 arguments: a float, three device pointers, a size_t) on one
stream, a block of 32 threads over 32 elements, in these forms:

- ``kernel(...)``: ``kernel(1, 32, 2.0, x, y, out, 32)`` with plain Python
  values, typed by the kernel's PTX (x, y, out are int addresses);
- ``kernel(...) no keywords``: the same on the default stream, without
  ``stream=``: what the keyword costs (CPython builds a dict for it);
- ``kernel(... arrays)``: the same with objects exposing
  ``__cuda_array_interface__`` for the pointers (the array-library case);
  ``... no keywords``: on the default stream, as the cubind.Array row;
- ``kernel(... cubind.Array)``: no keywords, the pointers from cubind arrays;
- ``kernel(... CuPy arrays)``, ``kernel(... torch tensors)``: as ``kernel(...
  arrays)`` with those libraries' arrays, where they import and have a GPU,
  with ``stream=`` and (``... no keywords``) without: the latter compare
  with the cubind.Array row, the keyword's dict not counted;
- with the fake driver instead, ``kernel(... CuPy-shaped)`` and
  ``kernel(... torch-shaped)``, no keywords: stand-ins read the way the
  launch path reads those libraries' arrays (``.data.ptr``; ``is_cuda`` and
  ``data_ptr()``), C-level attributes as theirs are;
- ``3 x __cuda_array_interface__ alone``: the stand-in's property read three
  times and nothing else: what the protocol itself costs, the part of
  ``kernel(... arrays)`` no consumer can avoid;
- ``3 x torch is_cuda + data_ptr() alone``: the two reads the launch makes
  of each torch tensor, and nothing else: PyTorch's own part of
  ``kernel(... torch tensors)``;
- ``kernel(... torch tensors by DLPack alone)``: the same tensors behind an
  object offering ``__dlpack__`` only (a capsule per argument and launch),
  and ``3 x torch __dlpack__() alone``, the capsules' own cost;
- ``launch(stream, config, ...)``: ``cubind.launch`` with a ``LaunchConfig``
  (``cuLaunchKernelEx``);
- 1:1 ``(values, types)``: ``cuda.cuLaunchKernel(..., ((2.0, x, y, out, 32),
  (c_float, c_void_p, c_void_p, c_void_p, c_size_t)), None)``;
- 1:1 pre-packed: the same call with a ready ``void*[]`` address.

Each round times every form in turn (3000 launches after 300 of warm-up, the
stream synchronized after each sample), the order rotating; a cell is the
median over the rounds, the last column the median of the paired differences
against the 1:1 ``(values, types)`` form. With the fake driver the launch
itself costs nothing: the numbers are the binding's work alone.

The kernel's PTX is compiled in a child process: NVRTC must not run in a
process that has loaded the fake driver (it looks for the real driver's
export table there).
"""

import argparse
import ctypes as C
import gc
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
N = 32
ITERS = 3000


def compile_ptx():
    """saxpy's PTX, compiled by cubind.Program in a child process."""
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_LIBRARY"}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    code = ("import sys, cubind; sys.stdout.buffer.write(cubind.Program(sys.stdin.read()).compile('ptx').code)")
    done = subprocess.run([sys.executable, "-c", code], input=SAXPY.encode(), env=env, capture_output=True,
                          check=False)
    if done.returncode != 0:
        sys.exit(f"compiling saxpy failed:\n{done.stderr.decode()}")
    return done.stdout


class DeviceBuffer:
    """The smallest array-library stand-in: a device pointer behind
    ``__cuda_array_interface__``."""

    def __init__(self, ptr):
        self._ptr = int(ptr)

    @property
    def __cuda_array_interface__(self):
        return {"shape": (N,), "typestr": "<f4", "data": (self._ptr, False), "version": 3}


class _MemoryPointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class CupyShaped:
    """cupy.ndarray as the launch path knows it: its module's name, ``.data.ptr``."""

    __module__ = "cupy._core.core"
    __slots__ = ("data",)

    def __init__(self, ptr):
        self.data = _MemoryPointer(int(ptr))

    @property
    def __cuda_array_interface__(self):
        return {"shape": (N,), "typestr": "<f4", "data": (self.data.ptr, False), "version": 3}


class TorchShaped:
    """torch.Tensor as the launch path knows it: its module's name, ``is_cuda``
    and ``data_ptr()`` (C in PyTorch: a slot and a bound C method here), ``__dlpack__``."""

    __module__ = "torch"
    __slots__ = ("is_cuda", "data_ptr")

    def __init__(self, ptr):
        self.is_cuda = True
        self.data_ptr = int(ptr).__index__

    def __dlpack__(self, stream=None):
        raise NotImplementedError


class DLPackAlone:
    """An array known by DLPack alone (no ``__cuda_array_interface__``, no
    pointer attribute): each launch asks its producer for a capsule."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        return self.array.__dlpack__(stream=stream, max_version=max_version)


def _foreign_forms(kernel, stream, pointers):
    """The launch with CuPy's and PyTorch's own device arrays, where they
    import and see a GPU; with the fake driver (they would load the real
    one), with stand-ins of their shape."""
    forms = {}
    if os.environ.get("CUBIND_CUDA_LIBRARY"):
        cs, ts = [CupyShaped(p) for p in pointers], [TorchShaped(p) for p in pointers]
        forms["kernel(... CuPy-shaped)"] = lambda: kernel(1, N, 2.0, *cs, N)
        forms["kernel(... torch-shaped)"] = lambda: kernel(1, N, 2.0, *ts, N)
        return forms
    try:
        import cupy

        xs = [cupy.zeros(N, cupy.float32) for _ in range(3)]
        forms["kernel(... CuPy arrays)"] = lambda: kernel(1, N, 2.0, *xs, N, stream=stream)
        forms["kernel(... CuPy arrays) no keywords"] = lambda: kernel(1, N, 2.0, *xs, N)
    except Exception as exc:  # not installed, or no GPU for it
        print(f"pythonic_launch: no CuPy row: {exc}", file=sys.stderr)
    try:
        import torch

        if torch.cuda.is_available():
            ts = [torch.zeros(N, dtype=torch.float32, device="cuda") for _ in range(3)]
            forms["kernel(... torch tensors)"] = lambda: kernel(1, N, 2.0, *ts, N, stream=stream)
            forms["kernel(... torch tensors) no keywords"] = lambda: kernel(1, N, 2.0, *ts, N)

            def read_torch():
                for t in ts:
                    t.is_cuda and t.data_ptr()  # noqa: B015 (the reads are what is timed)

            forms["3 x torch is_cuda + data_ptr() alone"] = read_torch
            ds = [DLPackAlone(t) for t in ts]
            forms["kernel(... torch tensors by DLPack alone) no keywords"] = lambda: kernel(1, N, 2.0, *ds, N)

            try:
                ts[0].__dlpack__(stream=1, max_version=(1, 1))
                versioned = {"max_version": (1, 1)}
            except TypeError:  # a PyTorch older than DLPack 1.0's keyword: asked as the launch then asks
                versioned = {}

            def capsules():
                for t in ts:
                    t.__dlpack__(stream=1, **versioned)

            forms["3 x torch __dlpack__() alone"] = capsules
    except Exception as exc:
        print(f"pythonic_launch: no PyTorch row: {exc}", file=sys.stderr)
    return forms


def _time(fn, stream_sync):
    for _ in range(ITERS // 10):
        fn()
    stream_sync()
    t0 = time.perf_counter_ns()
    for _ in range(ITERS):
        fn()
    stream_sync()
    return (time.perf_counter_ns() - t0) / ITERS


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    ptx = compile_ptx()

    import cubind
    import cuda

    module = cubind.Module.load(ptx)
    kernel = module.get_kernel("saxpy")
    stream = cubind.Stream()
    free = []
    for _ in range(3):
        err, ptr = cuda.cuMemAlloc(N * 4)
        assert err == 0, err
        free.append(ptr)
    x, y, out = (int(p) for p in free)
    arrays = [DeviceBuffer(p) for p in free]
    import numpy as np

    device_arrays = [cubind.empty(N, np.float32) for _ in range(3)]
    func = cuda.CUfunction(int(kernel.handle))  # a CUkernel is launched as a CUfunction
    raw_stream = stream.handle
    types = (C.c_float, C.c_void_p, C.c_void_p, C.c_void_p, C.c_size_t)
    values = (2.0, x, y, out, N)
    slots = [C.c_float(2.0), C.c_void_p(int(x)), C.c_void_p(int(y)), C.c_void_p(int(out)), C.c_size_t(N)]
    packed = (C.c_void_p * 5)(*[C.addressof(s) for s in slots])
    packed_addr = C.addressof(packed)
    config = cubind.LaunchConfig(1, N)
    launch_1to1 = cuda.cuLaunchKernel

    def read_interfaces():
        for a in arrays:
            a.__cuda_array_interface__  # noqa: B018 (the read is what is timed)

    forms = {
        "kernel(...)": lambda: kernel(1, N, 2.0, x, y, out, N, stream=stream),
        "kernel(...) no keywords": lambda: kernel(1, N, 2.0, x, y, out, N),
        "kernel(... arrays)": lambda: kernel(1, N, 2.0, *arrays, N, stream=stream),
        "kernel(... arrays) no keywords": lambda: kernel(1, N, 2.0, *arrays, N),
        "kernel(... cubind.Array)": lambda: kernel(1, N, 2.0, *device_arrays, N),
        "launch(stream, config, ...)": lambda: cubind.launch(stream, config, kernel, 2.0, x, y, out, N),
        "1:1 (values, types)": lambda: launch_1to1(func, 1, 1, 1, N, 1, 1, 0, raw_stream, (values, types), None),
        "1:1 pre-packed": lambda: launch_1to1(func, 1, 1, 1, N, 1, 1, 0, raw_stream, packed_addr, None),
        "3 x __cuda_array_interface__ alone": read_interfaces,
    }
    forms.update(_foreign_forms(kernel, stream, free))
    for fn in forms.values():  # each form once, checked: a failure here is a bug, not a number
        result = fn()
        assert result is None or result[0] == 0, result
    gc.disable()
    samples = {name: [] for name in forms}
    names = list(forms)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            samples[name].append(_time(forms[name], stream.synchronize))
    gc.enable()
    base = samples["1:1 (values, types)"]
    device = os.environ.get("CUBIND_CUDA_LIBRARY", "") or "the real driver"
    print(f"saxpy launch, 5 arguments, per call ({args.rounds} rounds of {ITERS}; driver: {device})\n")
    print("| form | median | 10th pct | minus 1:1 (values, types), paired |\n|---|---|---|---|")
    for name, times in samples.items():
        diff = statistics.median(a - b for a, b in zip(times, base))
        tenth = sorted(times)[len(times) // 10]
        print(f"| {name} | {statistics.median(times):.0f} ns | {tenth:.0f} ns | {diff:+.0f} ns |")
    stream.synchronize()
    for ptr in free:
        cuda.cuMemFree(ptr)


if __name__ == "__main__":
    main()
