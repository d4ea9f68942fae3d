"""Times the benchmarked calls through one binding, in its own process.

    python worker.py <backend> <kernels.ptx>

serves run.py: first one JSON line, {"calls": [names it can time], "errors":
{name: why it cannot}}, then for each request line "<call> <iterations>" one
line, the nanoseconds per call of that many calls (after a short warm-up). The
backends: cubind, cuda_bindings (NVIDIA's cuda-bindings), cupy, pyfloor (the
Python-call floor of _pyfloor.pyx), bare (_bare.pyx: the C call behind that
floor, nothing checked). run.py keeps one process per backend and asks each in
turn for the same call, so that every backend's sample of a call is taken
within milliseconds of the others'.
"""

import ctypes
import gc
import json
import sys
import time

# Loops are compiled per arity so that each iteration is exactly one call of a
# local with local arguments: the same work for every backend.
_LOOPS = {}


def _loop(arity):
    if arity not in _LOOPS:
        names = ", ".join(f"a{i}" for i in range(arity))
        src = (f"def loop(n, f{', ' if arity else ''}{names}):\n"
               f"    for _ in range(n):\n"
               f"        f({names})\n")
        scope = {}
        exec(src, scope)
        _LOOPS[arity] = scope["loop"]
    return _LOOPS[arity]


def _sample(fn, args, iters, after):
    loop = _loop(len(args))
    loop(iters // 10 + 1, fn, *args)   # warm up: another process ran on this core
    if after:
        after()
    t0 = time.perf_counter_ns()
    loop(iters, fn, *args)
    if after:
        after()
    return (time.perf_counter_ns() - t0) / iters


# Call name -> (arguments of cubind's function, length of its result, whether
# it releases the GIL: bindings/driver.toml's [gil] keeps it for the queries):
# the shape the Python-call floor reproduces.
SHAPES = {
    "cuCtxGetCurrent": (0, 2, False),
    "cuDeviceGet": (1, 2, False),
    "cuDeviceGetAttribute": (2, 2, False),
    "cuPointerGetAttribute": (2, 2, False),
    "cuEventRecord": (2, 1, True),
    "cuStreamQuery": (1, 1, True),
    "cuMemcpyHtoDAsync_8B": (4, 1, True),
    "cuLaunchKernel_0": (11, 1, True),
    "cuLaunchKernel_5_values": (11, 1, True),
    "cuLaunchKernel_5_packed": (11, 1, True),
    "cuLaunchKernel_16ptr": (11, 1, True),
    "cuLaunchKernel_256int": (11, 1, True),
    "nvrtcVersion": (0, 3, False),
    # The runtime (cuda.cudart): its kernel is the driver library's CUkernel,
    # which the runtime takes as its cudaKernel_t.
    "cudaGetDevice": (0, 2, False),
    "cudaStreamQuery": (1, 1, True),
    "cudaLaunchKernel_5_values": (6, 1, True),
    "cudaLaunchKernel_5_packed": (6, 1, True),
}
LAUNCHES = {name for name in SHAPES if name.startswith(("cuLaunchKernel", "cudaLaunchKernel"))}


def _ok(result, call):
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        raise RuntimeError(f"{call} returned {err!r}")
    return result


def _saxpy_values(x, y, out):
    types = (ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    return ((2.0, x, y, out, 32), types)


def _packed(values_and_types):
    """A numpy uint64 array of argument addresses (and what keeps them alive)."""
    import numpy as np
    values, types = values_and_types
    storage = [np.array([v], dtype=np.float32 if t is ctypes.c_float else np.uint64)
               for v, t in zip(values, types)]
    return np.array([s.ctypes.data for s in storage], dtype=np.uint64), storage


def rows_cubind(ptx):
    import cuda
    import nvrtc
    from cuda import cudart
    _ok(cuda.cuInit(0), "cuInit")
    _, dev = _ok(cuda.cuDeviceGet(0), "cuDeviceGet")
    _, ctx = _ok(cuda.cuCtxCreate(None, 0, dev), "cuCtxCreate")
    _, module = _ok(cuda.cuModuleLoadData(ptx), "cuModuleLoadData")
    k = {name: _ok(cuda.cuModuleGetFunction(module, name.encode()), name)[1]
         for name in ("k0", "saxpy", "ptr16", "int256")}
    _, stream = _ok(cuda.cuStreamCreate(0), "cuStreamCreate")
    _, event = _ok(cuda.cuEventCreate(cuda.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    _, dbuf = _ok(cuda.cuMemAlloc(3 * 32 * 4), "cuMemAlloc")
    base = int(dbuf)
    host8 = ctypes.c_longlong(0)
    memtype = ctypes.c_uint(0)
    values5 = _saxpy_values(base, base + 128, base + 256)
    packed5, keep5 = _packed(values5)
    ptrs16 = (tuple([base] * 16), (ctypes.c_void_p,) * 16)
    ints256 = (tuple(range(256)), (ctypes.c_int,) * 256)

    def sync():
        _ok(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize")

    def launch(f, params):
        return (cuda.cuLaunchKernel, (f, 1, 1, 1, 32, 1, 1, 0, stream, params, None), sync)

    attr = cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    ptr_attr = cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    rows = {
        "cuCtxGetCurrent": (cuda.cuCtxGetCurrent, (), None),
        "cuDeviceGet": (cuda.cuDeviceGet, (0,), None),
        "cuDeviceGetAttribute": (cuda.cuDeviceGetAttribute, (attr, dev), None),
        # The classic form: (attribute, ptr) -> (err, value typed by the attribute).
        "cuPointerGetAttribute": (cuda.cuPointerGetAttribute, (ptr_attr, dbuf), None),
        "cuEventRecord": (cuda.cuEventRecord, (event, stream), sync),
        "cuStreamQuery": (cuda.cuStreamQuery, (stream,), None),
        "cuMemcpyHtoDAsync_8B": (cuda.cuMemcpyHtoDAsync, (dbuf, ctypes.addressof(host8), 8, stream), sync),
        "cuLaunchKernel_0": launch(k["k0"], None),
        "cuLaunchKernel_5_values": launch(k["saxpy"], values5),
        "cuLaunchKernel_5_packed": launch(k["saxpy"], packed5.ctypes.data),
        "cuLaunchKernel_16ptr": launch(k["ptr16"], ptrs16),
        "cuLaunchKernel_256int": launch(k["int256"], ints256),
        "nvrtcVersion": (nvrtc.nvrtcVersion, (), None),
    }
    _, library = _ok(cuda.cuLibraryLoadData(ptx, None, None, 0, None, None, 0), "cuLibraryLoadData")
    _, kernel = _ok(cuda.cuLibraryGetKernel(library, b"saxpy"), "cuLibraryGetKernel")
    grid, block = cudart.dim3(x=1, y=1, z=1), cudart.dim3(x=32, y=1, z=1)

    def runtime_launch(params):
        return (cudart.cudaLaunchKernel, (kernel, grid, block, params, 0, stream), sync)

    rows.update({
        "cudaGetDevice": (cudart.cudaGetDevice, (), None),
        "cudaStreamQuery": (cudart.cudaStreamQuery, (stream,), None),
        "cudaLaunchKernel_5_values": runtime_launch(values5),
        "cudaLaunchKernel_5_packed": runtime_launch(packed5.ctypes.data),
    })
    return rows, (keep5, packed5, host8, memtype, ctx, library)


def rows_cuda_bindings(ptx):
    from cuda.bindings import driver as cb
    from cuda.bindings import nvrtc as cbn
    from cuda.bindings import runtime as cbr
    _ok(cb.cuInit(0), "cuInit")
    _, dev = _ok(cb.cuDeviceGet(0), "cuDeviceGet")
    ctx_params = cb.CUctxCreateParams() if hasattr(cb, "CUctxCreateParams") else None
    _, ctx = _ok(cb.cuCtxCreate(ctx_params, 0, dev), "cuCtxCreate")
    _, module = _ok(cb.cuModuleLoadData(ptx), "cuModuleLoadData")
    k = {name: _ok(cb.cuModuleGetFunction(module, name.encode()), name)[1]
         for name in ("k0", "saxpy", "ptr16", "int256")}
    _, stream = _ok(cb.cuStreamCreate(0), "cuStreamCreate")
    _, event = _ok(cb.cuEventCreate(cb.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    _, dbuf = _ok(cb.cuMemAlloc(3 * 32 * 4), "cuMemAlloc")
    base = int(dbuf)
    host8 = ctypes.c_longlong(0)
    values5 = _saxpy_values(base, base + 128, base + 256)
    packed5, keep5 = _packed(values5)
    ptrs16 = (tuple([base] * 16), (ctypes.c_void_p,) * 16)
    ints256 = (tuple(range(256)), (ctypes.c_int,) * 256)

    def sync():
        _ok(cb.cuStreamSynchronize(stream), "cuStreamSynchronize")

    def launch(f, params):
        return (cb.cuLaunchKernel, (f, 1, 1, 1, 32, 1, 1, 0, stream, params, 0), sync)

    attr = cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    ptr_attr = cb.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    rows = {
        "cuCtxGetCurrent": (cb.cuCtxGetCurrent, (), None),
        "cuDeviceGet": (cb.cuDeviceGet, (0,), None),
        "cuDeviceGetAttribute": (cb.cuDeviceGetAttribute, (attr, dev), None),
        "cuPointerGetAttribute": (cb.cuPointerGetAttribute, (ptr_attr, dbuf), None),
        "cuEventRecord": (cb.cuEventRecord, (event, stream), sync),
        "cuStreamQuery": (cb.cuStreamQuery, (stream,), None),
        "cuMemcpyHtoDAsync_8B": (cb.cuMemcpyHtoDAsync, (dbuf, ctypes.addressof(host8), 8, stream), sync),
        "cuLaunchKernel_0": launch(k["k0"], 0),
        "cuLaunchKernel_5_values": launch(k["saxpy"], values5),
        "cuLaunchKernel_5_packed": launch(k["saxpy"], packed5.ctypes.data),
        "cuLaunchKernel_16ptr": launch(k["ptr16"], ptrs16),
        "cuLaunchKernel_256int": launch(k["int256"], ints256),
        "nvrtcVersion": (cbn.nvrtcVersion, (), None),
    }
    _, library = _ok(cb.cuLibraryLoadData(ptx, None, None, 0, None, None, 0), "cuLibraryLoadData")
    _, kernel = _ok(cb.cuLibraryGetKernel(library, b"saxpy"), "cuLibraryGetKernel")
    grid, block = cbr.dim3(), cbr.dim3()
    grid.x, grid.y, grid.z = 1, 1, 1
    block.x, block.y, block.z = 32, 1, 1

    rows.update({
        "cudaGetDevice": (cbr.cudaGetDevice, (), None),
        "cudaStreamQuery": (cbr.cudaStreamQuery, (stream,), None),
    })
    # cuda.bindings 13 leaves cudaLaunchKernel unbound (its `const void *func`);
    # a later version may bind it: its func is then the kernel's address.
    if hasattr(cbr, "cudaLaunchKernel"):
        def runtime_launch(params):
            return (cbr.cudaLaunchKernel, (int(kernel), grid, block, params, 0, stream), sync)

        rows["cudaLaunchKernel_5_values"] = runtime_launch(values5)
        rows["cudaLaunchKernel_5_packed"] = runtime_launch(packed5.ctypes.data)
    return rows, (keep5, packed5, host8, ctx, library)


def rows_cupy(ptx):
    """CuPy's closest equivalents: its driver module where it has the call,
    else its runtime module (same C entry points underneath); only the
    pre-packed launch form exists there."""
    import cupy
    from cupy.cuda import driver, runtime
    from cupy.cuda import nvrtc as cnv
    cupy.cuda.Device(0).use()
    runtime.free(runtime.malloc(1))   # creates the primary context
    module = driver.moduleLoadData(ptx)
    k = {name: driver.moduleGetFunction(module, name) for name in ("k0", "saxpy")}
    stream = runtime.streamCreate()
    event = runtime.eventCreateWithFlags(runtime.eventDisableTiming)
    dbuf = runtime.malloc(3 * 32 * 4)
    host8 = ctypes.c_longlong(0)
    packed5, keep5 = _packed(_saxpy_values(dbuf, dbuf + 128, dbuf + 256))

    def sync():
        runtime.streamSynchronize(stream)

    def launch(f, params):
        return (driver.launchKernel, (f, 1, 1, 1, 32, 1, 1, 0, stream, params, 0), sync)

    attr = runtime.cudaDevAttrMultiProcessorCount
    rows = {
        "cuCtxGetCurrent": (driver.ctxGetCurrent, (), None),
        "cuDeviceGetAttribute": (runtime.deviceGetAttribute, (attr, 0), None),
        "cuEventRecord": (runtime.eventRecord, (event, stream), sync),
        "cuStreamQuery": (runtime.streamQuery, (stream,), None),
        "cuMemcpyHtoDAsync_8B": (runtime.memcpyAsync,
                                 (dbuf, ctypes.addressof(host8), 8, runtime.memcpyHostToDevice, stream), sync),
        "cuLaunchKernel_0": launch(k["k0"], 0),
        "cuLaunchKernel_5_packed": launch(k["saxpy"], packed5.ctypes.data),
        "nvrtcVersion": (cnv.getVersion, (), None),
        "cudaGetDevice": (runtime.getDevice, (), None),
        "cudaStreamQuery": (runtime.streamQuery, (stream,), None),
    }
    return rows, (keep5, packed5, host8)


def rows_pyfloor(ptx):
    import _pyfloor
    rows = {}
    for name, (nargs, nret, nogil) in SHAPES.items():
        fn = getattr(_pyfloor, f"args{nargs}_ret{nret}{'_nogil' if nogil else ''}")
        rows[name] = (fn, tuple(range(nargs)), None)
    return rows, None


BARE_CALLS = ("cuCtxGetCurrent", "cuDeviceGet", "cuDeviceGetAttribute", "cuPointerGetAttribute", "cuEventRecord",
              "cuStreamQuery", "cuMemcpyHtoDAsync_8B", "cuLaunchKernel_0", "cuLaunchKernel_5_packed", "nvrtcVersion",
              "cudaGetDevice", "cudaStreamQuery", "cudaLaunchKernel_5_packed")


def _plain(value):
    """A handle or pointer as an int; a dim3 as the (x, y, z) C tuple _bare takes."""
    if value is None:
        return 0
    if hasattr(value, "x") and hasattr(value, "z"):
        return (value.x, value.y, value.z)
    return int(value)


def bare_of(rows):
    """cubind's rows with _bare's functions, which take the handles as ints."""
    import _bare
    plain = {}
    for name in BARE_CALLS:
        fn, args, after = rows[name]
        plain[name] = (getattr(_bare, fn.__name__), tuple(_plain(a) for a in args), after)
    return plain


def rows_bare(ptx):
    """cubind sets up (context, module, stream); the calls are _bare's."""
    rows, keep = rows_cubind(ptx)
    return bare_of(rows), keep


BACKENDS = {"cubind": rows_cubind, "cuda_bindings": rows_cuda_bindings, "cupy": rows_cupy,
            "pyfloor": rows_pyfloor, "bare": rows_bare}


def _checked(backend, rows):
    """Each call once, outside timing: a call that fails is reported, not timed."""
    calls, errors = [], {}
    for name, (fn, args, _) in rows.items():
        try:
            if backend in ("cubind", "cuda_bindings", "bare"):   # CuPy raises on its own
                _ok(fn(*args), name)
            else:
                fn(*args)
            calls.append(name)
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
    return calls, errors


def main():
    backend, ptx_path = sys.argv[1], sys.argv[2]
    with open(ptx_path, "rb") as f:
        ptx = f.read()
    rows, keep = BACKENDS[backend](ptx)
    calls, errors = _checked(backend, rows)
    print(json.dumps({"calls": calls, "errors": errors}), flush=True)
    gc.disable()   # as timeit does: a collection landing in one sample is noise
    for line in sys.stdin:
        name, iters = line.split()
        fn, args, after = rows[name]
        print(f"{_sample(fn, args, int(iters), after):.3f}", flush=True)
    del keep


if __name__ == "__main__":
    main()
