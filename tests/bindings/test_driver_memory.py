"""Memory through the driver package on a real GPU: synchronous and
asynchronous copies (pinned, unified addressing, 2D and 3D), memsets, memory
pools and virtual memory management.
"""

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests.bindings._driver_fixtures import cuda_in_context, kernel_factory, pinned_memory  # noqa: F401  (fixtures)
from tests.bindings._driver_support import FILL_SRC, fill_params, launch, read_u32

cuda = import_cubind_driver()


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
