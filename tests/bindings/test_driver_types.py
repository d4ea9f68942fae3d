"""The driver package's types: enums (against the header), handles (int, eq,
hash, repr, range, getPtr) and structs (sizes and layouts against x86-64
offsets taken from gcc on CUDA 13.0's cuda.h, the same in 12.9 and 13.5;
nested views, unions, fixed and pointer-to-array fields). No driver needed.
"""

import ctypes
import gc
import re

import pytest

from tests._helpers import import_cubind_driver
from tests.bindings._driver_support import (
    CUDA_H,
    needs_cuda,
    needs_header,
    needs_x86_64,
    read_struct,
)

cuda = import_cubind_driver()


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
