"""The runtime package (``cuda.cudart``, cuda_runtime_api.h): import paths,
coverage against the header, error names, the runtime's own error where there
is no driver, types, constants, argument conversion and runtime/driver handle
interchange (against tests/fake_driver where there is no GPU), then on a real
GPU (the tests marked ``gpu``): device properties, memory and every cudaMemcpy
kind, streams and events, interop with the driver both ways, host callbacks,
stream-ordered allocation, graph capture, and a kernel loaded and launched
through the runtime alone.
"""

import ctypes
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests._helpers import ok
from tests._toolkit import cuda_version, pythonpath
from tests.generator_integration.test_generator_cuda_h import run_generator

# == without a GPU: no driver, or the emulated one ==================================================

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_SPEC = ROOT / "bindings" / "runtime.toml"

cudart = pytest.importorskip("cuda.cudart", reason="cubind's cuda.cudart is not built")


def fresh(body, env=None):
    """Run `body` in a new interpreter (the runtime is loaded once per process); its stdout as JSON."""
    code = "import json, sys\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), **(env or {})))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- modules -------------------------------------------------------------------


def test_classic_import_spellings_give_the_same_modules():
    import cuda as package
    import nvrtc as nvrtc_package
    from cuda import cuda, nvrtc
    from cuda import cudart as rt

    assert rt is cudart and package.cudart is cudart
    assert cuda is package and nvrtc is nvrtc_package
    assert callable(cudart.cudaMalloc) and callable(cuda.cuMemAlloc)


def test_import_does_not_open_the_runtime():
    # Importing must work where no libcudart exists.
    out = fresh("""
        from cuda import cudart
        print(json.dumps([line for line in open("/proc/self/maps") if "libcudart" in line]))
    """, env={"CUBIND_CUDART_LIBRARY": "/nonexistent/libcudart.so.13"})
    assert out == []


def test_a_missing_runtime_library_is_a_clear_error():
    code = "from cuda import cudart\ncudart.cudaGetDeviceCount()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath(),
                                   CUBIND_CUDART_LIBRARY="/nonexistent/libcudart.so.13"))
    assert done.returncode != 0
    assert "CUBIND_CUDART_LIBRARY" in done.stderr and "/nonexistent/libcudart.so.13" in done.stderr


# -- coverage ------------------------------------------------------------------


@pytest.fixture(scope="module")
def runtime_report():
    return run_generator("--spec", str(RUNTIME_SPEC), "--report")


@pytest.fixture(scope="module")
def runtime_model():
    return json.loads(run_generator("--spec", str(RUNTIME_SPEC), "--dump-model"))


def test_report_binds_at_least_99_percent_with_reasons(runtime_report):
    bound, total = map(int, re.search(r"cuda_runtime_api.h: (\d+)/(\d+) functions bound", runtime_report).groups())
    assert total >= 300 and bound / total >= 0.99
    skipped = [line for line in runtime_report.splitlines()
               if line.startswith("  skipped  ") and " field " not in line]
    assert len(skipped) == total - bound
    assert all(re.match(r"  skipped  \w+.*: .+", line) for line in skipped)


def test_every_bound_function_is_in_the_module(runtime_model):
    bound = [f["name"] for f in runtime_model["functions"]
             if f.get("header") in (None, "cuda_runtime_api.h") and "skip_reason" not in f]
    missing = [name for name in bound if not callable(getattr(cudart, name, None))]
    assert len(bound) >= 300 and not missing


def test_every_type_its_functions_use_is_bound(runtime_model):
    enums = {e["name"] for e in runtime_model["enums"]}
    records = {r["name"] for r in runtime_model["records"]}

    def named_types(t):
        yield t
        for inner in t.get("inner", []):
            yield from named_types(inner)

    used = set()
    for f in runtime_model["functions"]:
        if "skip_reason" in f:
            continue
        for p in f["params"]:
            for t in named_types(p["type"]):
                if t["kind"] in ("enum", "record"):
                    used.add((t["kind"], t["canonical"]))
    assert used, "no enum or struct parameter found"
    for kind, name in used:
        assert name in (enums if kind == "enum" else records), name
    for name in ["cudaDeviceProp", "cudaPointerAttributes", "cudaMemcpy3DParms", "cudaLaunchConfig_t",
                 "cudaKernelNodeParams", "cudaGraphNodeParams", "cudaMemPoolProps", "cudaResourceDesc",
                 "cudaTextureDesc", "cudaExternalMemoryHandleDesc", "dim3", "cudaError_t"]:
        assert hasattr(cudart, name), name


def test_device_prop_has_every_field_of_the_header(runtime_model):
    record = next(r for r in runtime_model["records"] if r["name"] in ("cudaDeviceProp", "cudaDeviceProp_st")
                  or r.get("tag") == "cudaDeviceProp")
    fields = [f["name"] for f in record["fields"] if f["name"]]
    assert len(fields) >= 80
    prop = cudart.cudaDeviceProp()
    assert not [name for name in fields if not hasattr(prop, name)]
    assert prop.name == b"" and prop.multiProcessorCount == 0  # char[256], zeroed


def test_a_text_char_array_reads_to_its_first_nul_a_binary_one_whole():
    # As NVIDIA's classic module reads them: cudaDeviceProp.name is text
    # (bindings/runtime.toml's role "string"), luid and uuid bytes are binary.
    prop = cudart.cudaDeviceProp()
    prop.name = b"NVIDIA H100"
    assert prop.name == b"NVIDIA H100"
    assert prop.luid == bytes(8)
    prop.luid = b"\x01\x00\x02"
    assert prop.luid == b"\x01\x00\x02" + bytes(5)
    assert cudart.cudaUUID_t().bytes == bytes(16)


# -- errors --------------------------------------------------------------------


def test_error_name_and_string_for_every_error():
    for member in cudart.cudaError_t:
        err, name = cudart.cudaGetErrorName(member)
        assert err == cudart.cudaError_t.cudaSuccess and name == member.name.encode(), member
        err, text = cudart.cudaGetErrorString(member)
        assert isinstance(text, bytes) and text, member
    assert cudart.cudaGetErrorString(cudart.cudaError_t.cudaErrorNoDevice) == (
        cudart.cudaError_t.cudaSuccess, b"no CUDA-capable device is detected")


def test_calls_without_a_driver_return_the_runtimes_error(gpu_reason):
    if gpu_reason is None:
        pytest.skip("a GPU is present: the no-driver path cannot be seen here")
    no_gpu = {cudart.cudaError_t.cudaErrorNoDevice, cudart.cudaError_t.cudaErrorInsufficientDriver}
    err, count = cudart.cudaGetDeviceCount()
    assert err in no_gpu and count is None
    err, ptr = cudart.cudaMalloc(1024)
    assert err in no_gpu and ptr is None
    err, stream = cudart.cudaStreamCreate()
    assert err in no_gpu and stream is None
    # Versions need no device: a runtime of the build's major version, as new as its headers.
    err, version = cudart.cudaRuntimeGetVersion()
    assert err == cudart.cudaError_t.cudaSuccess and cudart.CUDART_VERSION == cuda_version()
    assert version // 1000 == cudart.CUDART_VERSION // 1000 and version >= cudart.CUDART_VERSION


# -- types, constants, conversions ----------------------------------------------


def test_numeric_defines_are_constants():
    assert cudart.cudaHostAllocMapped == 0x02
    assert cudart.cudaStreamNonBlocking == 0x01
    assert cudart.cudaEventDisableTiming == 0x02
    assert cudart.cudaMemAttachGlobal == 0x01


def test_struct_by_value_results_and_arguments():
    kind = cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat
    err, desc = cudart.cudaCreateChannelDesc(32, 0, 0, 0, kind)
    assert err == cudart.cudaError_t.cudaSuccess and isinstance(desc, cudart.cudaChannelFormatDesc)
    assert (desc.x, desc.y, desc.f) == (32, 0, kind)
    # Each call returns its own copy.
    assert cudart.cudaCreateChannelDesc(8, 8, 0, 0, kind)[1].x == 8 and desc.x == 32
    grid = cudart.dim3(x=4, y=2, z=1)
    assert (grid.x, grid.y, grid.z) == (4, 2, 1)


def test_bad_arguments_are_python_errors_naming_the_parameter():
    with pytest.raises(TypeError, match="device"):
        cudart.cudaSetDevice("zero")
    with pytest.raises(OverflowError, match="device"):
        cudart.cudaSetDevice(2**40)
    with pytest.raises(TypeError, match="gridDim"):
        cudart.cudaLaunchKernel(0, (1, 1, 1), cudart.dim3(), None, 0, None)
    with pytest.raises(TypeError, match="stream"):
        cudart.cudaStreamSynchronize("stream")


def test_handles_are_indices_and_compare_by_value():
    stream = cudart.cudaStream_t(0x1000)
    assert int(stream) == 0x1000 and hex(stream) == "0x1000"
    assert stream == cudart.cudaStream_t(0x1000) and hash(stream) == hash(cudart.cudaStream_t(0x1000))


def test_runtime_takes_driver_handles(gpu_reason):
    # Conversion happens before the call: a driver handle is accepted where a
    # runtime handle of the same C type is; the call itself then fails only
    # for want of a driver.
    import cuda

    if gpu_reason is None:
        pytest.skip("a GPU is present: test_driver_stream_used_by_runtime_copy_and_back checks interop for real")
    err, = cudart.cudaStreamQuery(cuda.CUstream(0))
    assert err in (cudart.cudaError_t.cudaErrorNoDevice, cudart.cudaError_t.cudaErrorInsufficientDriver)
    err, = cudart.cudaEventQuery(cuda.CUevent(0x10))
    assert isinstance(err, cudart.cudaError_t)


def test_a_handle_of_another_c_type_is_refused_across_modules():
    import cuda

    with pytest.raises(TypeError, match="stream"):
        cudart.cudaStreamSynchronize(cuda.CUevent(1))
    with pytest.raises(TypeError, match="hStream"):
        cuda.cuStreamSynchronize(cudart.cudaEvent_t(1))


def test_driver_takes_runtime_handles(fake_driver):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import cuda
        from cuda import cudart
        event = int(cuda.cuEventCreate(0)[1])  # a live event: the emulated driver refuses others
        print(int(cuda.cuStreamQuery(cudart.cudaStream_t(0x1234))[0]),
              int(cuda.cuEventRecord(cudart.cudaEvent_t(event), cudart.cudaStream_t(0x1234))[0]))
    """)], cwd=ROOT, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_CUDA_LIBRARY=str(fake_driver)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"]


def test_per_thread_default_stream_is_an_opt_in():
    # The variants exist in the runtime library; selecting them must not
    # break resolution (a GPU test checks their semantics).
    out = fresh("""
        from cuda import cudart
        err, version = cudart.cudaRuntimeGetVersion()
        err2, = cudart.cudaStreamQuery(None)
        print(json.dumps([int(err), version, isinstance(err2, cudart.cudaError_t)]))
    """, env={"CUBIND_DEFAULT_STREAM": "per-thread"})
    assert out[0] == 0 and out[1] // 1000 == cudart.CUDART_VERSION // 1000 and out[2] is True


def test_unknown_default_stream_mode_is_a_clear_error():
    code = "from cuda import cudart\ncudart.cudaRuntimeGetVersion()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_DEFAULT_STREAM="sometimes"))
    assert done.returncode != 0 and "CUBIND_DEFAULT_STREAM must be one of" in done.stderr


def test_integral_floats_are_integers(gpu_reason):
    import numpy as np

    if gpu_reason is None:
        pytest.skip("a GPU is present: the call would select a device")
    # Accepted, toward zero as C converts (the call then fails only for want of a driver) ...
    for value in (0.0, np.float32(0.0), np.float64(0.75), 0.5):
        err, = cudart.cudaSetDevice(value)
        assert isinstance(err, cudart.cudaError_t) and err != cudart.cudaError_t.cudaSuccess
    # ... NaN or an infinity is not an integer.
    for value in (np.float32("nan"), float("nan"), float("inf")):
        with pytest.raises((TypeError, OverflowError, ValueError), match="device"):
            cudart.cudaSetDevice(value)
    with pytest.raises(OverflowError, match="device"):
        cudart.cudaSetDevice(2.0**40)


def test_grid_sizes_computed_with_division_launch(fake_driver):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import cuda
        n, block = 1000, 128
        err, = cuda.cuLaunchKernel(1, (n + block - 1) / block // 1, 1.0, 1, block, 1, 1, 0, None, None, None)
        print(int(err))
    """)], cwd=ROOT, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_CUDA_LIBRARY=str(fake_driver)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0"]


def test_structs_answer_to_their_tag_and_typedef_names():
    import cuda

    assert cuda.CUDA_MEMCPY2D_st is cuda.CUDA_MEMCPY2D
    assert cuda.CUDA_TEXTURE_DESC_st is cuda.CUDA_TEXTURE_DESC
    assert cuda.CUstreamAttrValue is cuda.CUlaunchAttributeValue
    assert cuda.CUuuid_st is cuda.CUuuid
    assert "CUDA_MEMCPY2D_st" in cuda.__all__
    assert cudart.cudaUUID_t is cudart.CUuuid and cudart.cudaGraphEdgeData_st is cudart.cudaGraphEdgeData


def test_fixed_arrays_of_enums_and_floats():
    import cuda

    desc = cuda.CUDA_TEXTURE_DESC()
    wrap = cuda.CUaddress_mode.CU_TR_ADDRESS_MODE_WRAP
    clamp = cuda.CUaddress_mode.CU_TR_ADDRESS_MODE_CLAMP
    desc.addressMode = [clamp, wrap, clamp]
    assert desc.addressMode == [clamp, wrap, clamp]
    assert isinstance(desc.addressMode[0], cuda.CUaddress_mode)
    desc.borderColor = [0.5, 1.0, 0.0, 0.25]
    assert desc.borderColor == [0.5, 1.0, 0.0, 0.25]
    with pytest.raises(ValueError, match="borderColor"):
        desc.borderColor = [1.0]
    runtime = cudart.cudaTextureDesc()
    runtime.addressMode = [cudart.cudaTextureAddressMode.cudaAddressModeMirror] * 3
    assert runtime.addressMode[2] == cudart.cudaTextureAddressMode.cudaAddressModeMirror


def test_in_out_counts_take_a_capacity(gpu_reason):
    import cuda

    # cuGraphGetNodes(hGraph, numNodes): the capacity is an int input; the
    # nodes and the count come back (a GPU test checks the values).
    with pytest.raises(TypeError, match="numNodes"):
        cuda.cuGraphGetNodes(None, "all")
    with pytest.raises(OverflowError, match="numNodes"):
        cuda.cuGraphGetNodes(None, -1)
    with pytest.raises(TypeError, match="nbGroups"):
        cuda.cuDevSmResourceSplitByCount(None, cuda.CUdevResource(), 0, 2)
    if gpu_reason is not None:
        err, nodes, count = cudart.cudaGraphGetNodes(None, 4)
        assert err != cudart.cudaError_t.cudaSuccess and nodes is None and count is None


def test_header_only_constructors_refuse_bad_input_naming_the_parameter():
    # driver_functions.h defines make_cudaPos & co. inline (their values:
    # test_classic_convention.py); a negative size_t is refused before C.
    with pytest.raises(OverflowError, match="x"):
        cudart.make_cudaPos(-1, 0, 0)


def test_status_values_are_found_by_index_despite_an_outlier():
    # cudaErrorApiFailureBase (10000) once left cudaError_t with no dense
    # table: every runtime call then paid a dict look-up and a new (status,)
    # tuple (+20..110 ns on the H100's bench rows).
    from _cubind.enum import dense_table
    table = dense_table(cudart.cudaError_t)
    assert table[0] is cudart.cudaError_t.cudaSuccess
    assert len(table) > int(cudart.cudaError_t.cudaErrorUnknown)
    assert int(cudart.cudaError_t.cudaErrorApiFailureBase) >= len(table)   # the outlier: by the dict
    assert cudart.cudaGetErrorName(cudart.cudaError_t.cudaErrorApiFailureBase)[1] == b"cudaErrorApiFailureBase"


# == on a real GPU (each test marked gpu) ===========================================================

rt = cudart
Err = cudart.cudaError_t
Kind = cudart.cudaMemcpyKind


@pytest.fixture(scope="module")
def device():
    ok(rt.cudaSetDevice(0))
    return 0


@pytest.fixture
def stream(device):
    s = ok(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking))
    yield s
    ok(rt.cudaStreamDestroy(s))


@pytest.mark.gpu
def test_device_properties(device):
    prop = ok(rt.cudaGetDeviceProperties(device))
    assert isinstance(prop, rt.cudaDeviceProp)
    assert prop.name and prop.totalGlobalMem > 0 and prop.multiProcessorCount > 0
    assert ok(rt.cudaDeviceGetAttribute(rt.cudaDeviceAttr.cudaDevAttrMultiProcessorCount, device)) == \
        prop.multiProcessorCount
    if b"H100" in prop.name:
        assert (prop.major, prop.minor) == (9, 0)
        assert prop.multiProcessorCount == 132


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
def test_runtime_event_queried_by_the_driver(stream):
    import cuda

    event = ok(rt.cudaEventCreate())
    ok(rt.cudaEventRecord(event, stream))
    ok(rt.cudaEventSynchronize(event))
    assert ok(cuda.cuEventQuery(event)) is None
    ok(rt.cudaEventDestroy(event))


@pytest.mark.gpu
def test_host_callback_from_a_python_callable(stream):
    calls = []
    ok(rt.cudaLaunchHostFunc(stream, lambda data: calls.append(data), 42))
    ok(rt.cudaStreamSynchronize(stream))
    assert calls == [42]


@pytest.mark.gpu
def test_stream_ordered_allocation_and_pool(device, stream):
    pool = ok(rt.cudaDeviceGetDefaultMemPool(device))
    ptr = ok(rt.cudaMallocAsync(1 << 20, stream))
    ok(rt.cudaMemsetAsync(ptr, 0, 1 << 20, stream))
    ok(rt.cudaFreeAsync(ptr, stream))
    ok(rt.cudaStreamSynchronize(stream))
    ok(rt.cudaMemPoolTrimTo(pool, 0))


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
def test_capture_mode_is_swapped(device):
    mode = rt.cudaStreamCaptureMode
    previous = ok(rt.cudaThreadExchangeStreamCaptureMode(mode.cudaStreamCaptureModeRelaxed))
    assert previous == mode.cudaStreamCaptureModeGlobal
    assert ok(rt.cudaThreadExchangeStreamCaptureMode(previous)) == mode.cudaStreamCaptureModeRelaxed


@pytest.mark.gpu
def test_graph_nodes_by_capacity(device, stream):
    import cuda

    d = ok(rt.cudaMalloc(64))
    ok(rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    for value in (1, 2, 3):
        ok(rt.cudaMemsetAsync(d, value, 64, stream))
    graph = ok(rt.cudaStreamEndCapture(stream))
    nodes, count = ok(rt.cudaGraphGetNodes(graph, 0))
    assert nodes == [] and count == 3
    assert ok(rt.cudaGraphGetNodes(graph)) == ([], 3)   # the count left out asks, as NVIDIA's bindings
    assert ok(rt.cudaGraphGetEdges(graph))[-1] == 2
    nodes, count = ok(rt.cudaGraphGetNodes(graph, count))
    assert count == 3 and len(nodes) == 3 and all(isinstance(n, rt.cudaGraphNode_t) for n in nodes)
    # The driver's form, on the same graph (runtime handle to a driver call).
    nodes, count = ok(cuda.cuGraphGetNodes(graph, 8))
    assert count == 3 and len(nodes) == 3
    frm, to, edges, count = ok(cuda.cuGraphGetEdges(graph, 8))
    assert count == 2 and len(frm) == len(to) == len(edges) == 2
    ok(rt.cudaGraphDestroy(graph))
    ok(rt.cudaFree(d))


@pytest.mark.gpu
def test_runtime_only_kernel_flow(device):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "examples" / "vector_add_runtime.py")], capture_output=True,
                          text=True, env={**__import__("os").environ, "PYTHONPATH": pythonpath()}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout


@pytest.mark.gpu
def test_driver_entry_point(device):
    flags = rt.cudaGetDriverEntryPointFlags.cudaEnableDefault
    fn, status = ok(rt.cudaGetDriverEntryPoint(b"cuDriverGetVersion", flags))
    assert fn and status == rt.cudaDriverEntryPointQueryResult.cudaDriverEntryPointSuccess
    version = ctypes.c_int()
    assert ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(fn)(ctypes.byref(version)) == 0
    assert version.value >= 13000


@pytest.mark.gpu
def test_profiler_start_and_stop(device):
    ok(rt.cudaProfilerStart())
    ok(rt.cudaProfilerStop())


@pytest.mark.gpu
@pytest.mark.parametrize("mode,same_as,other", [("legacy", "cudaStreamLegacy", "cudaStreamPerThread"),
                                                ("per-thread", "cudaStreamPerThread", "cudaStreamLegacy")])
def test_default_stream_variant_on_the_gpu(mode, same_as, other):
    # CUBIND_DEFAULT_STREAM=per-thread calls the _ptsz/_ptds symbols: the
    # default stream (None) is then the thread's own stream, which has its own
    # id; by default it is the legacy stream. A fresh interpreter per mode.
    code = ("from cuda import cudart as rt\n"
            "assert rt.cudaSetDevice(0)[0] == 0\n"
            f"err, default = rt.cudaStreamGetId(None)\nerr2, named = rt.cudaStreamGetId(rt.{same_as})\n"
            f"err3, other = rt.cudaStreamGetId(rt.{other})\n"
            "print(int(err), int(err2), default == named, default != other)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_DEFAULT_STREAM=mode))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "True", "True"], done.stdout
