"""Running work through the driver package on a real GPU: modules (PTX and
CUBIN, JIT logs, libraries and kernels), streams and events, graphs from
stream capture, host callbacks (and their exceptions), the GIL policy of
queries, tensor maps, the per-thread default stream and the profiler.
"""

import ctypes
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests._toolkit import pythonpath
from tests.bindings._driver_fixtures import cuda_in_context, kernel_factory, pinned_memory  # noqa: F401  (fixtures)
from tests.bindings._driver_support import (
    FILL_SRC,
    SPIN_SRC,
    fill_params,
    launch,
    read_u32,
)

cuda = import_cubind_driver()


# -- modules -----------------------------------------------------------------------

GLOBAL_SRC = r"""
__device__ unsigned int counter;
extern "C" __global__ void bump(unsigned int by) { atomicAdd(&counter, by); }
"""


@pytest.mark.gpu
@pytest.mark.provokes_api_error
@pytest.mark.parametrize("kind", ["PTX", "CUBIN"])
def test_module_from_ptx_and_cubin(cuda, compile_for_device, kind):
    image = compile_for_device(GLOBAL_SRC, kind)
    module = ok(cuda.cuModuleLoadData, image)
    try:
        bump = ok(cuda.cuModuleGetFunction, module, b"bump")
        dptr, size = ok(cuda.cuModuleGetGlobal, module, b"counter")
        assert size == 4 and int(dptr) != 0
        ok(cuda.cuMemsetD32, dptr, 0, 1)
        launch(cuda, bump, 4, 32, ((3,), (ctypes.c_uint,)))
        ok(cuda.cuCtxSynchronize)
        assert read_u32(cuda, dptr, 1)[0] == 4 * 32 * 3
        err, missing = cuda.cuModuleGetFunction(module, b"no_such_kernel")
        assert err is cuda.CUresult.CUDA_ERROR_NOT_FOUND and missing is None
    finally:
        ok(cuda.cuModuleUnload, module)


@pytest.mark.gpu
def test_module_load_data_ex_info_log(cuda, compile_for_device):
    # A nonce makes the PTX new to the driver's JIT cache, so it really compiles and logs.
    nonce = uuid.uuid4().int & 0x7FFFFFFF
    src = f'extern "C" __global__ void k(unsigned int *p) {{ p[0] = {nonce}u; }}\n'
    ptx = compile_for_device(src, "PTX")
    J = cuda.CUjit_option
    info, error = bytearray(8192), bytearray(8192)
    options = [J.CU_JIT_INFO_LOG_BUFFER, J.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
               J.CU_JIT_ERROR_LOG_BUFFER, J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, J.CU_JIT_LOG_VERBOSE]
    values = [info, len(info), error, len(error), 1]
    module = ok(cuda.cuModuleLoadDataEx, ptx, len(options), options, values)
    try:
        assert ok(cuda.cuModuleGetFunction, module, b"k")
    finally:
        ok(cuda.cuModuleUnload, module)
    log = bytes(info).split(b"\0", 1)[0].decode()
    assert log.strip(), "empty JIT info log"   # e.g. "ptxas info : Compiling entry function 'k' for 'sm_90'"
    assert not bytes(error).strip(b"\0")


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_module_load_data_ex_error_log(cuda):
    bad_ptx = b".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry broken()\n{\n    bogus;\n}\n\0"
    J = cuda.CUjit_option
    error = bytearray(4096)
    options = [J.CU_JIT_ERROR_LOG_BUFFER, J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
    err, module = cuda.cuModuleLoadDataEx(bad_ptx, 2, options, [error, len(error)])
    assert err in (cuda.CUresult.CUDA_ERROR_INVALID_PTX, cuda.CUresult.CUDA_ERROR_INVALID_IMAGE), err
    assert module is None
    log = bytes(error).split(b"\0", 1)[0].decode()
    assert "error" in log.lower(), log


@pytest.mark.gpu
def test_module_load_data_ex_without_options(cuda, compile_for_device):
    module = ok(cuda.cuModuleLoadDataEx, compile_for_device(FILL_SRC), 0, [], [])
    ok(cuda.cuModuleUnload, module)


@pytest.mark.gpu
def test_library_and_kernel_handles(cuda, compile_for_device, device_alloc):
    library = ok(cuda.cuLibraryLoadData, compile_for_device(FILL_SRC), [], [], 0, [], [], 0)
    try:
        assert isinstance(library, cuda.CUlibrary)
        kern = ok(cuda.cuLibraryGetKernel, library, b"fill")
        assert isinstance(kern, cuda.CUkernel)
        f = ok(cuda.cuKernelGetFunction, kern)
        out = device_alloc(64 * 4)
        launch(cuda, f, 1, 64, fill_params(out, 10, 64))
        launch(cuda, int(kern), 1, 64, fill_params(out, 20, 32))   # a CUkernel cast to CUfunction, as in C
        ok(cuda.cuCtxSynchronize)
        np.testing.assert_array_equal(read_u32(cuda, out, 64), np.r_[np.arange(32) + 20, np.arange(32, 64) + 10])
    finally:
        ok(cuda.cuLibraryUnload, library)


# -- streams and events ------------------------------------------------------------


@pytest.mark.gpu
def test_event_elapsed_time(cuda, kernel, cu_stream):
    spin = kernel(SPIN_SRC, "spin")
    start, end = ok(cuda.cuEventCreate, 0), ok(cuda.cuEventCreate, cuda.CUevent_flags.CU_EVENT_DEFAULT)
    try:
        assert isinstance(start, cuda.CUevent)
        ok(cuda.cuEventRecord, start, cu_stream)
        launch(cuda, spin, 1, 1, ((1_000_000, 0), (ctypes.c_longlong, ctypes.c_void_p)), cu_stream)
        ok(cuda.cuEventRecord, end, cu_stream)
        ok(cuda.cuEventSynchronize, end)
        ms = ok(cuda.cuEventElapsedTime, start, end)
        assert isinstance(ms, float) and ms > 0
        assert cuda.cuEventQuery(end) == (cuda.CUresult.CUDA_SUCCESS,)
    finally:
        ok(cuda.cuEventDestroy, start)
        ok(cuda.cuEventDestroy, end)


@pytest.mark.gpu
def test_stream_wait_event_orders_two_streams(cuda, kernel, device_alloc, cu_stream):
    spin, fill = kernel(SPIN_SRC, "spin"), kernel(FILL_SRC, "fill")
    other = ok(cuda.cuStreamCreate, cuda.CUstream_flags.CU_STREAM_NON_BLOCKING)
    event = ok(cuda.cuEventCreate, cuda.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    try:
        out = device_alloc(256 * 4)
        launch(cuda, spin, 1, 1, ((5_000_000, 0), (ctypes.c_longlong, ctypes.c_void_p)), cu_stream)
        launch(cuda, fill, 1, 256, fill_params(out, 3, 256), cu_stream)
        ok(cuda.cuEventRecord, event, cu_stream)
        ok(cuda.cuStreamWaitEvent, other, event, 0)
        host = np.zeros(256, dtype=np.uint32)
        ok(cuda.cuMemcpyDtoHAsync, host, out, host.nbytes, other)
        ok(cuda.cuStreamSynchronize, other)
        np.testing.assert_array_equal(host, np.arange(256) + 3)
        assert cuda.cuStreamQuery(cu_stream) == (cuda.CUresult.CUDA_SUCCESS,)
    finally:
        ok(cuda.cuEventDestroy, event)
        ok(cuda.cuStreamDestroy, other)


# -- graphs ------------------------------------------------------------------------


@pytest.mark.gpu
def test_graph_from_stream_capture(cuda, kernel, device_alloc, cu_stream):
    add = kernel(r"""extern "C" __global__ void add(unsigned int *x, unsigned int v)
                     { x[threadIdx.x] += v; }""", "add")
    x = device_alloc(64 * 4)
    ok(cuda.cuMemsetD32, x, 0, 64)
    ok(cuda.cuStreamBeginCapture, cu_stream, cuda.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    status = ok(cuda.cuStreamIsCapturing, cu_stream)
    assert status is cuda.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE
    for v in (1, 2, 4):
        launch(cuda, add, 1, 64, ((x, v), (None, ctypes.c_uint)), cu_stream)
    graph = ok(cuda.cuStreamEndCapture, cu_stream)
    assert isinstance(graph, cuda.CUgraph) and int(graph) != 0
    try:
        ok(cuda.cuStreamSynchronize, cu_stream)
        assert read_u32(cuda, x, 64).tolist() == [0] * 64   # capturing runs nothing
        graph_exec = ok(cuda.cuGraphInstantiate, graph, 0)
        assert isinstance(graph_exec, cuda.CUgraphExec)
        try:
            for _ in range(5):
                ok(cuda.cuGraphLaunch, graph_exec, cu_stream)
            ok(cuda.cuStreamSynchronize, cu_stream)
        finally:
            ok(cuda.cuGraphExecDestroy, graph_exec)
    finally:
        ok(cuda.cuGraphDestroy, graph)
    assert read_u32(cuda, x, 64).tolist() == [5 * 7] * 64


@pytest.mark.gpu
def test_instantiation_flags_reach_the_executable_graph(cuda, cu_stream):
    """cuGraphInstantiate is cuda.h's name for cuGraphInstantiateWithFlags;
    resolved under its own name the driver gave the 11.0 ABI, which has no
    flags (and read a log buffer from whatever the registers held)."""
    graph = ok(cuda.cuGraphCreate, 0)
    try:
        ok(cuda.cuGraphAddEmptyNode, graph, None, 0)
        # The flags cuGraphExecGetFlags reports (UPLOAD it documents as never
        # reported; the H100's driver 580 reports USE_NODE_PRIORITY as 0 too).
        for flags in (0, cuda.CUgraphInstantiate_flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH):
            graph_exec = ok(cuda.cuGraphInstantiate, graph, flags)
            try:
                assert int(ok(cuda.cuGraphExecGetFlags, graph_exec)) == int(flags)
                ok(cuda.cuGraphLaunch, graph_exec, cu_stream)
                ok(cuda.cuStreamSynchronize, cu_stream)
            finally:
                ok(cuda.cuGraphExecDestroy, graph_exec)
    finally:
        ok(cuda.cuGraphDestroy, graph)


@pytest.mark.gpu
@pytest.mark.parametrize("layer", ["raw", "pythonic"])
def test_graphs_instantiated_while_other_threads_run(layer):
    """The crash of 2026-11-26 (SIGSEGV in cuGraphInstantiate while other
    Python threads exist), in a process of its own: 400 rounds, 3 threads."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "repro" / "graph_instantiate_threads.py"
    rounds = "100" if os.environ.get("CUBIND_UNDER_SANITIZER") else "400"
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script), "--layer", layer, "--threads", "3", "--rounds", rounds],
                              env={**os.environ, "PYTHONPATH": pythonpath()}, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
        assert done.stdout.startswith("ok"), done.stdout


# -- host callbacks ------------------------------------------------------------------


@pytest.mark.gpu
def test_launch_host_func_calls_python_callable(cuda, device_alloc, cu_stream, pinned):
    dptr = device_alloc(4)
    ok(cuda.cuMemsetD32, dptr, 0x5EED, 1)
    staged = pinned(1, np.uint32)
    staged[0] = 0
    token = object()
    calls = []

    def host_fn(user_data):
        calls.append((user_data, int(staged[0])))

    ok(cuda.cuMemcpyDtoHAsync, staged, dptr, 4, cu_stream)   # stream order: the copy, then the callable
    ok(cuda.cuLaunchHostFunc, cu_stream, host_fn, token)
    ok(cuda.cuLaunchHostFunc, cu_stream, host_fn, 2)
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert calls == [(token, 0x5EED), (2, 0x5EED)]
    assert calls[0][0] is token


@pytest.mark.gpu
def test_launch_host_func_with_ctypes_function_pointer(cuda, cu_stream):
    seen = []
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    c_fn = proto(lambda user_data: seen.append(user_data))
    ok(cuda.cuLaunchHostFunc, cu_stream, c_fn, 0x1234)   # a raw C function: userData passed as is
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert seen == [0x1234]


@pytest.mark.gpu
def test_stream_add_callback_gets_stream_status_user_data(cuda, cu_stream):
    calls = []
    user_data = {"k": 1}
    ok(cuda.cuStreamAddCallback, cu_stream, lambda *args: calls.append(args), user_data, 0)
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert len(calls) == 1
    stream, status, data = calls[0]
    assert isinstance(stream, cuda.CUstream) and stream == cu_stream
    assert status is cuda.CUresult.CUDA_SUCCESS
    assert data is user_data


@pytest.mark.gpu
@pytest.mark.parametrize("api", ["cuLaunchHostFunc", "cuStreamAddCallback"])
def test_callback_exception_goes_to_unraisablehook(cuda, cu_stream, monkeypatch, api):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def boom(*args):
        raise ValueError(f"boom from {api}")

    after = []
    if api == "cuLaunchHostFunc":
        ok(cuda.cuLaunchHostFunc, cu_stream, boom, None)
    else:
        ok(cuda.cuStreamAddCallback, cu_stream, boom, None, 0)
    ok(cuda.cuLaunchHostFunc, cu_stream, after.append, "still running")
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert after == ["still running"]
    assert len(reported) == 1
    assert reported[0].exc_type is ValueError and str(reported[0].exc_value) == f"boom from {api}"


@pytest.mark.gpu
def test_callback_exception_does_not_kill_the_process():
    code = textwrap.dedent("""
        import cuda
        assert cuda.cuInit(0)[0] == 0
        err, dev = cuda.cuDeviceGet(0)
        err, ctx = cuda.cuCtxCreate(*((None, 0, dev) if cuda.CUDA_VERSION >= 13000 else (0, dev)))
        err, stream = cuda.cuStreamCreate(0)
        def boom(data):
            raise RuntimeError("callback failed on purpose")
        assert cuda.cuLaunchHostFunc(stream, boom, None)[0] == 0
        assert cuda.cuStreamSynchronize(stream)[0] == 0
        print("survived")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": pythonpath()}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "survived"
    assert "callback failed on purpose" in proc.stderr   # reported by the default unraisablehook


# -- GIL policy, tensor maps, per-thread default stream -------------------------


@pytest.mark.gpu
def test_queries_that_keep_the_gil_never_wait_for_a_host_function(cuda, kernel, device_alloc, cu_stream):
    # The spec's [gil] keep list runs these with the GIL held. A host function
    # queued behind a slow kernel needs the GIL to run: if any of these queries
    # waited on the stream or on the driver's callback thread, this would hang.
    spin = kernel(SPIN_SRC, "spin")
    dptr = device_alloc(4)
    ran = []
    launch(cuda, spin, 1, 1, ((200_000_000, None), (ctypes.c_longlong, ctypes.c_void_p)), stream=cu_stream)
    ok(cuda.cuLaunchHostFunc, cu_stream, lambda _: ran.append(True), None)
    attr = cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    memtype = None
    queries = 0
    while not ran and queries < 5_000_000:
        ok(cuda.cuCtxGetCurrent)
        ok(cuda.cuDeviceGetAttribute, attr, 0)
        memtype = ok(cuda.cuPointerGetAttribute, cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr)
        ok(cuda.cuStreamGetPriority, cu_stream)
        queries += 1
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert ran == [True]
    assert memtype == cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_tensor_map_encode_tiled(cuda, device_alloc, compute_capability):
    if compute_capability < (9, 0):
        pytest.skip("tensor maps need sm_90")
    rows, cols = 64, 128
    dptr = device_alloc(rows * cols * 4)
    tmap = cuda.CUtensorMap()
    T = cuda
    ok(cuda.cuTensorMapEncodeTiled, tmap, T.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dptr,
       [cols, rows], [cols * 4], [32, 16], [1, 1], T.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
       T.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE, T.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
       T.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert any(tmap.opaque)   # the driver wrote the descriptor
    err, = cuda.cuTensorMapEncodeTiled(tmap, T.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dptr,
                                       [cols, rows], [cols * 4 + 1], [32, 16], [1, 1], 0, 0, 0, 0)
    assert err == cuda.CUresult.CUDA_ERROR_INVALID_VALUE   # strides must be multiples of 16: the driver checks


@pytest.mark.gpu
def test_per_thread_default_stream_opt_in_runs(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        import cuda
        from tests._helpers import ok
        ok(cuda.cuInit(0))
        ctx = ok(cuda.cuDevicePrimaryCtxRetain(ok(cuda.cuDeviceGet(0))))
        ok(cuda.cuCtxSetCurrent(ctx))
        dptr = ok(cuda.cuMemAlloc(16))
        ok(cuda.cuMemsetD32Async(dptr, 7, 4, None))     # the per-thread default stream
        ok(cuda.cuStreamSynchronize(cuda.CU_STREAM_PER_THREAD))
        host = np.zeros(4, dtype=np.uint32)
        ok(cuda.cuMemcpyDtoH(host, dptr, 16))
        assert host.tolist() == [7] * 4
        ok(cuda.cuMemFree(dptr))
        print("per-thread ok")
    """)
    env = dict(os.environ, CUBIND_DEFAULT_STREAM="per-thread", PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "per-thread ok" in done.stdout


@pytest.mark.gpu
def test_profiler_start_and_stop(cuda, cu_context):
    # cudaProfiler.h, bound with cuda.h: a no-op success without a profiler attached.
    ok(cuda.cuProfilerStart)
    ok(cuda.cuProfilerStop)


ECHO_SRC = r"""
struct Pair { int a; float b; };
struct Dim { unsigned int x, y, z; };
extern "C" __global__ void echo(long long *ints, double *reals, char c, bool b, signed char sc, short s, int i,
                                long long ll, float f, double d, Pair p, int e, wchar_t w, Dim dim)
{
    ints[0] = (unsigned char)c; ints[1] = b; ints[2] = sc; ints[3] = s; ints[4] = i; ints[5] = ll;
    ints[6] = p.a; ints[7] = e; ints[8] = w; ints[9] = dim.x; ints[10] = dim.y; ints[11] = dim.z;
    reals[0] = f; reals[1] = d; reals[2] = p.b;
}
"""


@pytest.mark.gpu
def test_every_scalar_type_and_structs_by_value_round_trip(cuda, kernel, device_alloc):
    # Issue 12 item 4: each (values, types) form reaches the kernel as C would pass it.
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float)]

    from cuda import cudart
    f = kernel(ECHO_SRC, "echo")
    ints, reals = device_alloc(12 * 8), device_alloc(3 * 8)
    values = (ints, reals, b"A", True, -5, -300, 123456, -(2**40), np.float32(1.5), ctypes.c_double(-2.25),
              Pair(7, 0.5), cuda.CUresult.CUDA_ERROR_INVALID_VALUE, "Z", cudart.dim3(x=3, y=4, z=5))
    types = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char, ctypes.c_bool, ctypes.c_byte, ctypes.c_short,
             ctypes.c_int, ctypes.c_longlong, ctypes.c_float, ctypes.c_double, None, None, ctypes.c_wchar, None)
    launch(cuda, f, 1, 1, (values, types))
    ok(cuda.cuCtxSynchronize)
    got_ints, got_reals = np.zeros(12, dtype=np.int64), np.zeros(3, dtype=np.float64)
    ok(cuda.cuMemcpyDtoH, got_ints, ints, got_ints.nbytes)
    ok(cuda.cuMemcpyDtoH, got_reals, reals, got_reals.nbytes)
    assert got_ints.tolist() == [ord("A"), 1, -5, -300, 123456, -(2**40), 7, 1, ord("Z"), 3, 4, 5]
    assert got_reals.tolist() == [1.5, -2.25, 0.5]
