"""Values typed by an attribute (bindings/driver.toml attribute_types): the
classic signatures and the conversion before C (no driver needed), then on a
real GPU occupancy and function attributes, pointer, memory pool, graph
memory and managed range attributes.
"""

import ctypes

import pytest

from tests._helpers import import_cubind_driver, ok
from tests.bindings._driver_fixtures import cuda_in_context, kernel_factory, pinned_memory  # noqa: F401  (fixtures)
from tests.bindings._driver_support import (
    FILL_SRC,
    _signature,
    needs_cuda,
)

cuda = import_cubind_driver()


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
