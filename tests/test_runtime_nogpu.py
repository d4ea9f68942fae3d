"""The runtime package (``cuda.cudart``, cuda_runtime_api.h) without a GPU:
import paths, coverage against the header, error names, the runtime's own
error where there is no driver, types, constants, argument conversion, and
runtime/driver handle interchange (against tests/fake_driver)."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import cuda_version, pythonpath
from tests.test_generator_cuda_h import run_generator

ROOT = Path(__file__).resolve().parent.parent
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
    assert prop.name == bytes(256) and prop.multiProcessorCount == 0  # char[256], zeroed


# -- errors --------------------------------------------------------------------


def test_error_name_and_string_for_every_error():
    for member in cudart.cudaError_t:
        name = cudart.cudaGetErrorName(member)
        assert name == member.name.encode(), member
        text = cudart.cudaGetErrorString(member)
        assert isinstance(text, bytes) and text, member
    assert cudart.cudaGetErrorString(cudart.cudaError_t.cudaErrorNoDevice) == b"no CUDA-capable device is detected"


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
    desc = cudart.cudaCreateChannelDesc(32, 0, 0, 0, kind)
    assert isinstance(desc, cudart.cudaChannelFormatDesc)
    assert (desc.x, desc.y, desc.f) == (32, 0, kind)
    # Each call returns its own copy.
    assert cudart.cudaCreateChannelDesc(8, 8, 0, 0, kind).x == 8 and desc.x == 32
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
        pytest.skip("a GPU is present: tests/test_runtime_gpu.py checks interop for real")
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
        print(int(cuda.cuStreamQuery(cudart.cudaStream_t(0x1234))[0]),
              int(cuda.cuEventRecord(cudart.cudaEvent_t(0x10), cudart.cudaStream_t(0x1234))[0]))
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


def test_header_only_constructors_run_without_a_library():
    # driver_functions.h defines make_cudaPos & co. inline: compiled into the
    # C layer, they need no libcudart and no GPU (NVIDIA's samples call them).
    pos = cudart.make_cudaPos(1, 2, 3)
    assert isinstance(pos, cudart.cudaPos) and (pos.x, pos.y, pos.z) == (1, 2, 3)
    extent = cudart.make_cudaExtent(64, 32, 8)
    assert (extent.width, extent.height, extent.depth) == (64, 32, 8)
    pitched = cudart.make_cudaPitchedPtr(0x1000, 256, 64, 32)
    assert (pitched.ptr, pitched.pitch, pitched.xsize, pitched.ysize) == (0x1000, 256, 64, 32)
    with pytest.raises(OverflowError, match="x"):
        cudart.make_cudaPos(-1, 0, 0)


def test_status_values_are_found_by_index_despite_an_outlier():
    # cudaErrorApiFailureBase (10000) once left cudaError_t with no dense
    # table: every runtime call then paid a dict look-up and a new (status,)
    # tuple (+20..110 ns on the H100's bench rows).
    from cubind._bind.enum import dense_table
    table = dense_table(cudart.cudaError_t)
    assert table[0] is cudart.cudaError_t.cudaSuccess
    assert len(table) > int(cudart.cudaError_t.cudaErrorUnknown)
    assert int(cudart.cudaError_t.cudaErrorApiFailureBase) >= len(table)   # the outlier: by the dict
    assert cudart.cudaGetErrorName(cudart.cudaError_t.cudaErrorApiFailureBase) == b"cudaErrorApiFailureBase"
