"""Times the benchmarked calls through one binding, in its own process.

    python worker.py <backend> <kernels.ptx>

serves run.py: first one JSON line, {"calls": [names it can time], "errors":
{name: why it cannot}}, then for each request line "<call> <iterations>" one
line, the nanoseconds per call of that many calls (after a short warm-up). The
backends: cubind, cuda_bindings (NVIDIA's cuda-bindings), cuda_core (NVIDIA's
cuda.core, for the Pythonic launch rows), cupy, pyfloor (the Python-call floor
of _pyfloor.pyx), bare (_bare.pyx: the C call behind that floor, nothing
checked). run.py keeps one process per backend and asks each in
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
# Keyword arguments (`stream=`, `out=`) are written into the call as keywords.
_LOOPS = {}


def _loop(arity, keywords=()):
    key = (arity, keywords)
    if key not in _LOOPS:
        names = [f"a{i}" for i in range(arity)]
        params = ", ".join(["n", "f"] + names + [f"k_{k}" for k in keywords])
        call = ", ".join(names + [f"{k}=k_{k}" for k in keywords])
        src = (f"def loop({params}):\n"
               f"    for _ in range(n):\n"
               f"        f({call})\n")
        scope = {}
        exec(src, scope)
        _LOOPS[key] = scope["loop"]
    return _LOOPS[key]


def _sample(fn, args, iters, after, kwargs=None):
    kwargs = kwargs or {}
    loop = _loop(len(args), tuple(kwargs))
    loop(iters // 10 + 1, fn, *args, *kwargs.values())   # warm up: another process ran on this core
    if after:
        after()
    t0 = time.perf_counter_ns()
    loop(iters, fn, *args, *kwargs.values())
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

# Calls that are no 1:1 driver call (no Python-call floor, no bare call): the
# Pythonic layer's saxpy launch with plain Python values (5 arguments) against
# C's cuLaunchKernel, CuPy's RawModule function and cuda.core's launch, and
# host<->device copies of pageable memory against C's cuMemcpyHtoD/DtoH.
#   saxpy_pythonic         kernel(1, 32, 2.0, x, y, out, 32): the default stream
#   saxpy_pythonic_stream  the same with stream=s
#   saxpy_pythonic_arrays  as saxpy_pythonic with each library's arrays for x, y, out
#   saxpy_launch_config    cubind.launch(s, config, kernel, ...) (cuLaunchKernelEx)
PYTHONIC_LAUNCHES = ("saxpy_pythonic", "saxpy_pythonic_stream", "saxpy_pythonic_arrays", "saxpy_launch_config")
# Copies of each size: HtoD_set (Array.set(host)), DtoH_get (Array.get(out=host)),
# HtoD_to_gpu (cubind.to_gpu(host): allocation, copy and release included).
COPY_SIZES = {"4KiB": 4 << 10, "1MiB": 1 << 20, "256MiB": 256 << 20}
COPY_KINDS = ("HtoD_set", "DtoH_get", "HtoD_to_gpu")
COPIES = tuple(f"{kind}_{size}" for kind in COPY_KINDS for size in COPY_SIZES)
CALLS = tuple(SHAPES) + PYTHONIC_LAUNCHES + COPIES
LAUNCHES = {name for name in SHAPES if name.startswith(("cuLaunchKernel", "cudaLaunchKernel"))} | set(
    PYTHONIC_LAUNCHES)


def copy_bytes(call):
    """The size a copy row moves (None for other rows)."""
    for size, nbytes in COPY_SIZES.items():
        if call in COPIES and call.endswith("_" + size):
            return nbytes
    return None


def _host_buffers():
    """Per size: pageable host arrays (float32) to copy from and into, every
    page touched before timing."""
    import numpy as np
    return {size: (np.full(nbytes // 4, 1.0, np.float32), np.full(nbytes // 4, 0.0, np.float32))
            for size, nbytes in COPY_SIZES.items()}


def _copy_rows(empty, to_device, after):
    """The copy rows of an array library with ``set(host)``, ``get(out=)``,
    ``empty(shape, dtype)`` and a ``to_device(host)`` (to_gpu, asarray):
    (rows, host buffers, device arrays), all kept by the caller."""
    rows, devices = {}, {}
    hosts = _host_buffers()
    for size, (host, host_out) in hosts.items():
        devices[size] = device = empty(host.shape, host.dtype)
        rows[f"HtoD_set_{size}"] = (device.set, (host,), after)
        rows[f"DtoH_get_{size}"] = (device.get, (), after, {"out": host_out})
        rows[f"HtoD_to_gpu_{size}"] = (to_device, (host,), after)
    return rows, hosts, devices


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


def rows_cubind_pythonic(ptx):
    """The 1:1 rows, and the Pythonic layer's: the saxpy launch typed by its
    PTX (x, y, out plain int addresses, or cubind arrays) and the copies of a
    cubind.Array. Everything runs in the context rows_cubind made current (the
    layer uses a current context as it is). No NVRTC here: the process may
    have the fake driver, and the kernel comes from run.py's PTX."""
    import numpy as np

    import cubind
    import cuda
    rows, keep = rows_cubind(ptx)
    module = cubind.Module.load(ptx)
    kernel = module.get_kernel("saxpy")
    stream = cubind.Stream()
    err, dbuf = cuda.cuMemAlloc(3 * 32 * 4)
    _ok(err, "cuMemAlloc")
    x, y, out = int(dbuf), int(dbuf) + 128, int(dbuf) + 256
    arrays = [cubind.empty(32, np.float32) for _ in range(3)]
    config = cubind.LaunchConfig(1, 32)

    def sync_default():
        _ok(cuda.cuStreamSynchronize(None), "cuStreamSynchronize")

    rows.update({
        "saxpy_pythonic": (kernel, (1, 32, 2.0, x, y, out, 32), sync_default),
        "saxpy_pythonic_stream": (kernel, (1, 32, 2.0, x, y, out, 32), stream.synchronize, {"stream": stream}),
        "saxpy_pythonic_arrays": (kernel, (1, 32, 2.0, *arrays, 32), sync_default),
        "saxpy_launch_config": (cubind.launch, (stream, config, kernel, 2.0, x, y, out, 32), stream.synchronize),
    })
    copies, hosts, devices = _copy_rows(cubind.empty, cubind.to_gpu, sync_default)
    rows.update(copies)
    return rows, (keep, module, stream, dbuf, arrays, config, hosts, devices)


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

    # The copies through the 1:1 call (cuda.bindings has no array type; its
    # Pythonic launch is cuda.core's, the cuda_core backend).
    hosts = _host_buffers()
    _, dcopy = _ok(cb.cuMemAlloc(max(COPY_SIZES.values())), "cuMemAlloc")

    def sync_default():
        _ok(cb.cuStreamSynchronize(cb.CUstream(0)), "cuStreamSynchronize")

    for size, (host, host_out) in hosts.items():
        rows[f"HtoD_set_{size}"] = (cb.cuMemcpyHtoD, (dcopy, host.ctypes.data, host.nbytes), sync_default)
        rows[f"DtoH_get_{size}"] = (cb.cuMemcpyDtoH, (host_out.ctypes.data, dcopy, host.nbytes), sync_default)
    return rows, (keep5, packed5, host8, ctx, library, hosts, dcopy)


def _cuda_core():
    """cuda.core's names: the package itself in recent releases,
    cuda.core.experimental in older ones."""
    try:
        import cuda.core as core
        from cuda.core import launch  # noqa: F401  (older releases have only the experimental namespace)
    except ImportError:
        import cuda.core.experimental as core
    return core


def rows_cuda_core(ptx):
    """NVIDIA's Pythonic layer: launch(stream, config, kernel, *args) with the
    arguments it documents (numpy scalars for the float and the size_t: it
    passes a Python float as a double; ints are pointer-sized); its Buffers
    for the arrays row. In the device's primary context, its own process."""
    import numpy as np
    core = _cuda_core()
    dev = core.Device(0)
    dev.set_current()
    try:   # cubind's and CuPy's streams are blocking ones; cuda.core's default is non-blocking
        stream = dev.create_stream(options=core.StreamOptions(nonblocking=False))
    except (AttributeError, TypeError):
        stream = dev.create_stream()
    code = core.ObjectCode.from_ptx(ptx) if hasattr(core.ObjectCode, "from_ptx") else core.ObjectCode(ptx, "ptx")
    kernel = code.get_kernel("saxpy")
    buffers = [dev.allocate(32 * 4, stream=stream) for _ in range(3)]
    stream.sync()
    x, y, out = (int(b.handle) for b in buffers)
    config = core.LaunchConfig(grid=1, block=32)
    a, n = np.float32(2.0), np.uint64(32)
    launch = core.launch
    rows = {
        "saxpy_pythonic_stream": (launch, (stream, config, kernel, a, x, y, out, n), stream.sync),
        "saxpy_launch_config": (launch, (stream, config, kernel, a, x, y, out, n), stream.sync),
    }
    default = getattr(dev, "default_stream", None)
    if default is None:
        reason = f"this cuda.core ({getattr(core, '__version__', '?')}) has no Device.default_stream"
        rows["saxpy_pythonic"] = rows["saxpy_pythonic_arrays"] = reason
    else:
        rows["saxpy_pythonic"] = (launch, (default, config, kernel, a, x, y, out, n), default.sync)
        rows["saxpy_pythonic_arrays"] = (launch, (default, config, kernel, a, *buffers, n), default.sync)
    return rows, (dev, stream, code, buffers)


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
    keep = (keep5, packed5, host8)
    try:
        more, keep_more = _rows_cupy_pythonic(cupy)
    except Exception as exc:   # an older CuPy: the 1:1 rows still run
        why = f"{type(exc).__name__}: {exc}"
        more, keep_more = {name: why for name in PYTHONIC_LAUNCHES[:3] + COPIES}, None
    rows.update(more)
    return rows, (keep, keep_more)


def _rows_cupy_pythonic(cupy):
    """CuPy's Pythonic forms: a RawModule's function (what RawKernel calls)
    with ((1,), (32,), (np.float32(2.0), x, y, out, np.uint64(32))), on the
    current (default) stream or with stream=; ndarray.set/get and
    cupy.asarray (its memory pool: the allocation is usually a cache hit)."""
    import numpy as np
    saxpy = cupy.RawModule(path=PTX_PATH).get_function("saxpy")
    stream = cupy.cuda.Stream(non_blocking=False)
    arrays = [cupy.empty(32, np.float32) for _ in range(3)]
    x, y, out = (a.data.ptr for a in arrays)
    a, n = np.float32(2.0), np.uint64(32)
    null = cupy.cuda.Stream.null

    def sync_default():
        null.synchronize()

    rows = {
        "saxpy_pythonic": (saxpy, ((1,), (32,), (a, x, y, out, n)), sync_default),
        "saxpy_pythonic_stream": (saxpy, ((1,), (32,), (a, x, y, out, n)), stream.synchronize, {"stream": stream}),
        "saxpy_pythonic_arrays": (saxpy, ((1,), (32,), (a, *arrays, n)), sync_default),
    }
    copies, hosts, devices = _copy_rows(cupy.empty, cupy.asarray, sync_default)
    rows.update(copies)
    return rows, (saxpy, stream, arrays, hosts, devices)


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
        fn, args, after = rows[name][:3]
        plain[name] = (getattr(_bare, fn.__name__), tuple(_plain(a) for a in args), after)
    return plain


def bare_copies(rows):
    """The copy rows as _bare's C calls on the same host and device buffers."""
    import _bare
    plain = {}
    for size, nbytes in COPY_SIZES.items():
        set_fn, (host,), after = rows[f"HtoD_set_{size}"][:3]
        device = set_fn.__self__
        host_out = rows[f"DtoH_get_{size}"][3]["out"]
        plain[f"HtoD_set_{size}"] = (_bare.cuMemcpyHtoD, (device.ptr, host.ctypes.data, nbytes), after)
        plain[f"DtoH_get_{size}"] = (_bare.cuMemcpyDtoH, (host_out.ctypes.data, device.ptr, nbytes), after)
        plain[f"HtoD_to_gpu_{size}"] = (_bare.to_gpu, (host.ctypes.data, nbytes), after)
    return plain


def rows_bare(ptx):
    """cubind sets up (context, module, stream, and the Pythonic rows' arrays,
    so that the device allocations live are the cubind worker's); the calls
    are _bare's."""
    rows, keep = rows_cubind_pythonic(ptx)
    plain = bare_of(rows)
    if all(call in rows and not isinstance(rows[call], str) for call in COPIES):
        plain.update(bare_copies(rows))
    return plain, keep


BACKENDS = {"cubind": rows_cubind_pythonic, "cuda_bindings": rows_cuda_bindings, "cuda_core": rows_cuda_core,
            "cupy": rows_cupy, "pyfloor": rows_pyfloor, "bare": rows_bare}
PTX_PATH = None   # the kernels' PTX file (CuPy's RawModule loads from a path)


def _checked(backend, rows):
    """Each call once, outside timing: a call that fails is reported, not
    timed; so is a row given as a string (why the backend cannot make it).
    A row is (function, positional arguments, what ends a sample[, keywords])."""
    calls, errors = [], {}
    for name, row in rows.items():
        if isinstance(row, str):
            errors[name] = row
            continue
        fn, args, after, *kwargs = row
        try:
            result = fn(*args, **(kwargs[0] if kwargs else {}))
            # The 1:1 bindings return a status; CuPy, cuda.core and the Pythonic layer raise.
            if backend in ("cuda_bindings", "bare") or (backend == "cubind" and name in SHAPES):
                _ok(result, name)
            if after:
                after()
            calls.append(name)
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
    return calls, errors


def main():
    global PTX_PATH
    backend, PTX_PATH = sys.argv[1], sys.argv[2]
    with open(PTX_PATH, "rb") as f:
        ptx = f.read()
    try:
        rows, keep = BACKENDS[backend](ptx)
    except Exception as exc:
        if backend != "cuda_core":
            raise
        # No usable cuda.core (too old, no device): its rows say why, the run goes on.
        why = f"{type(exc).__name__}: {exc}"
        rows, keep = {name: why for name in PYTHONIC_LAUNCHES}, None
    calls, errors = _checked(backend, rows)
    print(json.dumps({"calls": calls, "errors": errors}), flush=True)
    gc.disable()   # as timeit does: a collection landing in one sample is noise
    for line in sys.stdin:
        name, iters = line.split()
        fn, args, after, *kwargs = rows[name]
        print(f"{_sample(fn, args, int(iters), after, kwargs[0] if kwargs else None):.3f}", flush=True)
    del keep


if __name__ == "__main__":
    main()
