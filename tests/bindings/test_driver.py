"""The driver package (``import cuda``) is imported and finds its library, then
works on a device: import loads no library, the first call without a driver
names libcuda (and skips the stub), the library override, enum classes made
on first use, the version constants; on a real GPU, device queries, errors,
contexts and a first saxpy.

The loading checks run in fresh interpreters (the loader caches what it finds
per process). The headers are the ones the build comes from
(tests/_toolkit.py). What the binding hands the C library is checked against
the emulated driver in tests/bindings/test_fake_driver.py. The rest of the
driver package, by subject: tests/bindings/test_driver_types.py,
test_driver_arguments.py, test_driver_coverage.py, test_driver_attributes.py,
test_driver_memory.py, test_driver_execution.py (their shared helpers:
tests/bindings/_driver_support.py; the GPU fixtures:
tests/bindings/_driver_fixtures.py).
"""

import ctypes
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests._toolkit import ctx_create_args, cuda_version
from tests.bindings._driver_fixtures import cuda_in_context, kernel_factory, pinned_memory  # noqa: F401  (fixtures)
from tests.bindings._driver_support import (
    CUDA_H,
    STUB,
    needs_cuda,
    needs_header,
    run_python,
)

cuda = import_cubind_driver()


# -- import and library loading ---------------------------------------------------

FIRST_CALL = """
    import json, sys
    import cuda
    from _cubind.loader import LibraryNotFoundError
    out = {}
    for call in ("cuInit(0)", "cuDriverGetVersion()"):
        try:
            result = eval("cuda." + call)
        except Exception as exc:
            out[call] = {"type": type(exc).__name__, "not_found": isinstance(exc, LibraryNotFoundError),
                         "oserror": isinstance(exc, OSError), "message": str(exc)}
        else:
            out[call] = {"type": None, "status": int(result[0]), "status_type": type(result[0]).__name__}
    out["mapped"] = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libcuda" in line})
    print(json.dumps(out))
"""


@needs_cuda
def test_import_loads_no_library():
    proc = run_python("""
        import cuda
        maps = open("/proc/self/maps").read()
        print(hasattr(cuda, "cuInit"), "libcuda" in maps, "libnvrtc" in maps)
    """)
    assert proc.stdout.split() == ["True", "False", "False"]


@needs_cuda
@pytest.mark.skipif(not STUB.exists(), reason="no driver stub to be tempted by")
@pytest.mark.parametrize("setup", ["clean", "stubs_on_ld_library_path", "stub_as_libcuda_so_1"])
def test_first_call_without_driver_names_libcuda_and_skips_stub(setup, tmp_path):
    env = {}
    if setup == "stubs_on_ld_library_path":   # a common build set-up, leaked into the run
        env = {"CUDA_HOME": "/usr/local/cuda", "LD_LIBRARY_PATH": str(STUB.parent)}
    elif setup == "stub_as_libcuda_so_1":   # the stub under the driver's own soname
        stubs = tmp_path / "stubs"
        stubs.mkdir()
        (stubs / "libcuda.so.1").write_bytes(STUB.read_bytes())
        env = {"LD_LIBRARY_PATH": str(stubs), "CUDA_PATH": str(tmp_path)}
    out = json.loads(run_python(FIRST_CALL, env).stdout)
    assert not any("stubs" in Path(p).parts for p in out["mapped"]), out["mapped"]
    for call in ("cuInit(0)", "cuDriverGetVersion()"):
        got = out[call]
        if got["type"] is None:   # a real driver is installed: it was used, not the stub
            assert got["status_type"] == "CUresult" and got["status"] == 0, got
            continue
        assert got["not_found"] and got["oserror"], got
        assert got["type"] == "LibraryNotFoundError"
        assert "libcuda.so.1" in got["message"]
        assert "CUBIND_CUDA_LIBRARY" in got["message"]   # says how to point at the driver
        assert "Searched" in got["message"]


@needs_cuda
def test_library_override_to_missing_file_names_the_variable(tmp_path):
    missing = tmp_path / "nowhere" / "libcuda.so.1"
    out = json.loads(run_python(FIRST_CALL, {"CUBIND_CUDA_LIBRARY": str(missing),
                                             "CUDA_HOME": "/usr/local/cuda"}).stdout)
    got = out["cuInit(0)"]
    assert got["type"] == "LibraryNotFoundError" and got["oserror"], got
    assert "CUBIND_CUDA_LIBRARY" in got["message"] and str(missing) in got["message"]
    assert not out["mapped"]


@needs_cuda
@pytest.mark.skipif(not STUB.exists(), reason="no driver stub")
def test_explicit_override_to_stub_reports_stub_library():
    # Asked for by name, the stub is used (the override is taken as given) and
    # says what it is: CUDA_ERROR_STUB_LIBRARY, as a status or in an error; never a crash.
    proc = run_python(FIRST_CALL, {"CUBIND_CUDA_LIBRARY": str(STUB)})
    got = json.loads(proc.stdout)["cuInit(0)"]
    if got["type"] is None:
        assert got["status"] == 34 and got["status_type"] == "CUresult", got   # CUDA_ERROR_STUB_LIBRARY
    else:
        assert "STUB" in got["message"].upper(), got


@needs_cuda
def test_enum_classes_are_made_on_first_use():
    # Made at import they would be half of `import cuda`; made late they must
    # still be one class, reachable and picklable as if made at import.
    proc = run_python("""
        import pickle
        import cuda
        import cuda._driver as d
        assert "CUdevice_attribute" not in vars(d) and "CUdevice_attribute" not in vars(cuda)
        cls = cuda.CUdevice_attribute
        assert cls is d.CUdevice_attribute is cuda.CUdevice_attribute
        assert (cls.__module__, cls.__qualname__) == ("cuda._driver", "CUdevice_attribute")
        member = cls.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        assert pickle.loads(pickle.dumps(member)) is member
        assert "CUstreamCaptureStatus" in dir(cuda) and "CUstreamCaptureStatus" in dir(d)
        from cuda import CUjit_option
        assert CUjit_option is d.CUjit_option
        try:
            cuda.CUnot_a_thing
        except AttributeError as e:
            assert "CUnot_a_thing" in str(e)
        else:
            raise AssertionError("no AttributeError")
        print("ok")
    """)
    assert proc.stdout.split() == ["ok"], proc.stderr


@needs_cuda
def test_enum_made_by_a_converter_is_the_module_class():
    proc = run_python("""
        import cuda
        import cuda._driver as d
        value = cuda.CUDA_MEMCPY2D().srcMemoryType   # the field's converter makes CUmemorytype
        assert "CUmemorytype" in vars(d)
        assert type(value) is cuda.CUmemorytype is d.CUmemorytype
        print(repr(value))
    """)
    assert proc.stdout.split() == ["<CUmemorytype.UNKNOWN_0:", "0>"], proc.stderr


@needs_cuda
def test_enum_first_use_from_many_threads_makes_one_class():
    proc = run_python("""
        import threading
        import cuda
        barrier = threading.Barrier(8)
        seen = []
        def touch():
            barrier.wait()
            seen.append(cuda.CUgraphNodeType)
        threads = [threading.Thread(target=touch) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert len(seen) == 8 and all(c is seen[0] is cuda.CUgraphNodeType for c in seen)
        assert type(cuda.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL) is seen[0]
        print("ok")
    """)
    assert proc.stdout.split() == ["ok"], proc.stderr


@needs_cuda
def test_from_cuda_import_cuda_is_the_same_api():
    from cuda import cuda as classic

    for name in ("cuInit", "cuMemAlloc", "CUresult", "CUstream", "CUDA_MEMCPY2D", "CUDA_VERSION"):
        assert getattr(classic, name) is getattr(cuda, name), name


@needs_cuda
@needs_header
def test_version_constants():
    header_version = int(re.search(r"^#define CUDA_VERSION (\d+)", CUDA_H.read_text(), re.MULTILINE)[1])
    assert cuda.CUDA_VERSION == header_version == cuda_version()
    assert header_version >= 12000 and header_version % 10 == 0   # 12090, 13000, 13050, ...
    assert cuda.CU_LAUNCH_PARAM_END == 0
    assert (cuda.CU_LAUNCH_PARAM_BUFFER_POINTER, cuda.CU_LAUNCH_PARAM_BUFFER_SIZE) == (1, 2)
    assert cuda.CU_MEMHOSTALLOC_DEVICEMAP == 2


# -- device, context, errors -----------------------------------------------------


@pytest.mark.gpu
def test_device_queries(cuda, cu_device):
    assert isinstance(cu_device, cuda.CUdevice) and int(cu_device) == 0
    count = ok(cuda.cuDeviceGetCount)
    assert type(count) is int and count >= 1
    name = ok(cuda.cuDeviceGetName, 64, cu_device)
    assert isinstance(name, bytes) and 0 < len(name) < 64 and b"\0" not in name
    major = ok(cuda.cuDeviceGetAttribute,
               cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu_device)
    assert type(major) is int and major >= 5
    assert ok(cuda.cuDeviceGetAttribute, 75, int(cu_device)) == major   # plain ints for enum and handle


@pytest.mark.gpu
def test_driver_version_and_memory_info(cuda):
    version = ok(cuda.cuDriverGetVersion)
    assert version >= cuda.CUDA_VERSION
    free, total = ok(cuda.cuMemGetInfo)
    assert type(free) is int and 0 < free <= total


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_error_name_and_string(cuda):
    R = cuda.CUresult
    assert cuda.cuGetErrorName(R.CUDA_ERROR_INVALID_VALUE) == (R.CUDA_SUCCESS, b"CUDA_ERROR_INVALID_VALUE")
    assert cuda.cuGetErrorString(R.CUDA_ERROR_INVALID_VALUE) == (R.CUDA_SUCCESS, b"invalid argument")
    assert cuda.cuGetErrorName(0) == (R.CUDA_SUCCESS, b"CUDA_SUCCESS")
    assert cuda.cuGetErrorName(12345) == (R.CUDA_ERROR_INVALID_VALUE, None)   # on error every output is None


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_failing_call_returns_status_and_none(cuda):
    err, dptr = cuda.cuMemAlloc(0)
    assert err is cuda.CUresult.CUDA_ERROR_INVALID_VALUE and dptr is None
    err, dev = cuda.cuDeviceGet(9999)
    assert err is cuda.CUresult.CUDA_ERROR_INVALID_DEVICE and dev is None


@pytest.mark.gpu
def test_context_create_push_pop(driver, cu_device):
    ctx = ok(driver.cuCtxCreate, *ctx_create_args(driver, 0, cu_device))
    try:
        assert isinstance(ctx, driver.CUcontext) and int(ctx) != 0
        assert ok(driver.cuCtxGetCurrent) == ctx
        assert ok(driver.cuCtxGetDevice) == cu_device
        assert ok(driver.cuCtxPopCurrent) == ctx
        ok(driver.cuCtxPushCurrent, ctx)
    finally:
        ok(driver.cuCtxDestroy, ctx)


@pytest.mark.gpu
def test_saxpy_flow(driver, cu_device, device_arch, compile_program, get_output, saxpy_src):
    """NVIDIA's saxpy walk-through: own context, PTX from NVRTC, copies, launch, check."""
    cuda = driver
    ptx = get_output(compile_program(saxpy_src, [f"--gpu-architecture=compute_{device_arch}"]), "PTX")
    n, a = 100_000, np.float32(2.5)
    rng = np.random.default_rng(1)
    hx, hy = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    hout = np.zeros(n, dtype=np.float32)
    ctx = ok(cuda.cuCtxCreate, *ctx_create_args(cuda, 0, cu_device))
    try:
        module = ok(cuda.cuModuleLoadData, ptx)
        f = ok(cuda.cuModuleGetFunction, module, b"saxpy")
        assert isinstance(module, cuda.CUmodule) and isinstance(f, cuda.CUfunction)
        dx, dy, dout = (ok(cuda.cuMemAlloc, hx.nbytes) for _ in range(3))
        assert isinstance(dx, cuda.CUdeviceptr)
        stream = ok(cuda.cuStreamCreate, 0)
        ok(cuda.cuMemcpyHtoDAsync, dx, hx.ctypes.data, hx.nbytes, stream)
        ok(cuda.cuMemcpyHtoDAsync, dy, hy, hy.nbytes, stream)
        params = ((a, dx, dy, dout, n), (ctypes.c_float, None, None, None, ctypes.c_size_t))
        ok(cuda.cuLaunchKernel, f, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, params, None)
        ok(cuda.cuMemcpyDtoHAsync, hout, dout, hout.nbytes, stream)
        ok(cuda.cuStreamSynchronize, stream)
        ok(cuda.cuStreamDestroy, stream)
        for dptr in (dx, dy, dout):
            ok(cuda.cuMemFree, dptr)
        ok(cuda.cuModuleUnload, module)
    finally:
        ok(cuda.cuCtxDestroy, ctx)
    np.testing.assert_allclose(hout, a * hx + hy, rtol=1e-6)
