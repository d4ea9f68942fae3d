"""The driver package (``import cuda``): import and library loading, enums,
handles, structs, argument conversion and coverage (no driver needed), then
contexts, memory, modules, launches, streams, events, graphs, callbacks,
memory pools, VMM, occupancy and pointer attributes on a real GPU.

The first part never reaches a C call: loading is checked in fresh
interpreters (the loader caches what it finds per process), conversion errors
are raised before the library is looked up. Struct layouts are checked against
x86-64 offsets and sizes taken from gcc on CUDA 13.0's cuda.h (the same in 12.9
and 13.5). The headers are the ones the build comes from (tests/_toolkit.py),
API forms those of its version. What the binding hands the C library is
checked against the emulated driver in tests/bindings/test_fake_driver.py.

The tests marked ``gpu`` need a real GPU (they run a kernel or read memory
back); kernels are compiled with NVRTC for the device's own architecture (the
``compile_for_device`` fixture).
"""

import ctypes
import gc
import json
import os
import platform
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests._toolkit import ctx_create_args, cuda_include, cuda_version, header, pythonpath

# == without a GPU: no driver, or the emulated one ==================================================

ROOT = Path(__file__).resolve().parents[2]
CUDA_H = header("cuda.h")
STUB = Path("/usr/local/cuda/lib64/stubs/libcuda.so")
GENERATOR = Path(os.environ.get("CUBIND_GEN", ROOT / "generator" / "build" / "cubind-gen"))
DRIVER_SPEC = ROOT / "bindings" / "driver.toml"



cuda = import_cubind_driver()
needs_cuda = pytest.mark.skipif(cuda is None, reason="cubind's cuda driver package is not built")
needs_x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="layouts measured on x86-64")
needs_header = pytest.mark.skipif(CUDA_H is None, reason=f"cuda.h not found in {cuda_include()}")
# The form of the API this build has: 13.x's cuCtxCreate is cuCtxCreate_v4(ctxCreateParams, flags, dev),
# 12.x's cuCtxCreate_v2(flags, dev) (with cuCtxCreate_v4 a function of its own).
CUDA_13 = cuda is not None and cuda.CUDA_VERSION >= 13000


def run_python(code, env=None, check=True):
    """Run ``code`` in a fresh interpreter with no CUDA environment; return the process."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("CUDA_HOME", "CUDA_PATH", "CUBIND_CUDA_LIBRARY", "LD_LIBRARY_PATH", "LD_PRELOAD")}
    clean.update(env or {}, PYTHONPATH=pythonpath())
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=clean, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def read_struct(obj, offset, ctype):
    """The C value at ``offset`` bytes into a struct object's storage."""
    return ctype.from_address(obj.getPtr() + offset).value


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


# -- enums ------------------------------------------------------------------------


def _header_enum(typedef_name):
    """{name: value} of the explicit ``NAME = <decimal or hex>`` members of an enum of cuda.h."""
    body = re.search(r"typedef enum \w+\s*\{([^}]*)\}\s*" + typedef_name + ";", CUDA_H.read_text())[1]
    return {name: int(value, 0) for name, value in re.findall(r"^\s*(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\b", body,
                                                              re.MULTILINE)}


@needs_cuda
@needs_header
@pytest.mark.parametrize("enum_name", ["CUresult", "CUdevice_attribute", "CUjit_option", "CUpointer_attribute"])
def test_enum_members_match_header(enum_name):
    expected = _header_enum(enum_name)
    assert len(expected) > 10
    members = getattr(cuda, enum_name).__members__
    assert {name: members[name].value for name in expected if name in members} == expected
    assert set(expected) <= set(members)


@needs_cuda
def test_cuda_result_is_int_like():
    R = cuda.CUresult
    assert R.CUDA_SUCCESS == 0 and isinstance(R.CUDA_SUCCESS, int)
    assert R.CUDA_ERROR_INVALID_VALUE == 1 and int(R.CUDA_ERROR_OUT_OF_MEMORY) == 2
    assert R.CUDA_ERROR_NOT_FOUND.name == "CUDA_ERROR_NOT_FOUND" and R.CUDA_ERROR_NOT_FOUND.value == 500
    assert repr(R.CUDA_SUCCESS) == "<CUresult.CUDA_SUCCESS: 0>"
    assert hash(R.CUDA_ERROR_INVALID_VALUE) == hash(1) and {1: "x"}[R.CUDA_ERROR_INVALID_VALUE] == "x"
    assert R(0) is R.CUDA_SUCCESS and R(999) is R.CUDA_ERROR_UNKNOWN
    assert R.CUDA_ERROR_STUB_LIBRARY in R and list(R)[0] is R.CUDA_SUCCESS


@needs_cuda
@pytest.mark.parametrize("value", [-1, 12345, 2**40])
def test_cuda_result_unknown_value(value):
    with pytest.raises(ValueError):
        cuda.CUresult(value)


@needs_cuda
def test_device_attribute_aliases_share_a_member():
    A = cuda.CUdevice_attribute
    assert A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == 75
    assert A.CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK is A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
    assert A(8).name == "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"   # the first name in the header
    assert A["CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK"] == 12


# -- handles ----------------------------------------------------------------------

POINTER_HANDLES = ["CUcontext", "CUmodule", "CUfunction", "CUkernel", "CUlibrary", "CUstream", "CUevent",
                   "CUgraph", "CUgraphExec", "CUgraphNode", "CUmemoryPool"]
# name -> (ctype of the stored value, a value that fits, values that do not)
INTEGER_HANDLES = {
    "CUdevice": (ctypes.c_int, -1, [2**31, -(2**31) - 1]),
    "CUdeviceptr": (ctypes.c_uint64, 2**64 - 1, [-1, 2**64]),
    "CUmemGenericAllocationHandle": (ctypes.c_uint64, 2**64 - 1, [-1, 2**64]),
}
ALL_HANDLES = POINTER_HANDLES + list(INTEGER_HANDLES)


def _stored_ctype(name):
    return INTEGER_HANDLES[name][0] if name in INTEGER_HANDLES else ctypes.c_size_t


@needs_cuda
@pytest.mark.parametrize("name", ALL_HANDLES)
def test_handle_int_eq_hash(name):
    cls = getattr(cuda, name)
    a, b, c = cls(0x1234), cls(0x1234), cls(0x1235)
    assert int(a) == 0x1234 and int(cls()) == 0 and int(cls(0)) == 0
    assert a == b and a != c
    assert hash(a) == hash(b) and len({a, b, c}) == 2


@needs_cuda
@pytest.mark.parametrize("name", ALL_HANDLES)
def test_handle_repr(name):
    cls = getattr(cuda, name)
    if name in POINTER_HANDLES:
        assert repr(cls(0x7F0012345678)) == f"<{name} 0x7f0012345678>"
        assert repr(cls(0)) == f"<{name} 0x0>"
    else:   # integer-valued handles: hex or decimal, but the value
        match = re.fullmatch(rf"<{name} (0x[0-9a-fA-F]+|\d+)>", repr(cls(0x1234)))
        assert match and int(match[1], 0) == 0x1234, repr(cls(0x1234))


@needs_cuda
@pytest.mark.parametrize("name", ALL_HANDLES)
def test_handle_get_ptr_points_at_the_value(name):
    cls = getattr(cuda, name)
    handle = cls(0x5A5A)
    ptr = handle.getPtr()
    assert isinstance(ptr, int) and ptr != 0 and ptr == handle.getPtr()
    assert _stored_ctype(name).from_address(ptr).value == 0x5A5A


@needs_cuda
def test_handles_of_different_types_differ():
    assert cuda.CUstream(5) != cuda.CUevent(5)
    assert cuda.CUdeviceptr(5) != cuda.CUstream(5)


@needs_cuda
@pytest.mark.parametrize("name", list(INTEGER_HANDLES))
def test_integer_handle_range(name):
    ctype, fits, too_big = INTEGER_HANDLES[name]
    cls = getattr(cuda, name)
    assert int(cls(fits)) == fits
    assert ctype.from_address(cls(fits).getPtr()).value == fits
    for value in too_big:
        with pytest.raises(OverflowError):
            cls(value)


@needs_cuda
@pytest.mark.parametrize("name", POINTER_HANDLES)
def test_pointer_handle_range(name):
    cls = getattr(cuda, name)
    assert int(cls(2**64 - 1)) == 2**64 - 1
    for value in (-1, 2**64):
        with pytest.raises(OverflowError):
            cls(value)


@needs_cuda
@pytest.mark.parametrize("bad", ["0x10", 1.5, b"\x00" * 8])
def test_handle_from_wrong_type(bad):
    with pytest.raises(TypeError):
        cuda.CUstream(bad)


@needs_cuda
def test_numpy_integers_make_handles():
    np = pytest.importorskip("numpy")
    assert int(cuda.CUdeviceptr(np.uint64(2**63))) == 2**63
    assert int(cuda.CUdevice(np.int32(3))) == 3


# -- structs ----------------------------------------------------------------------

# C sizes on x86-64 (gcc -I/usr/local/cuda/include, CUDA 13.0).
C_SIZES = {
    "CUDA_MEMCPY2D": 128, "CUDA_MEMCPY3D": 200, "CUlaunchConfig": 56, "CUlaunchAttribute": 72,
    "CUlaunchAttributeValue": 64, "CUmemAllocationProp": 32, "CUmemAccessDesc": 12, "CUmemLocation": 8,
    "CUmemPoolProps": 88, "CUdevprop": 56, "CUuuid": 16, "CUDA_KERNEL_NODE_PARAMS": 72,
    "CUaccessPolicyWindow": 32,
}


@needs_cuda
@needs_x86_64
@pytest.mark.parametrize("name,size", C_SIZES.items(), ids=list(C_SIZES))
def test_struct_size_matches_c(name, size):
    cls = getattr(cuda, name)
    assert type(cls.sizeof) is int and cls.sizeof == size
    assert type(cls()).sizeof == size


@needs_cuda
def test_struct_is_zero_initialised():
    copy = cuda.CUDA_MEMCPY2D()
    assert ctypes.string_at(copy.getPtr(), cuda.CUDA_MEMCPY2D.sizeof) == bytes(cuda.CUDA_MEMCPY2D.sizeof)
    assert copy.WidthInBytes == 0 and copy.Height == 0 and copy.srcPitch == 0
    assert int(copy.srcDevice) == 0 and copy.srcMemoryType == 0


@needs_cuda
@needs_x86_64
def test_struct_fields_write_the_c_layout():
    copy = cuda.CUDA_MEMCPY2D()
    copy.srcMemoryType = cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    copy.srcHost = 0x7F00DEAD0000
    copy.dstMemoryType = 2   # enum fields take a plain int too
    copy.dstDevice = cuda.CUdeviceptr(0x3000_0000_0000)
    copy.srcDevice = 0x1000   # and handle fields a plain int
    copy.WidthInBytes = 2**64 - 1
    copy.Height = 7
    assert read_struct(copy, 16, ctypes.c_uint32) == 1
    assert read_struct(copy, 24, ctypes.c_size_t) == 0x7F00DEAD0000
    assert read_struct(copy, 32, ctypes.c_uint64) == 0x1000
    assert read_struct(copy, 88, ctypes.c_uint64) == 0x3000_0000_0000
    assert read_struct(copy, 112, ctypes.c_size_t) == 2**64 - 1
    assert read_struct(copy, 120, ctypes.c_size_t) == 7
    assert copy.WidthInBytes == 2**64 - 1 and copy.Height == 7
    assert copy.srcHost == 0x7F00DEAD0000
    assert int(copy.dstDevice) == 0x3000_0000_0000 and int(copy.srcDevice) == 0x1000


@needs_cuda
def test_enum_field_reads_back_as_member():
    copy = cuda.CUDA_MEMCPY2D()
    copy.dstMemoryType = 2
    assert copy.dstMemoryType is cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copy.srcMemoryType = cuda.CUmemorytype.CU_MEMORYTYPE_ARRAY
    assert copy.srcMemoryType is cuda.CUmemorytype.CU_MEMORYTYPE_ARRAY


@needs_cuda
@needs_x86_64
def test_handle_field_takes_handle_int_or_none():
    config = cuda.CUlaunchConfig()
    config.hStream = cuda.CUstream(0x10)
    assert int(config.hStream) == 0x10 and read_struct(config, 32, ctypes.c_size_t) == 0x10
    config.hStream = 0x20
    assert int(config.hStream) == 0x20
    config.hStream = None
    assert int(config.hStream) == 0 and read_struct(config, 32, ctypes.c_size_t) == 0


@needs_cuda
@pytest.mark.parametrize("struct,field,bad", [
    ("CUDA_MEMCPY2D", "WidthInBytes", "x"),
    ("CUDA_MEMCPY2D", "Height", float("nan")),  # a finite float converts toward zero, as in C
    ("CUDA_MEMCPY2D", "srcMemoryType", "CU_MEMORYTYPE_HOST"),
    ("CUDA_MEMCPY2D", "srcHost", 1.5),
    ("CUDA_MEMCPY2D", "dstDevice", "0"),
    ("CUlaunchConfig", "hStream", 2.0),
    ("CUmemAccessDesc", "location", 5),
])
def test_struct_field_wrong_type_names_field(struct, field, bad):
    obj = getattr(cuda, struct)()
    with pytest.raises(TypeError, match=field):
        setattr(obj, field, bad)


@needs_cuda
@pytest.mark.parametrize("struct,field,bad", [
    ("CUDA_MEMCPY2D", "WidthInBytes", -1),
    ("CUDA_MEMCPY2D", "WidthInBytes", 2**64),
    ("CUlaunchConfig", "gridDimX", 2**32),
    ("CUlaunchConfig", "numAttrs", -1),
    ("CUmemLocation", "id", 2**31),
    ("CUDA_MEMCPY2D", "srcDevice", 2**64),
])
def test_struct_field_out_of_range_names_field(struct, field, bad):
    obj = getattr(cuda, struct)()
    with pytest.raises(OverflowError, match=field):
        setattr(obj, field, bad)
    assert getattr(obj, field) == 0 or int(getattr(obj, field)) == 0   # unchanged


# Ints of one internal digit (|v| < 2**30) take a read-in-place fast path:
# the values either side of that boundary and of the C type's range must
# convert alike.
@needs_cuda
@pytest.mark.parametrize("struct,field,low,high", [
    ("CUmemLocation", "id", -2**31, 2**31 - 1),        # int
    ("CUlaunchConfig", "gridDimX", 0, 2**32 - 1),      # unsigned int
    ("CUDA_MEMCPY2D", "WidthInBytes", 0, 2**64 - 1),   # size_t
])
def test_struct_int_fields_round_trip_across_the_one_digit_boundary(struct, field, low, high):
    obj = getattr(cuda, struct)()
    for value in (0, 1, -1, 2**30 - 1, 2**30, -(2**30 - 1), -2**30, low, high):
        if low <= value <= high:
            setattr(obj, field, value)
            assert getattr(obj, field) == value, value
        else:
            with pytest.raises(OverflowError, match=field):
                setattr(obj, field, value)
    for bad in (low - 1, high + 1):
        with pytest.raises(OverflowError, match=field):
            setattr(obj, field, bad)


@needs_cuda
@needs_x86_64
def test_nested_struct_is_a_view_into_the_parent():
    prop = cuda.CUmemAllocationProp()
    prop.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 3
    prop.allocFlags.usage = 0xBEEF
    assert prop.location.id == 3 and prop.location.type == cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    assert read_struct(prop, 8, ctypes.c_int) == cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    assert read_struct(prop, 12, ctypes.c_int) == 3
    assert read_struct(prop, 26, ctypes.c_uint16) == 0xBEEF


@needs_cuda
def test_nested_view_keeps_parent_alive():
    prop = cuda.CUmemAllocationProp()
    prop.location.id = 11
    location = prop.location
    del prop
    gc.collect()
    _ = [bytearray(64) for _ in range(1000)]   # reuse freed memory, if any
    assert location.id == 11


@needs_cuda
def test_assigning_a_nested_struct_copies_it():
    location = cuda.CUmemLocation()
    location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    location.id = 5
    desc = cuda.CUmemAccessDesc()
    desc.location = location
    location.id = 6   # C struct assignment copies: desc is not affected
    assert desc.location.id == 5
    assert desc.location.type == cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE


@needs_cuda
@needs_x86_64
def test_union_with_anonymous_struct_member():
    attr = cuda.CUlaunchAttribute()
    attr.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x = 2
    attr.value.clusterDim.y = 1
    attr.value.clusterDim.z = 1
    assert (attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z) == (2, 1, 1)
    assert read_struct(attr, 0, ctypes.c_uint32) == cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert [read_struct(attr, 8 + 4 * i, ctypes.c_uint32) for i in range(3)] == [2, 1, 1]
    assert attr.value.cooperative == 2   # a union: its members share storage


@needs_cuda
@needs_x86_64
def test_fixed_array_field_is_a_list():
    prop = cuda.CUdevprop()
    assert prop.maxThreadsDim == [0, 0, 0]
    prop.maxThreadsDim = [1024, 512, 64]
    prop.maxGridSize = (2**31 - 1, 65535, -1)
    assert prop.maxThreadsDim == [1024, 512, 64] and isinstance(prop.maxThreadsDim, list)
    assert [read_struct(prop, 4 + 4 * i, ctypes.c_int) for i in range(3)] == [1024, 512, 64]
    assert [read_struct(prop, 16 + 4 * i, ctypes.c_int) for i in range(3)] == [2**31 - 1, 65535, -1]


@needs_cuda
@pytest.mark.parametrize("bad,exc", [([1, 2], ValueError), ([1, 2, 3, 4], ValueError),
                                     ([1, 2, 2**31], OverflowError), ([1, "2", 3], TypeError)])
def test_fixed_array_field_bad_value_names_field(bad, exc):
    prop = cuda.CUdevprop()
    with pytest.raises(exc, match="maxThreadsDim"):
        prop.maxThreadsDim = bad


def _cluster_attribute(x):
    attr = cuda.CUlaunchAttribute()
    attr.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x = x
    attr.value.clusterDim.y = 1
    attr.value.clusterDim.z = 1
    return attr


@needs_cuda
@needs_x86_64
def test_pointer_to_array_field_keeps_the_list_alive():
    config = cuda.CUlaunchConfig()
    attrs = [_cluster_attribute(2), _cluster_attribute(4)]
    config.attrs = attrs
    config.numAttrs = 2   # the count is set as in C
    del attrs
    gc.collect()
    _ = [bytearray(72) for _ in range(1000)]   # reuse freed memory, if any
    array = read_struct(config, 40, ctypes.c_size_t)
    assert array != 0 and read_struct(config, 48, ctypes.c_uint32) == 2
    stride = cuda.CUlaunchAttribute.sizeof
    cluster = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    for i, x in enumerate((2, 4)):
        item = array + i * stride
        assert ctypes.c_uint32.from_address(item).value == cluster
        assert ctypes.c_uint32.from_address(item + 8).value == x


@needs_cuda
@needs_x86_64
def test_pointer_to_array_field_set_to_none_is_null():
    config = cuda.CUlaunchConfig()
    config.attrs = [_cluster_attribute(2)]
    config.attrs = None
    assert read_struct(config, 40, ctypes.c_size_t) == 0


@needs_cuda
@pytest.mark.parametrize("kind", ["int", "other_struct", "str"])
def test_pointer_to_array_field_wrong_items_names_field(kind):
    bad = {"int": [1], "other_struct": [cuda.CUmemLocation()], "str": "attrs"}[kind]
    config = cuda.CUlaunchConfig()
    with pytest.raises(TypeError, match="attrs"):
        config.attrs = bad


@needs_cuda
def test_struct_get_ptr_is_stable_and_distinct():
    a, b = cuda.CUDA_MEMCPY2D(), cuda.CUDA_MEMCPY2D()
    assert a.getPtr() == a.getPtr() != 0
    assert a.getPtr() != b.getPtr()


# -- argument conversion (raised before any C call, so no driver is needed) --------


def _bad_calls():
    """(id, call, exception, parameter name) for calls whose conversion must fail."""
    if cuda is None:
        return []
    C = cuda
    params_1 = ((1, 2), (ctypes.c_int,))
    return [
        ("alloc_str", lambda: C.cuMemAlloc("x"), TypeError, "bytesize"),
        ("alloc_nan", lambda: C.cuMemAlloc(float("nan")), TypeError, "bytesize"),
        ("alloc_negative", lambda: C.cuMemAlloc(-1), OverflowError, "bytesize"),
        ("alloc_2_64", lambda: C.cuMemAlloc(2**64), OverflowError, "bytesize"),
        ("device_get_2_40", lambda: C.cuDeviceGet(2**40), OverflowError, "ordinal"),
        ("device_get_inf", lambda: C.cuDeviceGet(float("inf")), TypeError, "ordinal"),
        ("init_str", lambda: C.cuInit("0"), TypeError, "Flags"),
        ("init_negative", lambda: C.cuInit(-1), OverflowError, "Flags"),
        *([("ctx_create_dev", lambda: C.cuCtxCreate(None, 0, "dev"), TypeError, "dev"),
           ("ctx_create_params", lambda: C.cuCtxCreate("p", 0, 0), TypeError, "ctxCreateParams")] if CUDA_13 else
          [("ctx_create_dev", lambda: C.cuCtxCreate(0, "dev"), TypeError, "dev"),
           ("ctx_create_flags", lambda: C.cuCtxCreate("f", 0), TypeError, "flags"),
           ("ctx_create_v4_params", lambda: C.cuCtxCreate_v4("p", 0, 0), TypeError, "ctxCreateParams")]),
        ("stream_sync_str", lambda: C.cuStreamSynchronize("s"), TypeError, "hStream"),
        ("stream_sync_2_64", lambda: C.cuStreamSynchronize(2**64), OverflowError, "hStream"),
        ("stream_sync_event", lambda: C.cuStreamSynchronize(C.CUevent(1)), TypeError, "hStream"),
        ("free_nan", lambda: C.cuMemFree(float("nan")), TypeError, "dptr"),  # 1.5 converts toward zero
        ("htod_object", lambda: C.cuMemcpyHtoD(0, object(), 4), TypeError, "srcHost"),
        ("htod_count", lambda: C.cuMemcpyHtoD(0, None, -4), OverflowError, "ByteCount"),
        ("dtoh_str", lambda: C.cuMemcpyDtoH("buffer", 0, 4), TypeError, "dstHost"),
        ("memset_uc", lambda: C.cuMemsetD8(0, 256, 1), OverflowError, "uc"),
        ("attribute_str", lambda: C.cuDeviceGetAttribute("x", 0), TypeError, "attrib"),
        ("error_name_str", lambda: C.cuGetErrorName("CUDA_SUCCESS"), TypeError, "error"),
        ("device_name_len", lambda: C.cuDeviceGetName(2**31, 0), OverflowError, "len"),
        ("host_func_not_callable", lambda: C.cuLaunchHostFunc(None, "f", None), TypeError, "fn"),
        ("stream_callback_float", lambda: C.cuStreamAddCallback(None, 1.5, None, 0), TypeError, "callback"),
        ("memcpy2d_str", lambda: C.cuMemcpy2D("copy"), TypeError, "pCopy"),
        ("memcpy2d_wrong_struct", lambda: C.cuMemcpy2D(C.CUDA_MEMCPY3D()), TypeError, "pCopy"),
        ("launch_params_str", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, "args", None),
         TypeError, "kernelParams"),
        ("launch_params_lengths", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, params_1, None),
         ValueError, "kernelParams"),
        ("launch_params_type", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, ((1,), (str,)), None),
         TypeError, "kernelParams"),
        ("launch_params_int8", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, ((300,), (ctypes.c_int8,)),
                                                        None), OverflowError, "kernelParams"),
        ("launch_params_nan_for_int", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                               ((float("nan"),), (ctypes.c_int,)), None),
         TypeError, "kernelParams"),
        ("launch_params_ubyte", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                         ((1, 256), (ctypes.c_int, ctypes.c_ubyte)), None),
         OverflowError, r"kernelParams\[1\]"),
        ("launch_params_uint_negative", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                                 ((-1,), (ctypes.c_uint,)), None),
         OverflowError, r"kernelParams\[0\]"),
        ("launch_params_longdouble", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                              ((1.0,), (ctypes.c_longdouble,)), None),
         TypeError, r"kernelParams\[0\]"),
        ("launch_params_none_type_int", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                                 ((5,), (None,)), None),
         TypeError, r"kernelParams\[0\].*a handle or a struct"),
        ("launch_params_pointer_str", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                               (("p",), (ctypes.c_void_p,)), None),
         TypeError, r"kernelParams\[0\]"),
        ("launch_params_values_not_sequence", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None,
                                                                       (5, (ctypes.c_int,)), None),
         TypeError, "kernelParams: values"),
        ("launch_params_list", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, [1, 2], None),
         TypeError, "kernelParams"),
        ("launch_params_negative_address", lambda: C.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, -8, None),
         OverflowError, "kernelParams"),
        ("tensor_map_strides", lambda: C.cuTensorMapEncodeTiled(C.CUtensorMap(), 0, 3, 0, [4, 4, 4], [16],
                                                                [1, 1, 1], [1, 1, 1], 0, 0, 0, 0),
         ValueError, r"globalStrides: 1 items, but tensorRank - 1 is 2"),
        ("tensor_map_box", lambda: C.cuTensorMapEncodeTiled(C.CUtensorMap(), 0, 2, 0, [4, 4], [16], [1], [1, 1],
                                                            0, 0, 0, 0),
         ValueError, r"boxDim: 1 items, but tensorRank is 2"),
        ("tensor_map_corner", lambda: C.cuTensorMapEncodeIm2col(C.CUtensorMap(), 0, 4, 0, [4, 4, 4, 4],
                                                                [16, 256, 4096], [0], [1, 1], 1, 1, [1, 1, 1, 1],
                                                                0, 0, 0, 0),
         ValueError, r"pixelBoxLowerCorner: 1 items, but tensorRank - 2 is 2"),
        ("launch_grid", lambda: C.cuLaunchKernel(0, 2**32, 1, 1, 1, 1, 1, 0, None, None, None),
         OverflowError, "gridDimX"),
        ("launch_ex_config", lambda: C.cuLaunchKernelEx(C.CUDA_MEMCPY2D(), 0, None, None), TypeError, "config"),
        ("jit_count", lambda: C.cuModuleLoadDataEx(b"x\0", 2, [C.CUjit_option.CU_JIT_LOG_VERBOSE], [1]),
         ValueError, "options: 1 items, but numOptions is 2"),
        ("jit_values", lambda: C.cuModuleLoadDataEx(b"x\0", 1, [C.CUjit_option.CU_JIT_LOG_VERBOSE], []),
         ValueError, "optionValues: 0 items, but numOptions is 1"),
        ("jit_option_str", lambda: C.cuModuleLoadDataEx(b"x\0", 1, ["verbose"], [1]), TypeError, "options"),
        ("set_access_count", lambda: C.cuMemSetAccess(0, 0, [C.CUmemAccessDesc()], 2), ValueError, "desc|count"),
        ("set_access_items", lambda: C.cuMemSetAccess(0, 0, [1], 1), TypeError, "desc"),
        ("module_name_nul", lambda: C.cuModuleGetFunction(0, b"k\0x"), ValueError, "name"),
    ]


BAD_CALLS = _bad_calls()


@needs_cuda
@pytest.mark.parametrize("call,exc,param", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_bad_argument_names_the_parameter(call, exc, param):
    with pytest.raises(exc, match=param):
        call()


@needs_cuda
def test_bad_arguments_raise_without_a_driver():
    # The same errors in a process where the driver cannot be found: conversion comes first.
    proc = run_python("""
        import cuda
        for call in (lambda: cuda.cuMemAlloc("x"), lambda: cuda.cuDeviceGet(2**40)):
            try:
                call()
            except (TypeError, OverflowError) as exc:
                print(type(exc).__name__, exc)
    """, {"CUBIND_CUDA_LIBRARY": "/nonexistent/libcuda.so.1"})
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    assert lines[0].startswith("TypeError") and "bytesize" in lines[0]
    assert lines[1].startswith("OverflowError") and "ordinal" in lines[1]


# -- coverage and names ------------------------------------------------------------


@pytest.fixture(scope="module")
def coverage_report():
    if not GENERATOR.exists():
        pytest.skip(f"the generator is not built ({GENERATOR})")
    if not DRIVER_SPEC.exists():
        pytest.skip(f"no driver spec ({DRIVER_SPEC})")
    if cuda_include() is None:
        pytest.skip("no CUDA headers")
    proc = subprocess.run([str(GENERATOR), "--spec", str(DRIVER_SPEC), "-I", str(cuda_include()), "--report"],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _report_lines(report):
    bound, skipped = [], []
    for line in report.splitlines():
        if line.startswith("  bound    "):
            bound.append(line[len("  bound    "):].split(" (calls ")[0].strip())
        elif line.startswith("  skipped  "):
            name, _, reason = line[len("  skipped  "):].partition(":")
            skipped.append((name.split(" (calls ")[0].strip(), reason.strip()))
    return bound, skipped


@needs_cuda
def test_every_bound_function_is_in_the_module(coverage_report):
    bound, skipped = _report_lines(coverage_report)
    assert len(bound) > 400, coverage_report[:2000]
    for name in ("cuInit", "cuMemAlloc", "cuCtxCreate", "cuLaunchKernel", "cuLaunchKernelEx", "cuGraphInstantiate",
                 "cuStreamAddCallback", "cuLaunchHostFunc", "cuMemcpy3D", "cuPointerGetAttribute"):
        assert name in bound, name
    missing = [name for name in bound if not callable(getattr(cuda, name, None))]
    assert not missing
    assert not {name for name, _ in skipped} & set(bound)


@needs_cuda
def test_every_skipped_function_has_a_reason(coverage_report):
    _, skipped = _report_lines(coverage_report)
    assert not [name for name, reason in skipped if not reason]


@needs_cuda
@needs_header
def test_no_abi_suffixed_names():
    # ``#define cuMemAlloc cuMemAlloc_v2``: the Python name is cuMemAlloc only.
    pairs = re.findall(r"^[ \t]*#define\s+(cu\w+)\s+(?:__CUDA_API_PT(?:DS|SZ)\()?(cu\w+)\)?[ \t]*$",
                       CUDA_H.read_text(), re.MULTILINE)
    targets = {target for name, target in pairs if target != name and re.search(r"_v\d+$", target)}
    assert "cuMemAlloc_v2" in targets and ("cuCtxCreate_v4" if CUDA_13 else "cuCtxCreate_v2") in targets
    assert not [name for name in targets if hasattr(cuda, name)]
    assert not [name for name in dir(cuda) if re.search(r"_pt(sz|ds)$", name)]
    # Functions whose own name carries a version (no #define) keep it: 13.x's
    # cuCtxSynchronize_v2(ctx), 12.x's cuCtxCreate_v4 (cuCtxCreate is _v2 there).
    if CUDA_13:
        assert callable(cuda.cuCtxSynchronize_v2) and callable(cuda.cuCtxSynchronize)
    else:
        assert callable(cuda.cuCtxCreate_v4) and callable(cuda.cuCtxCreate)


@needs_cuda
@pytest.mark.parametrize("name,words", [("cuMemAlloc", ["bytesize"]), ("cuLaunchKernel", ["kernelParams"]),
                                        ("cuCtxCreate", ["ctxCreateParams", "flags", "dev"] if CUDA_13 else
                                         ["cuCtxCreate(flags, dev)"])])
def test_docstrings_describe_python_signature(name, words):
    # help() shows the signature (__text_signature__), then the docstring.
    doc = getattr(cuda, name).__doc__
    assert doc and not doc.startswith(name + "(")
    text = _signature(name) + "\n" + doc
    for word in words:
        assert word in text, word


def _signature(name):
    import inspect

    return name + str(inspect.signature(getattr(cuda, name)))


@needs_cuda
def test_noncontiguous_kernel_params_buffer_is_refused():
    np = pytest.importorskip("numpy")
    strided = np.zeros(4, dtype=np.uint64)[::2]
    with pytest.raises(ValueError, match="kernelParams"):
        cuda.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, strided, None)


@needs_cuda
def test_integer_handles_are_indices_and_pass_as_addresses():
    import operator

    assert operator.index(cuda.CUdeviceptr(0x40)) == 0x40
    assert operator.index(cuda.CUdevice(3)) == 3
    # A void* parameter takes a CUdeviceptr as its address: no TypeError; the
    # call then reaches the driver, or stops where there is none.
    try:
        cuda.cuTensorMapEncodeTiled(cuda.CUtensorMap(), 7, 1, cuda.CUdeviceptr(0x1000), [64], None, [16], [1],
                                    0, 0, 0, 0)
    except OSError as exc:
        assert "CUBIND_CUDA_LIBRARY" in str(exc)


# -- values typed by an attribute (bindings/driver.toml attribute_types) --------------


@needs_cuda
def test_attribute_values_take_the_classic_signatures():
    # The void* value is gone from the getters: it comes back typed.
    assert _signature("cuPointerGetAttribute") == "cuPointerGetAttribute(attribute, ptr)"
    assert _signature("cuMemPoolGetAttribute") == "cuMemPoolGetAttribute(pool, attr)"
    assert _signature("cuMemPoolSetAttribute") == "cuMemPoolSetAttribute(pool, attr, value)"
    assert _signature("cuDeviceGetGraphMemAttribute") == "cuDeviceGetGraphMemAttribute(device, attr)"
    assert _signature("cuMemRangeGetAttribute") == "cuMemRangeGetAttribute(dataSize, attribute, devPtr, count)"


@needs_cuda
def test_an_attribute_without_a_known_type_is_refused_before_c():
    # C would write a value of unknown size: the call stops first, GPU or not.
    with pytest.raises(ValueError, match="attribute: CUpointer_attribute 999 has no known value type"):
        cuda.cuPointerGetAttribute(999, 0)
    with pytest.raises(ValueError, match="attr: CUmemPool_attribute 77 has no known value type"):
        cuda.cuMemPoolSetAttribute(None, 77, 0)
    with pytest.raises(ValueError, match="attributes: CUpointer_attribute 999 has no known value type"):
        cuda.cuPointerGetAttributes(2, [cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, 999], 0)
    assert _signature("cuPointerGetAttributes") == "cuPointerGetAttributes(numAttributes, attributes, ptr)"


@needs_cuda
def test_attribute_values_are_converted_by_their_type_before_c():
    A = cuda.CUpointer_attribute
    with pytest.raises(TypeError, match="value: CU_POINTER_ATTRIBUTE_HOST_POINTER cannot be set"):
        cuda.cuPointerSetAttribute(0, A.CU_POINTER_ATTRIBUTE_HOST_POINTER, 0)
    with pytest.raises(OverflowError, match="value"):
        cuda.cuPointerSetAttribute(2**32, A.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0)
    with pytest.raises(TypeError, match="value"):
        cuda.cuPointerSetAttribute("1", A.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0)
    P = cuda.CUmemPool_attribute
    # A raw value (a buffer without __index__) must hold the attribute's C type.
    with pytest.raises(ValueError, match="value: 4 bytes given, the attribute's value takes 8"):
        cuda.cuMemPoolSetAttribute(None, P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.c_uint32(1))
    with pytest.raises(TypeError, match="pool"):
        cuda.cuMemPoolSetAttribute("pool", P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1)


@needs_cuda
def test_value_classes_field_aliases_and_char_arrays():
    # Value holders users build, as in NVIDIA's bindings.
    big = cuda.cuuint64_t(1 << 40)
    assert int(big) == 1 << 40 and repr(big) == f"<cuuint64_t {1 << 40}>" and hex(big) == hex(1 << 40)
    assert repr(cuda.CUdevice(3)) == "<CUdevice 3>"
    params = cuda.CUstreamBatchMemOpParams()
    params.writeValue.value64 = big
    assert int(params.writeValue.value64) == 1 << 40
    params.writeValue.value64 = 7   # a plain int too
    assert int(params.writeValue.value64) == 7
    with pytest.raises(OverflowError):
        cuda.cuuint32_t(1 << 32)
    # A field renamed for Cython is also there under its C name.
    uuid = cuda.CUuuid()
    uuid.bytes = bytes(range(16))
    assert uuid.bytes == uuid.bytes_ == bytes(range(16))
    # char arrays take ints as C does, -128..255.
    uuid.bytes = [-1, 255, 0, 65]
    assert uuid.bytes[:4] == b"\xff\xff\x00A"
    with pytest.raises(OverflowError, match=r"bytes_\[1\]: 256 does not fit in a char"):
        uuid.bytes = [0, 256]


@needs_cuda
def test_ext_sem_array_field_set_from_a_list():
    # A pointer field counted by a sibling (bindings/driver.toml [fields]).
    params = cuda.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS()
    params.extSemArray = [cuda.CUexternalSemaphore(0x10), 0x20]
    params.numExtSems = 2
    assert [int(s) for s in params.extSemArray] == [0x10, 0x20]
    params.extSemArray = None   # NULL: numExtSems NULL handles, as the classic modules read it
    assert [int(s) for s in params.extSemArray] == [0, 0]


# == on a real GPU (each test marked gpu) ===========================================================



@pytest.fixture(name="cuda")
def cuda_in_context(driver, cu_context):
    """The driver module with device 0's primary context current (the module-level ``cuda`` is the same module)."""
    return driver


@pytest.fixture
def kernel(cuda, load_module):
    """Factory: compile + load ``src``, return its function ``name`` (a CUfunction)."""

    def get(src, name, kind="PTX"):
        return ok(cuda.cuModuleGetFunction, load_module(src, kind), name.encode())

    return get


@pytest.fixture
def pinned(cuda):
    """Factory: page-locked host memory (cuMemAllocHost) as a numpy array; freed at teardown."""
    allocations = []

    def alloc(count, dtype=np.uint8):
        nbytes = count * np.dtype(dtype).itemsize
        address = int(ok(cuda.cuMemAllocHost, nbytes))
        allocations.append(address)
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address)).view(dtype)

    yield alloc
    cuda.cuCtxSynchronize()
    for address in allocations:
        cuda.cuMemFreeHost(address)


def launch(cuda, f, grid, block, params, stream=None, shared=0):
    """cuLaunchKernel with 1D grid and block."""
    ok(cuda.cuLaunchKernel, f, grid, 1, 1, block, 1, 1, shared, stream, params, None)


FILL_SRC = r"""
extern "C" __global__ void fill(unsigned int *out, unsigned int value, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}
"""

SPIN_SRC = r"""
extern "C" __global__ void spin(long long cycles, unsigned int *out)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
    if (out) out[0] = 1;
}
"""


def fill_params(out, value, n):
    return (out, value, n), (None, ctypes.c_uint, ctypes.c_uint)


def read_u32(cuda, dptr, n):
    host = np.zeros(n, dtype=np.uint32)
    ok(cuda.cuMemcpyDtoH, host, dptr, host.nbytes)
    return host


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


# -- memory copies -------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("host_kind", ["numpy", "bytearray", "memoryview", "address"])
def test_htod_dtoh_sync(cuda, device_alloc, host_kind):
    data = np.arange(1000, dtype=np.uint32)
    back = np.zeros_like(data)
    src = {"numpy": data, "bytearray": bytearray(data.tobytes()), "memoryview": memoryview(data),
           "address": data.ctypes.data}[host_kind]
    dst = {"numpy": back, "bytearray": None, "memoryview": memoryview(back), "address": back.ctypes.data}[host_kind]
    dptr = device_alloc(data.nbytes)
    ok(cuda.cuMemcpyHtoD, dptr, src, data.nbytes)
    if dst is None:
        raw = bytearray(data.nbytes)
        ok(cuda.cuMemcpyDtoH, raw, dptr, data.nbytes)
        back = np.frombuffer(raw, dtype=np.uint32)
    else:
        ok(cuda.cuMemcpyDtoH, dst, dptr, data.nbytes)
    np.testing.assert_array_equal(back, data)


@pytest.mark.gpu
def test_htod_from_bytes(cuda, device_alloc):
    dptr = device_alloc(8)
    ok(cuda.cuMemcpyHtoD, dptr, b"cubind!\0", 8)
    raw = bytearray(8)
    ok(cuda.cuMemcpyDtoH, raw, dptr, 8)
    assert raw == b"cubind!\0"


@pytest.mark.gpu
def test_handles_and_ints_are_interchangeable(cuda, device_alloc, cu_stream):
    data = np.arange(16, dtype=np.uint8)
    back = np.zeros_like(data)
    dptr = device_alloc(16)
    ok(cuda.cuMemcpyHtoDAsync, int(dptr), data, 16, int(cu_stream))
    ok(cuda.cuMemcpyDtoHAsync, back, cuda.CUdeviceptr(int(dptr)), 16, cuda.CUstream(int(cu_stream)))
    ok(cuda.cuStreamSynchronize, int(cu_stream))
    ok(cuda.cuStreamSynchronize, None)   # the legacy default stream
    np.testing.assert_array_equal(back, data)


@pytest.mark.gpu
def test_dtod_sync_and_async(cuda, device_alloc, cu_stream):
    data = np.arange(4096, dtype=np.float64)
    a, b, c = (device_alloc(data.nbytes) for _ in range(3))
    ok(cuda.cuMemcpyHtoD, a, data, data.nbytes)
    ok(cuda.cuMemcpyDtoD, b, a, data.nbytes)
    ok(cuda.cuMemcpyDtoDAsync, c, b, data.nbytes, cu_stream)
    ok(cuda.cuStreamSynchronize, cu_stream)
    back = np.zeros_like(data)
    ok(cuda.cuMemcpyDtoH, back, c, data.nbytes)
    np.testing.assert_array_equal(back, data)


@pytest.mark.gpu
def test_async_copies_through_pinned_memory(cuda, device_alloc, cu_stream, pinned):
    n = 1 << 16
    src, dst = pinned(n, np.uint32), pinned(n, np.uint32)
    src[:] = np.arange(n, dtype=np.uint32) * 7
    dst[:] = 0
    dptr = device_alloc(src.nbytes)
    ok(cuda.cuMemcpyHtoDAsync, dptr, src, src.nbytes, cu_stream)
    ok(cuda.cuMemcpyDtoHAsync, dst, dptr, dst.nbytes, cu_stream)
    ok(cuda.cuStreamSynchronize, cu_stream)
    np.testing.assert_array_equal(dst, src)


@pytest.mark.gpu
def test_memcpy_unified_addressing(cuda, device_alloc):
    data = np.arange(64, dtype=np.int16)
    back = np.zeros_like(data)
    dptr = device_alloc(data.nbytes)
    ok(cuda.cuMemcpy, dptr, data.ctypes.data, data.nbytes)   # host addresses are CUdeviceptrs under UVA
    ok(cuda.cuMemcpy, back.ctypes.data, dptr, data.nbytes)
    np.testing.assert_array_equal(back, data)


def _copy_2d(cuda, src_kind, src, src_pitch, dst_kind, dst, dst_pitch, width, height, x=0, y=0):
    M = cuda.CUmemorytype
    copy = cuda.CUDA_MEMCPY2D()
    copy.srcXInBytes, copy.srcY = x, y
    copy.srcMemoryType = M.CU_MEMORYTYPE_HOST if src_kind == "host" else M.CU_MEMORYTYPE_DEVICE
    if src_kind == "host":
        copy.srcHost = src
    else:
        copy.srcDevice = src
    copy.srcPitch = src_pitch
    copy.dstMemoryType = M.CU_MEMORYTYPE_HOST if dst_kind == "host" else M.CU_MEMORYTYPE_DEVICE
    if dst_kind == "host":
        copy.dstHost = dst
    else:
        copy.dstDevice = dst
    copy.dstPitch = dst_pitch
    copy.WidthInBytes, copy.Height = width, height
    return copy


@pytest.mark.gpu
def test_memcpy_2d_pitched_sub_rectangle(cuda, cu_stream):
    host = np.arange(10 * 12, dtype=np.float32).reshape(10, 12)
    rows, cols, row0, col0 = 4, 5, 3, 2   # the block host[3:7, 2:7]
    width = cols * host.itemsize
    dptr, pitch = ok(cuda.cuMemAllocPitch, width, rows, 4)
    assert pitch >= width
    try:
        up = _copy_2d(cuda, "host", host.ctypes.data, host.strides[0], "device", dptr, pitch, width, rows,
                      x=col0 * host.itemsize, y=row0)
        ok(cuda.cuMemcpy2D, up)
        back = np.zeros((rows, cols), dtype=np.float32)
        down = _copy_2d(cuda, "device", dptr, pitch, "host", back.ctypes.data, back.strides[0], width, rows)
        ok(cuda.cuMemcpy2DAsync, down, cu_stream)
        ok(cuda.cuStreamSynchronize, cu_stream)
    finally:
        ok(cuda.cuMemFree, dptr)
    np.testing.assert_array_equal(back, host[row0:row0 + rows, col0:col0 + cols])


@pytest.mark.gpu
def test_memcpy_3d(cuda, device_alloc):
    M = cuda.CUmemorytype
    host = np.arange(3 * 4 * 5, dtype=np.uint16).reshape(3, 4, 5)
    depth, height, width = host.shape
    row = width * host.itemsize
    dptr = device_alloc(host.nbytes)

    def copy3d(src_host, dst_host):
        copy = cuda.CUDA_MEMCPY3D()
        if src_host is not None:
            copy.srcMemoryType, copy.srcHost = M.CU_MEMORYTYPE_HOST, src_host
            copy.dstMemoryType, copy.dstDevice = M.CU_MEMORYTYPE_DEVICE, dptr
        else:
            copy.srcMemoryType, copy.srcDevice = M.CU_MEMORYTYPE_DEVICE, dptr
            copy.dstMemoryType, copy.dstHost = M.CU_MEMORYTYPE_HOST, dst_host
        copy.srcPitch = copy.dstPitch = row
        copy.srcHeight = copy.dstHeight = height
        copy.WidthInBytes, copy.Height, copy.Depth = row, height, depth
        return copy

    ok(cuda.cuMemcpy3D, copy3d(host.ctypes.data, None))
    back = np.zeros_like(host)
    ok(cuda.cuMemcpy3D, copy3d(None, back.ctypes.data))
    np.testing.assert_array_equal(back, host)
    np.testing.assert_array_equal(read_u32(cuda, dptr, host.nbytes // 4), host.reshape(-1).view(np.uint32))


@pytest.mark.gpu
def test_memset_d8_d16_d32(cuda, device_alloc, cu_stream):
    n = 1024
    dptr = device_alloc(n * 4)
    ok(cuda.cuMemsetD8, dptr, 0xAB, n * 4)
    assert (read_u32(cuda, dptr, n) == 0xABABABAB).all()
    ok(cuda.cuMemsetD16, dptr, 0x1234, n * 2)
    assert (read_u32(cuda, dptr, n) == 0x12341234).all()
    ok(cuda.cuMemsetD32, dptr, 0xDEADBEEF, n)
    assert (read_u32(cuda, dptr, n) == 0xDEADBEEF).all()
    ok(cuda.cuMemsetD32Async, int(dptr) + 8, 7, 2, cu_stream)
    ok(cuda.cuMemsetD8Async, dptr, 0, 4, cu_stream)
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert read_u32(cuda, dptr, 5).tolist() == [0, 0xDEADBEEF, 7, 7, 0xDEADBEEF]


@pytest.mark.gpu
def test_memset_2d_d32(cuda):
    width, height = 6, 5
    dptr, pitch = ok(cuda.cuMemAllocPitch, width * 4, height, 4)
    try:
        ok(cuda.cuMemsetD2D32, dptr, pitch, 0x01020304, width, height)
        back = np.zeros((height, width), dtype=np.uint32)
        ok(cuda.cuMemcpy2D, _copy_2d(cuda, "device", dptr, pitch, "host", back.ctypes.data, width * 4,
                                     width * 4, height))
    finally:
        ok(cuda.cuMemFree, dptr)
    assert (back == 0x01020304).all()


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


# -- kernel parameters ------------------------------------------------------------

SCALARS_SRC = r"""
extern "C" __global__ void scalars(
    signed char i8, unsigned char u8, short i16, unsigned short u16,
    int i32, unsigned int u32, long long i64, unsigned long long u64,
    float f32, double f64, size_t sz, void *ptr, unsigned long long *out)
{
    out[0] = (unsigned long long)(long long)i8;
    out[1] = u8;
    out[2] = (unsigned long long)(long long)i16;
    out[3] = u16;
    out[4] = (unsigned long long)(long long)i32;
    out[5] = u32;
    out[6] = (unsigned long long)i64;
    out[7] = u64;
    out[8] = (unsigned long long)__double_as_longlong((double)f32);
    out[9] = (unsigned long long)__double_as_longlong(f64);
    out[10] = sz;
    out[11] = (unsigned long long)ptr;
}
"""
SCALAR_TYPES = [ctypes.c_int8, ctypes.c_uint8, ctypes.c_int16, ctypes.c_uint16, ctypes.c_int32, ctypes.c_uint32,
                ctypes.c_int64, ctypes.c_uint64, ctypes.c_float, ctypes.c_double, ctypes.c_size_t, ctypes.c_void_p]
SCALAR_VALUES = {
    "extremes": [-128, 255, -32768, 65535, -(2**31), 2**32 - 1, -(2**63), 2**64 - 1, -3.5, 1.7976931348623157e308,
                 2**64 - 1, 2**64 - 16],
    "ordinary": [-5, 200, -1234, 54321, -123456789, 3_000_000_000, -(2**40) - 7, 2**63 + 5, 0.1, -2.25e-300,
                 12345, 0x7F00_0000_1000],
}


def _check_scalars(out, values):
    signed, unsigned, floats = out.view(np.int64), out, out.view(np.float64)
    assert signed[[0, 2, 4, 6]].tolist() == [values[0], values[2], values[4], values[6]]
    assert unsigned[[1, 3, 5, 7, 10, 11]].tolist() == [values[1], values[3], values[5], values[7], values[10],
                                                       values[11]]
    assert floats[8] == np.float64(np.float32(values[8]))   # float is passed as a C float
    assert floats[9] == values[9]


def _scalar_storage(values, out):
    """ctypes objects holding each argument, in kernel order (the last is the output pointer)."""
    return [t(v) for t, v in zip(SCALAR_TYPES, values)] + [ctypes.c_uint64(int(out))]


@pytest.mark.gpu
@pytest.mark.parametrize("value_set", list(SCALAR_VALUES))
@pytest.mark.parametrize("form", ["tuple_handle", "tuple_void_p", "uint64_array", "ctypes_array", "int_address"])
def test_kernel_params_scalars(cuda, kernel, device_alloc, form, value_set):
    f = kernel(SCALARS_SRC, "scalars")
    values = SCALAR_VALUES[value_set]
    out = device_alloc(12 * 8)
    ok(cuda.cuMemsetD8, out, 0, 12 * 8)
    keep = None
    if form == "tuple_handle":
        params = ((*values, out), (*SCALAR_TYPES, None))
    elif form == "tuple_void_p":
        params = ((*values, int(out)), (*SCALAR_TYPES, ctypes.c_void_p))
    else:
        keep = _scalar_storage(values, out)   # the values; params holds their addresses (a void*[])
        addresses = np.array([ctypes.addressof(v) for v in keep], dtype=np.uint64)
        params = {"uint64_array": addresses, "int_address": addresses.ctypes.data,
                  "ctypes_array": (ctypes.c_void_p * len(keep))(*addresses.tolist())}[form]
    launch(cuda, f, 1, 1, params)
    ok(cuda.cuCtxSynchronize)
    del keep
    host = np.zeros(12, dtype=np.uint64)
    ok(cuda.cuMemcpyDtoH, host, out, host.nbytes)
    _check_scalars(host, values)


@pytest.mark.gpu
def test_kernel_params_none(cuda, load_module):
    module = load_module('__device__ int flag;\nextern "C" __global__ void set_flag() { flag = 42; }\n')
    f = ok(cuda.cuModuleGetFunction, module, b"set_flag")
    dptr, _ = ok(cuda.cuModuleGetGlobal, module, b"flag")
    ok(cuda.cuMemsetD32, dptr, 0, 1)
    launch(cuda, f, 1, 1, None)
    ok(cuda.cuCtxSynchronize)
    assert read_u32(cuda, dptr, 1)[0] == 42


@pytest.mark.gpu
def test_kernel_params_through_extra_buffer(cuda, kernel, device_alloc):
    f = kernel(FILL_SRC, "fill")
    out = device_alloc(32 * 4)
    # fill(unsigned int *out, unsigned int value, unsigned int n): offsets 0, 8, 12.
    packed = np.zeros(16, dtype=np.uint8)
    packed[0:8].view(np.uint64)[0] = int(out)
    packed[8:12].view(np.uint32)[0] = 1000
    packed[12:16].view(np.uint32)[0] = 32
    size = np.array([packed.nbytes], dtype=np.uint64)
    extra = np.array([cuda.CU_LAUNCH_PARAM_BUFFER_POINTER, packed.ctypes.data,
                      cuda.CU_LAUNCH_PARAM_BUFFER_SIZE, size.ctypes.data, cuda.CU_LAUNCH_PARAM_END], dtype=np.uint64)
    ok(cuda.cuLaunchKernel, f, 1, 1, 1, 32, 1, 1, 0, None, None, extra)
    ok(cuda.cuCtxSynchronize)
    np.testing.assert_array_equal(read_u32(cuda, out, 32), np.arange(32) + 1000)


STRUCT_SRC = r"""
struct Rec { char c; double d; int i; short s[3]; };
extern "C" __global__ void take_struct(Rec r, double *out)
{
    out[0] = r.c; out[1] = r.d; out[2] = r.i; out[3] = r.s[0]; out[4] = r.s[1]; out[5] = r.s[2];
}
"""
REC_FIELDS = (-7, 2.5e10, -123456, (1, -2, 3))


class Rec(ctypes.Structure):
    _fields_ = [("c", ctypes.c_int8), ("d", ctypes.c_double), ("i", ctypes.c_int32), ("s", ctypes.c_int16 * 3)]


def _pack_rec(packer):
    c, d, i, s = REC_FIELDS
    if packer == "numpy":
        rec = np.zeros(1, dtype=np.dtype([("c", "i1"), ("d", "f8"), ("i", "i4"), ("s", "i2", (3,))], align=True))
        rec[0] = (c, d, i, s)
        assert rec.itemsize == 32   # sizeof(Rec) in C
        return rec, rec.ctypes.data
    rec = Rec(c, d, i, (ctypes.c_int16 * 3)(*s))
    assert ctypes.sizeof(rec) == 32
    return rec, ctypes.addressof(rec)


@pytest.mark.gpu
@pytest.mark.parametrize("packer", ["numpy", "ctypes"])
def test_struct_by_value_argument(cuda, kernel, device_alloc, packer):
    f = kernel(STRUCT_SRC, "take_struct")
    out = device_alloc(6 * 8)
    rec, rec_address = _pack_rec(packer)
    out_value = np.array([int(out)], dtype=np.uint64)
    params = np.array([rec_address, out_value.ctypes.data], dtype=np.uint64)
    launch(cuda, f, 1, 1, params)
    ok(cuda.cuCtxSynchronize)
    host = np.zeros(6, dtype=np.float64)
    ok(cuda.cuMemcpyDtoH, host, out, host.nbytes)
    c, d, i, s = REC_FIELDS
    assert host.tolist() == [c, d, i, *s]


@pytest.mark.gpu
def test_cubind_struct_object_as_kernel_argument(cuda, kernel, device_alloc):
    # type None: "the value is a handle/struct object: pass its storage".
    src = r"""
    struct Loc { int type; int id; };
    extern "C" __global__ void take_loc(Loc loc, int *out) { out[0] = loc.type; out[1] = loc.id; }
    """
    f = kernel(src, "take_loc")
    location = cuda.CUmemLocation()
    location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    location.id = 77
    out = device_alloc(8)
    launch(cuda, f, 1, 1, ((location, out), (None, None)))
    ok(cuda.cuCtxSynchronize)
    assert read_u32(cuda, out, 2).tolist() == [int(cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE), 77]


@pytest.mark.gpu
def test_launch_kernel_ex_with_config(cuda, kernel, device_alloc, cu_stream):
    f = kernel(FILL_SRC, "fill")
    n = 4 * 64
    out = device_alloc(n * 4)
    config = cuda.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = 4, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = 64, 1, 1
    config.sharedMemBytes = 0
    config.hStream = cu_stream
    config.numAttrs = 0
    ok(cuda.cuLaunchKernelEx, config, f, fill_params(out, 5, n), None)
    ok(cuda.cuStreamSynchronize, cu_stream)
    np.testing.assert_array_equal(read_u32(cuda, out, n), np.arange(n) + 5)


CLUSTER_SRC = r"""
extern "C" __global__ void cluster_rank(unsigned int *rank, unsigned int *size)
{
    unsigned int r, n;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    if (threadIdx.x == 0) { rank[blockIdx.x] = r; size[blockIdx.x] = n; }
}
"""


@pytest.mark.gpu
def test_launch_kernel_ex_cluster_dimension(cuda, kernel, device_alloc, cu_stream, compute_capability):
    if compute_capability[0] < 9:
        pytest.skip(f"thread block clusters need sm_90; the device is {compute_capability}")
    f = kernel(CLUSTER_SRC, "cluster_rank")
    blocks, cluster = 8, 2
    rank, size = device_alloc(blocks * 4), device_alloc(blocks * 4)
    attr = cuda.CUlaunchAttribute()
    attr.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
    config = cuda.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = blocks, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = 32, 1, 1
    config.hStream = cu_stream
    config.attrs = [attr]
    config.numAttrs = 1
    del attr   # the config holds its own array
    ok(cuda.cuLaunchKernelEx, config, f, ((rank, size), (None, None)), None)
    ok(cuda.cuStreamSynchronize, cu_stream)
    assert read_u32(cuda, rank, blocks).tolist() == [b % cluster for b in range(blocks)]
    assert read_u32(cuda, size, blocks).tolist() == [cluster] * blocks


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


# -- memory pools -----------------------------------------------------------------


@pytest.fixture
def needs_mempools(cuda, cu_device):
    supported = ok(cuda.cuDeviceGetAttribute,
                   cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, cu_device)
    if not supported:
        pytest.skip("the device has no memory pools")


def _pool_round_trip(cuda, pool, stream):
    n = 4096
    dptr = ok(cuda.cuMemAllocFromPoolAsync, n * 4, pool, stream)
    assert isinstance(dptr, cuda.CUdeviceptr)
    ok(cuda.cuMemsetD32Async, dptr, 0xC0FFEE, n, stream)
    host = np.zeros(n, dtype=np.uint32)
    ok(cuda.cuMemcpyDtoHAsync, host, dptr, host.nbytes, stream)
    ok(cuda.cuMemFreeAsync, dptr, stream)
    ok(cuda.cuStreamSynchronize, stream)
    assert (host == 0xC0FFEE).all()


@pytest.mark.gpu
def test_alloc_from_default_pool(cuda, cu_device, cu_stream, needs_mempools):
    pool = ok(cuda.cuDeviceGetDefaultMemPool, cu_device)
    assert isinstance(pool, cuda.CUmemoryPool) and int(pool) != 0
    _pool_round_trip(cuda, pool, cu_stream)


@pytest.mark.gpu
def test_alloc_from_created_pool(cuda, cu_device, cu_stream, needs_mempools):
    props = cuda.CUmemPoolProps()
    props.allocType = cuda.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    props.handleTypes = cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_NONE
    props.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    props.location.id = int(cu_device)
    pool = ok(cuda.cuMemPoolCreate, props)
    try:
        _pool_round_trip(cuda, pool, cu_stream)
    finally:
        ok(cuda.cuMemPoolDestroy, pool)


# -- virtual memory management ------------------------------------------------------


@pytest.mark.gpu
def test_vmm_reserve_map_access(cuda, cu_device, kernel):
    if not ok(cuda.cuDeviceGetAttribute,
              cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu_device):
        pytest.skip("the device has no virtual memory management")
    prop = cuda.CUmemAllocationProp()
    prop.type = cuda.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = int(cu_device)
    granularity = ok(cuda.cuMemGetAllocationGranularity, prop,
                     cuda.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    assert type(granularity) is int and granularity > 0
    size = 2 * granularity
    handle = ok(cuda.cuMemCreate, size, prop, 0)
    assert isinstance(handle, cuda.CUmemGenericAllocationHandle)
    ptr = ok(cuda.cuMemAddressReserve, size, 0, 0, 0)
    assert isinstance(ptr, cuda.CUdeviceptr) and int(ptr) != 0
    try:
        ok(cuda.cuMemMap, ptr, size, 0, handle, 0)
        try:
            access = cuda.CUmemAccessDesc()
            access.location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            access.location.id = int(cu_device)
            access.flags = cuda.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            ok(cuda.cuMemSetAccess, ptr, size, [access], 1)
            n = size // 4
            ok(cuda.cuMemsetD32, ptr, 0, n)
            launch(cuda, kernel(FILL_SRC, "fill"), (n + 255) // 256, 256, fill_params(ptr, 9, n))
            ok(cuda.cuCtxSynchronize)
            want = (np.arange(n, dtype=np.uint64) + 9).astype(np.uint32)
            np.testing.assert_array_equal(read_u32(cuda, ptr, n), want)
        finally:
            ok(cuda.cuMemUnmap, ptr, size)
    finally:
        ok(cuda.cuMemAddressFree, ptr, size)
        ok(cuda.cuMemRelease, handle)


# -- occupancy and function attributes -------------------------------------------


@pytest.mark.gpu
def test_occupancy(cuda, kernel):
    f = kernel(FILL_SRC, "fill")
    blocks = ok(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor, f, 128, 0)
    assert type(blocks) is int and blocks >= 1
    min_grid, block_size = ok(cuda.cuOccupancyMaxPotentialBlockSize, f, None, 0, 0)
    assert min_grid >= 1 and 32 <= block_size <= 1024
    max_threads = ok(cuda.cuFuncGetAttribute, cuda.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)
    assert block_size <= max_threads


# -- pointer attributes -------------------------------------------------------------


@pytest.mark.gpu
def test_pointer_attributes_of_device_memory(cuda, cu_context, cu_device, device_alloc):
    A = cuda.CUpointer_attribute
    dptr = device_alloc(1 << 20)
    inner = int(dptr) + 4096
    memory_type = ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inner)
    assert memory_type is cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dptr) == int(cu_device)
    context = ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_CONTEXT, dptr)
    assert isinstance(context, cuda.CUcontext) and context == cu_context
    start = ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inner)
    assert isinstance(start, cuda.CUdeviceptr) and int(start) == int(dptr)
    assert ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_RANGE_SIZE, inner) >= 1 << 20
    assert ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr) == 0
    handle_types = ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, dptr)
    assert isinstance(handle_types, int)
    base, size = ok(cuda.cuMemGetAddressRange, inner)
    assert int(base) == int(dptr) and size >= 1 << 20


@pytest.mark.gpu
def test_pointer_get_attributes_returns_a_typed_list(cuda, cu_context, device_alloc):
    A = cuda.CUpointer_attribute
    dptr = device_alloc(4096)
    wanted = [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, A.CU_POINTER_ATTRIBUTE_CONTEXT, A.CU_POINTER_ATTRIBUTE_RANGE_SIZE]
    memory_type, context, size = ok(cuda.cuPointerGetAttributes, len(wanted), wanted, dptr)
    assert memory_type is cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert context == cu_context and size >= 4096
    assert ok(cuda.cuPointerGetAttributes, 1, wanted, dptr) == [memory_type]   # C reads the first count


@pytest.mark.gpu
def test_pointer_attributes_of_pinned_host_memory(cuda, pinned):
    host = pinned(4096)
    A = cuda.CUpointer_attribute
    memory_type = ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, host.ctypes.data)
    assert memory_type is cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    assert ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_HOST_POINTER, host.ctypes.data) == host.ctypes.data


@pytest.mark.gpu
def test_pointer_set_attribute_sync_memops(cuda, device_alloc):
    A = cuda.CUpointer_attribute
    dptr = device_alloc(4096)
    ok(cuda.cuPointerSetAttribute, 1, A.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dptr)
    assert ok(cuda.cuPointerGetAttribute, A.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dptr) == 1
    with pytest.raises(TypeError, match="value: CU_POINTER_ATTRIBUTE_HOST_POINTER cannot be set"):
        cuda.cuPointerSetAttribute(0, A.CU_POINTER_ATTRIBUTE_HOST_POINTER, dptr)


@pytest.mark.gpu
def test_mem_pool_attributes_typed_and_raw(cuda, cu_device):
    A = cuda.CUmemPool_attribute
    pool = ok(cuda.cuDeviceGetDefaultMemPool, cu_device)
    old = ok(cuda.cuMemPoolGetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    try:
        ok(cuda.cuMemPoolSetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1 << 30)
        assert ok(cuda.cuMemPoolGetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 1 << 30
        # A buffer holding the raw C value is still accepted.
        ok(cuda.cuMemPoolSetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.c_uint64(1 << 20))
        assert ok(cuda.cuMemPoolGetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 1 << 20
    finally:
        ok(cuda.cuMemPoolSetAttribute, pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, old)
    assert ok(cuda.cuMemPoolGetAttribute, pool, A.CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC) in (0, 1)
    with pytest.raises(OverflowError, match="value"):
        cuda.cuMemPoolSetAttribute(pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, -1)
    with pytest.raises(ValueError, match="value: 4 bytes given"):
        cuda.cuMemPoolSetAttribute(pool, A.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.c_uint32(1))


@pytest.mark.gpu
def test_graph_mem_attributes(cuda, cu_device):
    A = cuda.CUgraphMem_attribute
    for attribute in A:
        value = ok(cuda.cuDeviceGetGraphMemAttribute, cu_device, attribute)
        assert isinstance(value, cuda.cuuint64_t) and int(value) >= 0   # the docs' value type
    ok(cuda.cuDeviceSetGraphMemAttribute, cu_device, A.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, 0)


@pytest.mark.gpu
def test_mem_range_attributes_of_managed_memory(cuda, cu_device):
    A = cuda.CUmem_range_attribute
    managed = ok(cuda.cuMemAllocManaged, 1 << 16, cuda.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
    try:
        location = cuda.CUmemLocation()
        location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        location.id = int(cu_device)
        ok(cuda.cuMemAdvise, managed, 1 << 16, cuda.CUmem_advise.CU_MEM_ADVISE_SET_ACCESSED_BY, location)
        ok(cuda.cuMemAdvise, managed, 1 << 16, cuda.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, location)
        assert ok(cuda.cuMemRangeGetAttribute, 4, A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, 1 << 16) == 1
        accessed_by = ok(cuda.cuMemRangeGetAttribute, 12, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, managed, 1 << 16)
        assert accessed_by[0] == int(cu_device) and len(accessed_by) == 3
    finally:
        ok(cuda.cuMemFree, managed)


# -- examples ------------------------------------------------------------------------


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
