"""The driver package (``import cuda``) without a GPU: import, library loading,
enums, handles, structs, argument conversion and coverage.

Nothing here needs a driver. Loading is checked in fresh interpreters (the
loader caches what it finds per process); everything else runs in-process and
never reaches a C call: conversion errors are raised before the library is
looked up. Struct layouts are checked against x86-64 offsets and sizes taken
from gcc on CUDA 13.0's cuda.h (the same in 12.9 and 13.5). The headers are the
ones the build comes from (tests/_toolkit.py), API forms those of its version.
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
from pathlib import Path

import pytest

from tests._toolkit import cuda_include, cuda_version, header, pythonpath

ROOT = Path(__file__).resolve().parent.parent
CUDA_H = header("cuda.h")
STUB = Path("/usr/local/cuda/lib64/stubs/libcuda.so")
GENERATOR = Path(os.environ.get("CUBIND_GEN", ROOT / "generator" / "build" / "cubind-gen"))
DRIVER_SPEC = ROOT / "bindings" / "driver.toml"



def _import_cubind_driver():
    # NVIDIA's cuda namespace package makes a bare ``import cuda`` succeed too; cubind's has cuInit.
    try:
        import cuda
    except ImportError:
        return None
    return cuda if hasattr(cuda, "cuInit") else None


cuda = _import_cubind_driver()
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
    from cubind._bind.loader import LibraryNotFoundError
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
def test_struct_repr_lists_fields():
    copy = cuda.CUDA_MEMCPY2D()
    copy.WidthInBytes = 4242
    text = repr(copy)
    assert text.startswith("<CUDA_MEMCPY2D") or text.startswith("CUDA_MEMCPY2D")
    for field in ("srcXInBytes", "srcMemoryType", "dstDevice", "WidthInBytes", "Height"):
        assert field in text, field
    assert "4242" in text


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
        ("free_float", lambda: C.cuMemFree(1.5), TypeError, "dptr"),
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
    doc = getattr(cuda, name).__doc__
    assert doc and name in doc
    for word in words:
        assert word in doc, word


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
    assert cuda.cuPointerGetAttribute.__doc__.startswith("cuPointerGetAttribute(attribute, ptr)")
    assert cuda.cuMemPoolGetAttribute.__doc__.startswith("cuMemPoolGetAttribute(pool, attr)")
    assert cuda.cuMemPoolSetAttribute.__doc__.startswith("cuMemPoolSetAttribute(pool, attr, value)")
    assert cuda.cuDeviceGetGraphMemAttribute.__doc__.startswith("cuDeviceGetGraphMemAttribute(device, attr)")
    assert cuda.cuMemRangeGetAttribute.__doc__.startswith("cuMemRangeGetAttribute(dataSize, attribute, devPtr, count)")


@needs_cuda
def test_an_attribute_without_a_known_type_is_refused_before_c():
    # C would write a value of unknown size: the call stops first, GPU or not.
    with pytest.raises(ValueError, match="attribute: CUpointer_attribute 999 has no known value type"):
        cuda.cuPointerGetAttribute(999, 0)
    with pytest.raises(ValueError, match="attr: CUmemPool_attribute 77 has no known value type"):
        cuda.cuMemPoolSetAttribute(None, 77, 0)
    with pytest.raises(ValueError, match="attributes: CUpointer_attribute 999 has no known value type"):
        cuda.cuPointerGetAttributes(2, [cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, 999], 0)
    assert cuda.cuPointerGetAttributes.__doc__.startswith("cuPointerGetAttributes(numAttributes, attributes, ptr)")


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
    params.extSemArray = None
    assert params.extSemArray is None
