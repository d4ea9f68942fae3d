"""The runtime package (``cuda.cudart``) on a GPU: device properties, memory
and every cudaMemcpy kind, streams and events, interop with the driver both
ways, host callbacks, stream-ordered allocation, graph capture, and a kernel
loaded and launched through the runtime alone.

Every test needs a GPU (``@pytest.mark.gpu``)."""

import ctypes

import numpy as np
import pytest

from tests._toolkit import pythonpath

pytestmark = pytest.mark.gpu

cudart = pytest.importorskip("cuda.cudart", reason="cubind's cuda.cudart is not built")
rt = cudart
Err = cudart.cudaError_t
Kind = cudart.cudaMemcpyKind


def ok(result):
    err, *outputs = result
    assert err == Err.cudaSuccess, err
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


@pytest.fixture(scope="module")
def device():
    ok(rt.cudaSetDevice(0))
    return 0


@pytest.fixture
def stream(device):
    s = ok(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking))
    yield s
    ok(rt.cudaStreamDestroy(s))


def test_device_properties(device):
    prop = ok(rt.cudaGetDeviceProperties(device))
    assert isinstance(prop, rt.cudaDeviceProp)
    assert prop.name and prop.totalGlobalMem > 0 and prop.multiProcessorCount > 0
    assert ok(rt.cudaDeviceGetAttribute(rt.cudaDeviceAttr.cudaDevAttrMultiProcessorCount, device)) == \
        prop.multiProcessorCount
    if b"H100" in prop.name:
        assert (prop.major, prop.minor) == (9, 0)
        assert prop.multiProcessorCount == 132


def test_every_memcpy_kind(device):
    n = 4096
    host = np.arange(n, dtype=np.uint8)
    back = np.zeros(n, dtype=np.uint8)
    d1, d2 = ok(rt.cudaMalloc(n)), ok(rt.cudaMalloc(n))
    pinned = ok(rt.cudaMallocHost(n))
    try:
        ok(rt.cudaMemcpy(d1, host, n, Kind.cudaMemcpyHostToDevice))
        ok(rt.cudaMemcpy(d2, d1, n, Kind.cudaMemcpyDeviceToDevice))
        ok(rt.cudaMemcpy(pinned, d2, n, Kind.cudaMemcpyDeviceToHost))
        ok(rt.cudaMemcpy(back, pinned, n, Kind.cudaMemcpyHostToHost))
        assert np.array_equal(back, host)
        back[:] = 0
        ok(rt.cudaMemcpy(back, d2, n, Kind.cudaMemcpyDefault))
        assert np.array_equal(back, host)
        ok(rt.cudaMemset(d1, 7, n))
        ok(rt.cudaMemcpy(back, d1, n, Kind.cudaMemcpyDeviceToHost))
        assert (back == 7).all()
    finally:
        ok(rt.cudaFree(d1))
        ok(rt.cudaFree(d2))
        ok(rt.cudaFreeHost(pinned))


def test_zero_copy_host_memory(device):
    n = 256
    host = ok(rt.cudaHostAlloc(n, rt.cudaHostAllocMapped))
    try:
        dev = ok(rt.cudaHostGetDevicePointer(host, 0))
        assert dev != 0
        attrs = ok(rt.cudaPointerGetAttributes(host))
        assert attrs.type == rt.cudaMemoryType.cudaMemoryTypeHost
    finally:
        ok(rt.cudaFreeHost(host))


def test_driver_stream_used_by_runtime_copy_and_back(device):
    import cuda

    ok(cuda.cuInit(0))
    driver_stream = ok(cuda.cuStreamCreate(0))
    n = 1024
    src = np.arange(n, dtype=np.uint8)
    dst = np.zeros(n, dtype=np.uint8)
    d = ok(rt.cudaMalloc(n))
    try:
        ok(rt.cudaMemcpyAsync(d, src, n, Kind.cudaMemcpyHostToDevice, driver_stream))
        ok(rt.cudaStreamSynchronize(driver_stream))
        runtime_stream = ok(rt.cudaStreamCreate())
        assert ok(cuda.cuMemcpyDtoHAsync(dst, d, n, runtime_stream)) is None
        assert ok(cuda.cuStreamSynchronize(runtime_stream)) is None
        assert np.array_equal(dst, src)
        ok(rt.cudaStreamDestroy(runtime_stream))
    finally:
        ok(rt.cudaFree(d))
        ok(cuda.cuStreamDestroy(driver_stream))


def test_runtime_event_queried_by_the_driver(stream):
    import cuda

    event = ok(rt.cudaEventCreate())
    ok(rt.cudaEventRecord(event, stream))
    ok(rt.cudaEventSynchronize(event))
    assert ok(cuda.cuEventQuery(event)) is None
    ok(rt.cudaEventDestroy(event))


def test_host_callback_from_a_python_callable(stream):
    calls = []
    ok(rt.cudaLaunchHostFunc(stream, lambda data: calls.append(data), 42))
    ok(rt.cudaStreamSynchronize(stream))
    assert calls == [42]


def test_stream_ordered_allocation_and_pool(device, stream):
    pool = ok(rt.cudaDeviceGetDefaultMemPool(device))
    ptr = ok(rt.cudaMallocAsync(1 << 20, stream))
    ok(rt.cudaMemsetAsync(ptr, 0, 1 << 20, stream))
    ok(rt.cudaFreeAsync(ptr, stream))
    ok(rt.cudaStreamSynchronize(stream))
    ok(rt.cudaMemPoolTrimTo(pool, 0))


def test_pool_and_graph_memory_attributes_are_typed(device, stream):
    A = rt.cudaMemPoolAttr
    pool = ok(rt.cudaDeviceGetDefaultMemPool(device))
    old = ok(rt.cudaMemPoolGetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold))
    try:
        ok(rt.cudaMemPoolSetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold, 64 << 20))
        assert ok(rt.cudaMemPoolGetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold)) == 64 << 20
        ptr = ok(rt.cudaMallocAsync(1 << 20, stream))
        ok(rt.cudaStreamSynchronize(stream))
        assert ok(rt.cudaMemPoolGetAttribute(pool, A.cudaMemPoolAttrUsedMemCurrent)) >= 1 << 20
        ok(rt.cudaFreeAsync(ptr, stream))
        ok(rt.cudaStreamSynchronize(stream))
    finally:
        ok(rt.cudaMemPoolSetAttribute(pool, A.cudaMemPoolAttrReleaseThreshold, old))
    assert ok(rt.cudaMemPoolGetAttribute(pool, A.cudaMemPoolReuseAllowOpportunistic)) in (0, 1)
    for attribute in rt.cudaGraphMemAttributeType:
        assert ok(rt.cudaDeviceGetGraphMemAttribute(device, attribute)) >= 0
    ok(rt.cudaDeviceSetGraphMemAttribute(device, rt.cudaGraphMemAttributeType.cudaGraphMemAttrUsedMemHigh, 0))


def test_mem_range_attributes_of_managed_memory(device):
    A = rt.cudaMemRangeAttribute
    managed = ok(rt.cudaMallocManaged(1 << 16, rt.cudaMemAttachGlobal))
    try:
        location = rt.cudaMemLocation()
        location.type = rt.cudaMemLocationType.cudaMemLocationTypeDevice
        location.id = device
        ok(rt.cudaMemAdvise(managed, 1 << 16, rt.cudaMemoryAdvise.cudaMemAdviseSetAccessedBy, location))
        accessed_by = ok(rt.cudaMemRangeGetAttribute(8, A.cudaMemRangeAttributeAccessedBy, managed, 1 << 16))
        assert accessed_by[0] == device and len(accessed_by) == 2
        kind = ok(rt.cudaMemRangeGetAttribute(4, A.cudaMemRangeAttributePreferredLocationType, managed, 1 << 16))
        assert isinstance(kind, rt.cudaMemLocationType)
    finally:
        ok(rt.cudaFree(managed))


def test_graph_capture_instantiate_launch(device, stream):
    n = 64
    d = ok(rt.cudaMalloc(n))
    host = np.zeros(n, dtype=np.uint8)
    ok(rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    ok(rt.cudaMemsetAsync(d, 3, n, stream))
    graph = ok(rt.cudaStreamEndCapture(stream))
    exec_ = ok(rt.cudaGraphInstantiate(graph, 0))
    ok(rt.cudaGraphLaunch(exec_, stream))
    ok(rt.cudaStreamSynchronize(stream))
    ok(rt.cudaMemcpy(host, d, n, Kind.cudaMemcpyDeviceToHost))
    assert (host == 3).all()
    ok(rt.cudaGraphExecDestroy(exec_))
    ok(rt.cudaGraphDestroy(graph))
    ok(rt.cudaFree(d))


def test_graph_nodes_by_capacity(device, stream):
    import cuda

    d = ok(rt.cudaMalloc(64))
    ok(rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    for value in (1, 2, 3):
        ok(rt.cudaMemsetAsync(d, value, 64, stream))
    graph = ok(rt.cudaStreamEndCapture(stream))
    nodes, count = ok(rt.cudaGraphGetNodes(graph, 0))
    assert nodes == [] and count == 3
    nodes, count = ok(rt.cudaGraphGetNodes(graph, count))
    assert count == 3 and len(nodes) == 3 and all(isinstance(n, rt.cudaGraphNode_t) for n in nodes)
    # The driver's form, on the same graph (runtime handle to a driver call).
    nodes, count = ok(cuda.cuGraphGetNodes(graph, 8))
    assert count == 3 and len(nodes) == 3
    frm, to, edges, count = ok(cuda.cuGraphGetEdges(graph, 8))
    assert count == 2 and len(frm) == len(to) == len(edges) == 2
    ok(rt.cudaGraphDestroy(graph))
    ok(rt.cudaFree(d))


def test_runtime_only_kernel_flow(device):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "examples" / "vector_add_runtime.py")], capture_output=True,
                          text=True, env={**__import__("os").environ, "PYTHONPATH": pythonpath()}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout


def test_driver_entry_point(device):
    flags = rt.cudaGetDriverEntryPointFlags.cudaEnableDefault
    fn, status = ok(rt.cudaGetDriverEntryPoint(b"cuDriverGetVersion", flags))
    assert fn and status == rt.cudaDriverEntryPointQueryResult.cudaDriverEntryPointSuccess
    version = ctypes.c_int()
    assert ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(fn)(ctypes.byref(version)) == 0
    assert version.value >= 13000


def test_profiler_start_and_stop(device):
    ok(rt.cudaProfilerStart())
    ok(rt.cudaProfilerStop())


@pytest.mark.parametrize("mode,same_as,other", [("legacy", "cudaStreamLegacy", "cudaStreamPerThread"),
                                                ("per-thread", "cudaStreamPerThread", "cudaStreamLegacy")])
def test_default_stream_variant_on_the_gpu(mode, same_as, other):
    # CUBIND_DEFAULT_STREAM=per-thread calls the _ptsz/_ptds symbols: the
    # default stream (None) is then the thread's own stream, which has its own
    # id; by default it is the legacy stream. A fresh interpreter per mode.
    import os
    import subprocess
    import sys
    code = ("from cuda import cudart as rt\n"
            "assert rt.cudaSetDevice(0)[0] == 0\n"
            f"err, default = rt.cudaStreamGetId(None)\nerr2, named = rt.cudaStreamGetId(rt.{same_as})\n"
            f"err3, other = rt.cudaStreamGetId(rt.{other})\n"
            "print(int(err), int(err2), default == named, default != other)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_DEFAULT_STREAM=mode))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "True", "True"], done.stdout
