"""Arguments of the driver package's functions: bad arguments name their
parameter and are refused before the library is looked up (no driver
needed); kernel parameters on a real GPU (every scalar type, None, the extra
buffer, structs by value, cuLaunchKernelEx with its config and cluster
dimension); kernels are compiled with NVRTC for the device's own architecture
(the ``compile_for_device`` fixture).
"""

import ctypes

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok
from tests.bindings._driver_fixtures import cuda_in_context, kernel_factory, pinned_memory  # noqa: F401  (fixtures)
from tests.bindings._driver_support import (
    CUDA_13,
    FILL_SRC,
    fill_params,
    launch,
    needs_cuda,
    read_u32,
    run_python,
)

cuda = import_cubind_driver()


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
