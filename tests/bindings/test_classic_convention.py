"""The classic CUDA Python convention's behaviours that code written for NVIDIA's
modules relies on (docs/API.md), each checked where no GPU is needed: the
conversions run before any library is opened, and struct fields need none."""

import math
import re

import pytest

cuda = pytest.importorskip("cuda")


@pytest.mark.parametrize("value, stored", [(10.9, 10), (196.3, 196), (7.0, 7), (0.5, 0)])
def test_a_float_for_an_integer_field_converts_toward_zero(value, stored):
    s = cuda.CUDA_MEMCPY2D()
    s.WidthInBytes = value
    s.Height = value
    assert (s.WidthInBytes, s.Height) == (stored, stored)


def test_a_negative_float_for_an_unsigned_integer_is_out_of_range():
    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(OverflowError, match=r"WidthInBytes: -2 is out of range"):
        s.WidthInBytes = -2.7


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_type_errors_naming_the_parameter(value):
    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(TypeError, match=r"WidthInBytes: expected an int or a finite float"):
        s.WidthInBytes = value
    with pytest.raises(TypeError, match=r"bytesize: expected an int or a finite float"):
        cuda.cuMemAlloc(value)  # refused before the driver is looked for


@pytest.mark.parametrize("value, stored", [(1.5e3, 1500), (4096.9, 4096), (0.5, 0)])
def test_a_float_for_an_integer_handle_converts_toward_zero(value, stored):
    # NVIDIA's samples: CUdeviceptr(1.5e3), int(dptr) + stride with a float stride.
    assert int(cuda.CUdeviceptr(value)) == stored
    assert int(cuda.CUdevice(value)) == stored
    s = cuda.CUDA_MEMCPY2D()
    s.srcDevice = value
    assert int(s.srcDevice) == stored


def test_a_float_for_an_integer_handle_keeps_the_range_and_finite_rules():
    with pytest.raises(OverflowError, match=r"value: -2 is out of range"):
        cuda.CUdeviceptr(-2.5)
    with pytest.raises(OverflowError, match=r"value: 18446744073709551616 is out of range"):
        cuda.CUdeviceptr(2.0**64)
    for bad in (math.nan, math.inf):
        with pytest.raises(TypeError, match=r"value: expected an int or a finite float"):
            cuda.CUdeviceptr(bad)
    with pytest.raises(TypeError, match=r"dptr: expected an int or a finite float"):
        cuda.cuMemFree(math.nan)   # refused before the driver is looked for


KERNEL_ARGS = r"""
import ctypes, json
import cuda
fake = ctypes.CDLL({lib!r})
ctypes.c_int.in_dll(fake, "fake_record_args").value = 7
x = ctypes.c_int(5)
text = ctypes.c_char_p(b"abc")
values = (ctypes.c_char(b"Z"), ctypes.c_wchar("x"), ctypes.c_void_p(16), text, ctypes.pointer(x),
          ctypes.c_uint8(200), ctypes.c_void_p(None))
err, = cuda.cuLaunchKernel(0x4000, 1, 1, 1, 1, 1, 1, 0, 0, (values, tuple(type(v) for v in values)), 0)
args = list((ctypes.c_ulonglong * 7).in_dll(fake, "fake_args"))
print(json.dumps([int(err), args, ctypes.cast(text, ctypes.c_void_p).value, ctypes.addressof(x)]))
"""


def test_kernel_params_take_ctypes_instances_of_every_ctypes_type(fake_driver):
    # `(values, types)` with ctypes instances as values: c_char(b"Z") was a
    # TypeError; pointer types (c_char_p, POINTER(T)) pack their address.
    import json
    import os
    import subprocess
    import sys

    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", KERNEL_ARGS.format(lib=str(fake_driver))], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    err, args, text_address, x_address = json.loads(done.stdout)
    assert err == 0
    assert args[0] & 0xFF == ord("Z") and args[1] & 0xFFFFFFFF == ord("x") and args[2] == 16
    assert args[3] == text_address and args[4] == x_address
    assert args[5] & 0xFF == 200 and args[6] == 0


# -- every function returns a status first ------------------------------------


def _value_functions():
    import nvrtc
    import nvvm
    from cuda import cudart

    S = cudart.cudaError_t.cudaSuccess
    kind = cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat
    return [
        ("cudaGetErrorName", lambda: cudart.cudaGetErrorName(cudart.cudaError_t.cudaErrorInvalidValue),
         S, b"cudaErrorInvalidValue"),
        ("cudaGetErrorString", lambda: cudart.cudaGetErrorString(cudart.cudaError_t.cudaErrorNoDevice),
         S, b"no CUDA-capable device is detected"),
        ("nvrtcGetErrorString", lambda: nvrtc.nvrtcGetErrorString(nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION),
         nvrtc.nvrtcResult.NVRTC_SUCCESS, b"NVRTC_ERROR_COMPILATION"),
        ("nvvmGetErrorString", lambda: nvvm.nvvmGetErrorString(nvvm.nvvmResult.NVVM_ERROR_COMPILATION),
         nvvm.nvvmResult.NVVM_SUCCESS, b"NVVM_ERROR_COMPILATION"),
        ("cudaCreateChannelDesc", lambda: cudart.cudaCreateChannelDesc(32, 0, 0, 0, kind), S, None),
    ]


KERNEL_AS_FUNCTION = r"""
import ctypes, json
import cuda
fake = ctypes.CDLL({lib!r})
last = lambda: ctypes.c_ulonglong.in_dll(fake, "fake_last_function").value
out = []
err, = cuda.cuLaunchKernel(cuda.CUkernel(0x4000), 1, 1, 1, 1, 1, 1, 0, 0, None, 0)
out.append([int(err), last()])
err, grid, block = cuda.cuOccupancyMaxPotentialBlockSize(cuda.CUkernel(0x4100), 0, 0, 0)
out.append([int(err), last()])
err, = cuda.cuLaunchKernel(cuda.CUfunction(0x4200), 1, 1, 1, 1, 1, 1, 0, 0, None, 0)
out.append([int(err), last()])
# The header is silent for the cuFunc* attribute calls; the spec's override
# (as the contract names cuFuncGetAttribute) lets the kernel through too.
err, value = cuda.cuFuncGetAttribute(cuda.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, cuda.CUkernel(0x4300))
err2, = cuda.cuFuncSetCacheConfig(cuda.CUkernel(0x4300), cuda.CUfunc_cache.CU_FUNC_CACHE_PREFER_L1)
out.append([int(err), int(err2)])
print(json.dumps(out))
"""


def test_a_kernel_passes_where_the_header_documents_the_cast_to_a_function(fake_driver):
    # cuda.h: "passing it to the API by casting to ::CUfunction" (the spec's
    # also_accepts): the CUkernel reaches C as its own pointer.
    import json
    import os
    import subprocess
    import sys

    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", KERNEL_AS_FUNCTION.format(lib=str(fake_driver))], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[0, 0x4000], [0, 0x4100], [0, 0x4200], [0, 0]]


def test_a_kernel_stays_refused_where_the_header_does_not_document_the_cast():
    # cuda.h documents no cast for cuFuncGetModule, and the spec adds none:
    # refused before the driver is looked for.
    with pytest.raises(TypeError, match=r"hfunc: expected CUfunction, an int or None, got CUkernel"):
        cuda.cuFuncGetModule(cuda.CUkernel(0x4000))
    with pytest.raises(TypeError, match=r"f: expected CUfunction, an int or None, got CUstream"):
        cuda.cuLaunchKernel(cuda.CUstream(1), 1, 1, 1, 1, 1, 1, 0, 0, None, 0)


@pytest.mark.parametrize("index", range(5), ids=lambda i: _value_functions()[i][0])
def test_a_function_returning_no_status_returns_success_then_its_value(index):
    name, call, success, value = _value_functions()[index]
    result = call()
    assert isinstance(result, tuple) and len(result) == 2, name
    err, got = result
    assert err is success and type(err) is type(success)
    if value is not None:
        assert got == value


def test_struct_results_come_second():
    from cuda import cudart

    err, desc = cudart.cudaCreateChannelDesc(8, 16, 0, 0, cudart.cudaChannelFormatKind.cudaChannelFormatKindSigned)
    assert err == cudart.cudaError_t.cudaSuccess
    assert (desc.x, desc.y, desc.f) == (8, 16, cudart.cudaChannelFormatKind.cudaChannelFormatKindSigned)


@pytest.mark.parametrize("name, args, fields", [
    ("make_cudaPos", (1, 2, 3), ("x", "y", "z")),
    ("make_cudaExtent", (64, 32, 8), ("width", "height", "depth")),
    ("make_cudaPitchedPtr", (0x1000, 256, 64, 32), ("ptr", "pitch", "xsize", "ysize")),
])
def test_the_inline_constructors_return_the_struct_itself(name, args, fields):
    # As the classic modules (spec `result = "value"`): samples write
    # cudaMalloc3D(make_cudaExtent(w, h, d)). Header-only, they need no
    # libcudart and no GPU.
    from cuda import cudart

    value = getattr(cudart, name)(*args)
    assert type(value).__name__ == name[len("make_"):]
    assert tuple(getattr(value, f) for f in fields) == args


def test_the_stubs_type_the_status_first():
    import pathlib

    import nvrtc
    from cuda import cudart

    stub = pathlib.Path(cudart.__file__).with_name("cudart.pyi").read_text()
    assert "def cudaGetErrorName(error: cudaError_t | int) -> tuple[cudaError_t, bytes | None]:" in stub
    assert "-> tuple[cudaError_t, cudaChannelFormatDesc]:" in stub
    assert "def make_cudaExtent(w: int, h: int, d: int) -> cudaExtent:" in stub
    stub = (pathlib.Path(nvrtc.__file__).parent / "__init__.pyi").read_text()
    assert "def nvrtcGetErrorString(result: nvrtcResult | int) -> tuple[nvrtcResult, bytes | None]:" in stub


# -- an enum member of another enum class is a TypeError -----------------------


def test_a_field_refuses_a_member_of_another_enum():
    from cuda import cudart

    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(TypeError, match=r"srcMemoryType: expected a CUmemorytype.* member or an int, "
                                        r"got cudaMemcpyKind\.cudaMemcpyHostToDevice"):
        s.srcMemoryType = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
    assert s.srcMemoryType == 0  # nothing stored


def test_a_field_takes_its_own_enum_and_plain_ints():
    s = cuda.CUDA_MEMCPY2D()
    s.srcMemoryType = cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert s.srcMemoryType is cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE
    s.dstMemoryType = 1
    assert s.dstMemoryType is cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    s.dstMemoryType = True  # an int subclass that is no enum
    assert s.dstMemoryType == 1


def test_a_parameter_refuses_a_member_of_another_enum():
    # Refused before any library is looked for.
    with pytest.raises(TypeError, match=r"error: expected a CUresult.* member or an int, got CUdevice_attribute"):
        cuda.cuGetErrorName(cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    import nvrtc

    with pytest.raises(TypeError, match=r"result: expected a nvrtcResult member or an int"):
        nvrtc.nvrtcGetErrorString(cuda.CUresult.CUDA_ERROR_INVALID_VALUE)
    err, text = nvrtc.nvrtcGetErrorString(nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION)
    assert text == b"NVRTC_ERROR_COMPILATION"
    assert nvrtc.nvrtcGetErrorString(6)[1] == b"NVRTC_ERROR_COMPILATION"


def test_the_items_of_an_enum_array_refuse_members_of_another_enum():
    from cuda import cudart

    P = cuda.CUpointer_attribute
    with pytest.raises(TypeError, match=r"attributes: expected a CUpointer_attribute member or an int, "
                                        r"got cudaMemcpyKind\.cudaMemcpyHostToDevice"):
        kind = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
        cuda.cuPointerGetAttributes(2, [P.CU_POINTER_ATTRIBUTE_CONTEXT, kind], 0)
    with pytest.raises(TypeError, match=r"options: expected a CUjit_option member"):
        cuda.cuLinkCreate(1, [cuda.CUresult.CUDA_SUCCESS], [0])


TWIN_PARAMETER = r"""
import cuda
from cuda import cudart
cuda.cuInit(0)
err, value = cuda.cuDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrMemoryPoolsSupported, 0)
print(int(err))
"""


def test_a_member_of_the_twin_enum_is_taken(backend):
    # The runtime and the driver spell one C enum twice (cudaDeviceAttr,
    # CUdevice_attribute; the generator pairs them from the headers): each
    # takes the other's members, as NVIDIA's streamOrderedAllocation sample
    # passes CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED to cudaDeviceGetAttribute.
    from cuda import cudart

    location = cudart.cudaMemLocation()
    location.type = cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    assert location.type == cudart.cudaMemLocationType.cudaMemLocationTypeDevice
    done = backend.run(TWIN_PARAMETER)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


def test_an_enum_that_is_no_twin_stays_refused():
    from cuda import cudart

    with pytest.raises(TypeError, match=r"attr: expected a cudaDeviceAttr member or an int, "
                                        r"got CUmemorytype\.CU_MEMORYTYPE_HOST"):
        cudart.cudaDeviceGetAttribute(cuda.CUmemorytype.CU_MEMORYTYPE_HOST, 0)


def test_python_enums_of_other_classes_are_refused_too():
    import enum

    class Kind(enum.IntEnum):
        HOST = 1

    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(TypeError, match=r"srcMemoryType: .*got Kind\.HOST"):
        s.srcMemoryType = Kind.HOST


# -- other names of a class are that class ----------------------------------------


def test_typedef_aliases_are_the_classes_they_alias():
    # A typedef of an enum, a versioned typedef of an integer handle, a
    # #define naming a type (the spec's headers; name_type_aliases): the same
    # object, as in the classic modules, also where the enum is made lazily.
    from cuda import cudart

    assert cuda.CUstreamAttrID is cuda.CUlaunchAttributeID is cuda.CUkernelNodeAttrID
    assert cuda.CUdevice_v1 is cuda.CUdevice and cuda.CUdeviceptr_v2 is cuda.CUdeviceptr
    assert cudart.cudaKernelNodeAttrID is cudart.cudaLaunchAttributeID
    assert cudart.cudaStreamAttrValue is cudart.cudaLaunchAttributeValue is cudart.cudaKernelNodeAttrValue
    assert int(cudart.cudaSurfaceObject_t(7)) == 7 and cuda.sizeof(cuda.CUdevice_v1) == 4


# -- helpers of the classic modules ----------------------------------------------


def test_sizeof_gives_the_c_size_of_structs_unions_and_handles():
    import ctypes

    import nvrtc
    from cuda import cudart

    P = ctypes.sizeof(ctypes.c_void_p)
    assert cuda.sizeof(cuda.CUstream) == P and cuda.sizeof(cuda.CUcontext) == P
    assert cuda.sizeof(cuda.CUdeviceptr) == 8 and cuda.sizeof(cuda.CUdevice) == 4
    assert cuda.sizeof(cuda.cuuint32_t) == 4 and cuda.sizeof(cuda.cuuint64_t) == 8
    assert cuda.sizeof(cuda.CUDA_MEMCPY2D) == cuda.CUDA_MEMCPY2D.sizeof == 128
    assert cuda.sizeof(cuda.CUDA_MEMCPY2D_st) == 128  # the tag name is the same class
    assert cuda.sizeof(cuda.CUuuid) == 16
    assert cudart.sizeof(cudart.dim3) == 12 and cudart.sizeof(cudart.cudaStream_t) == P
    assert cudart.sizeof(cudart.cudaPos) == 3 * ctypes.sizeof(ctypes.c_size_t)
    assert nvrtc.sizeof(nvrtc.nvrtcProgram) == P


@pytest.mark.parametrize("what", [int, 3, None, "CUstream", "enum"])
def test_sizeof_refuses_anything_else(what):
    if what == "enum":
        what = cuda.CUresult
    with pytest.raises(TypeError, match="sizeof: .* is no struct, union, handle or typedef class of cuda"):
        cuda.sizeof(what)


def test_sizeof_is_exported_and_typed():
    import pathlib

    from cuda import cudart

    assert "sizeof" in cudart.__all__ and callable(cudart.sizeof)
    stub = pathlib.Path(cudart.__file__).with_name("cudart.pyi").read_text()
    assert "def sizeof(cls: type) -> int:" in stub
    assert "getLocalRuntimeVersion = cudaRuntimeGetVersion" in stub


def test_get_local_runtime_version_is_that_of_the_loaded_runtime():
    from cuda import cudart

    assert "getLocalRuntimeVersion" in cudart.__all__
    result = cudart.getLocalRuntimeVersion()
    assert result == cudart.cudaRuntimeGetVersion()
    err, version = result
    assert err == cudart.cudaError_t.cudaSuccess
    assert version // 1000 == cudart.CUDART_VERSION // 1000


# -- the classic constructor Cls(init_value=0, _ptr=0) -------------------------


def _value_classes():
    """Every handle, value-holder and callback class of the 1:1 modules."""
    import nvjitlink
    import nvrtc
    import nvvm
    from cuda import cudart

    for module in (cuda, cudart, nvrtc, nvjitlink, nvvm):
        for name in module.__all__:
            cls = getattr(module, name)
            if isinstance(cls, type) and hasattr(cls, "getPtr") and not hasattr(cls, "_fields"):
                yield pytest.param(module, cls, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("module, cls", list(_value_classes()))
def test_ptr_makes_the_object_refer_to_the_value_at_that_address(module, cls):
    import ctypes

    size = module.sizeof(cls)
    storage = ctypes.create_string_buffer(size)
    address = ctypes.addressof(storage)
    h = cls(_ptr=address)
    assert h.getPtr() == address and int(h) == 0
    storage.raw = (0x5A).to_bytes(size, "little")   # written there (by C): read through
    assert int(h) == 0x5A and h == cls(0x5A)
    assert cls(0x21, _ptr=address).getPtr() == address   # init_value is stored there
    assert storage.raw == (0x21).to_bytes(size, "little") and int(h) == 0x21
    own = cls(init_value=0x33)   # without _ptr, a value of its own
    assert int(own) == 0x33 and own.getPtr() != address and int(cls(_ptr=None)) == 0


@pytest.mark.parametrize("bad, error, says", [(-1, OverflowError, "out of range"), ("0x10", TypeError, "expected"),
                                              (1.5, TypeError, "expected")])
def test_a_bad_ptr_is_an_error_naming_it(bad, error, says):
    from cuda import cudart

    for cls in (cuda.CUstream, cuda.CUdeviceptr, cuda.cuuint32_t, cuda.CUoccupancyB2DSize, cudart.cudaHostFn_t):
        with pytest.raises(error, match=rf"^_ptr: .*{says}"):
            cls(_ptr=bad)


HANDLES_BY_ADDRESS = r"""
import ctypes, json
import cuda
fake = ctypes.CDLL({lib!r})
last = lambda: ctypes.c_ulonglong.in_dll(fake, "fake_last_function").value
stored = ctypes.c_void_p(0x4400)
function = cuda.CUfunction(_ptr=ctypes.addressof(stored))
kernel = cuda.CUkernel(_ptr=ctypes.addressof(stored))
out = []
err, = cuda.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, 0, None, 0)
out.append([int(err), last()])
stored.value = 0x4500   # read at each call, not when made
err, = cuda.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, 0, None, 0)
out.append([int(err), last()])
err, = cuda.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, 0, None, 0)   # the documented cast
out.append([int(err), last()])
params = cuda.CUDA_KERNEL_NODE_PARAMS()
params.func = function
out.append(int(params.func))
print(json.dumps(out))
"""


def test_a_handle_made_with_ptr_passes_the_value_stored_there(fake_driver):
    import json
    import os
    import subprocess
    import sys

    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", HANDLES_BY_ADDRESS.format(lib=str(fake_driver))], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[0, 0x4400], [0, 0x4500], [0, 0x4500], 0x4500]


def test_a_call_updating_a_handle_in_place_writes_through_ptr():
    # nvrtcDestroyProgram(&prog) sets prog to NULL: where the object refers to.
    import ctypes

    import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(b"__global__ void k() {}", b"k.cu", 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    stored = ctypes.c_void_p(int(prog))
    by_address = nvrtc.nvrtcProgram(_ptr=ctypes.addressof(stored))
    assert by_address == prog
    err, = nvrtc.nvrtcDestroyProgram(by_address)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert stored.value is None and int(by_address) == 0


# -- repr(struct) and str(struct) ---------------------------------------------------


def test_repr_of_a_struct_lists_one_field_per_line():
    s = cuda.CUDA_MEMCPY2D()
    s.srcXInBytes = 3
    s.srcMemoryType = cuda.CUmemorytype.CU_MEMORYTYPE_HOST
    s.WidthInBytes = 64
    lines = repr(s).splitlines()
    assert lines[0] == "srcXInBytes : 3"
    assert "srcMemoryType : CUmemorytype.CU_MEMORYTYPE_HOST" in lines
    assert "WidthInBytes : 64" in lines
    assert len(lines) == len(type(s)._fields)
    assert all(" : " in line for line in lines)
    assert str(s) == repr(s)   # as the classic modules, which define only __repr__


def test_repr_indents_nested_structs():
    from cuda import cudart

    p = cudart.cudaPitchedPtr()
    p.pitch = 256
    params = cudart.cudaMemcpy3DParms()
    params.srcPtr = p
    params.kind = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
    lines = repr(params).splitlines()
    i = lines.index("srcPtr :")
    assert lines[i + 1].startswith("    ptr : ")
    assert "    pitch : 256" in lines[i + 1:i + 5]
    assert "kind : cudaMemcpyKind.cudaMemcpyHostToDevice" in lines
    # Two levels deep: each level four more spaces.
    desc = cuda.CUDA_RESOURCE_DESC()
    text = repr(desc)
    assert "res :" in text.splitlines()
    assert any(line.startswith("        ") for line in text.splitlines())


def test_repr_prints_void_pointer_fields_in_hex():
    s = cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()
    lines = repr(s).splitlines()
    i = lines.index("    nvSciSync :")
    assert lines[i + 1:i + 3] == ["        fence : 0x0", "        reserved : 0"]   # void*, its integer twin
    s.params.nvSciSync.fence = 0xDEAD0
    assert "        fence : 0xdead0" in repr(s).splitlines()
    m = cuda.CUDA_MEMCPY2D()
    m.srcHost = 4096
    assert {"srcHost : 0x1000", "dstHost : 0x0", "srcPitch : 0"} <= set(repr(m).splitlines())
    # Only void*: kernelParams (void**) prints as NVIDIA's does, its value.
    assert "kernelParams : 0" in repr(cuda.CUDA_KERNEL_NODE_PARAMS()).splitlines()
    # A fixed array of void* (CUeglFrame.frame.pPitch), each item: NVIDIA's repr raises there.
    assert "    pPitch : [0x0, 0x0, 0x0]" in repr(cuda.CUeglFrame()).splitlines()


NVIDIA_REPR = """
import json
import cuda
from cuda.bindings import driver as nv
out = []
for module in (cuda, nv):
    s = module.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()
    s.params.nvSciSync.fence = 0x7F00
    s.params.fence.value = 12
    s.flags = 1
    m = module.CUDA_MEMCPY3D()
    m.srcHost = 0x1000
    # The void* fields and their neighbours (NVIDIA prints an unset enum as None).
    out.append([repr(s), str(s), [line for line in repr(m).splitlines() if "Host" in line or "reserved" in line]])
print(json.dumps(out))
"""


def test_repr_of_a_struct_is_nvidias():
    import importlib.metadata
    import json

    from tests.bindings._driver_support import run_python

    try:
        importlib.metadata.distribution("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("NVIDIA's cuda-bindings is not installed")
    ours, nvidia = json.loads(run_python(NVIDIA_REPR).stdout)
    assert ours == nvidia


# -- nested structs and unions are views; an array of structs reads copies ------
# (as NVIDIA's modules read them. A nested struct field's layout:
# tests/bindings/test_driver_types.py; the driver's CUeglFrame union, whose
# members are handle and pointer arrays: tests/bindings/test_egl_interop.py.)


def test_nested_structs_and_union_members_are_views_into_their_parent():
    import ctypes

    from cuda import cudart

    frame = cudart.cudaEglFrame()
    frame.frame.pArray = [1, 2, 3]   # the union's other member reads the same bytes
    assert frame.frame.pPitch[0].ptr == 1 and frame.frame.pPitch[0].pitch == 2
    s = cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()
    s.params.nvSciSync.fence = 0x1000   # params (a struct) -> nvSciSync (a union) -> fence
    s.params.keyedMutex.key = 5
    assert ctypes.c_uint64.from_address(s.getPtr() + 8).value == 0x1000
    assert ctypes.c_uint64.from_address(s.getPtr() + 16).value == 5
    assert s.params.nvSciSync.reserved == 0x1000


def test_an_array_of_structs_reads_as_a_list_of_copies():
    import gc

    from cuda import cudart

    frame = cudart.cudaEglFrame()
    frame.frame.pArray = [1, 2, 3]
    x = frame.frame.pPitch[0]
    assert (x.ptr, x.pitch) == (1, 2)
    x.pitch = 1234   # the copy's, not the frame's
    assert frame.frame.pPitch[0].pitch == 2 and int(frame.frame.pArray[1]) == 2
    plane = frame.planeDesc[1]
    plane.width = 640
    assert frame.planeDesc[1].width == 0
    # Written by assigning the list back.
    frame.frame.pPitch = [x, *frame.frame.pPitch[1:]]
    frame.planeDesc = [frame.planeDesc[0], plane, frame.planeDesc[2]]
    assert frame.frame.pPitch[0].pitch == 1234 and int(frame.frame.pArray[1]) == 1234
    assert frame.planeDesc[1].width == 640
    # A copy holds its own bytes: the frame may go.
    element = frame.planeDesc[1]
    del frame
    gc.collect()
    _ = [bytearray(128) for _ in range(1000)]   # reuse freed memory, if any
    assert element.width == 640


def test_assigning_a_list_of_structs_copies_them_in():
    from cuda import cudart

    frame = cudart.cudaEglFrame()
    pitched = cudart.cudaPitchedPtr(pitch=256)
    frame.frame.pPitch = [pitched, pitched, pitched]
    pitched.pitch = 512   # the caller's struct is not the frame's
    assert [p.pitch for p in frame.frame.pPitch] == [256, 256, 256]
    assert int(frame.frame.pArray[1]) == 256
    inner = cudart.cudaEglFrame_frame()
    inner.pArray = [7, 8, 9]
    frame.frame = inner   # a whole union, copied
    inner.pArray = [0, 0, 0]
    assert [int(a) for a in frame.frame.pArray] == [7, 8, 9]


# -- Cls(_ptr=address): a struct or union at an address ---------------------------


def test_a_struct_made_with_ptr_reads_and_writes_the_memory_there():
    import ctypes

    from cuda import cudart

    memory = (ctypes.c_uint * 3)(1, 2, 3)
    address = ctypes.addressof(memory)
    d = cudart.dim3(_ptr=address)
    assert (d.x, d.y, d.z) == (1, 2, 3) and d.getPtr() == address
    d.z = 9
    memory[0] = 7
    assert list(memory) == [7, 2, 9] and d.x == 7
    assert cudart.dim3(address).y == 2   # positional, as NVIDIA's __init__(self, _ptr=0)
    cudart.dim3(_ptr=address, y=5)       # fields set there
    assert memory[1] == 5
    for own in (cudart.dim3(_ptr=0), cudart.dim3(_ptr=None), cudart.dim3()):
        assert own.getPtr() not in (0, address) and own.x == 0


def test_a_union_and_the_structs_in_it_made_with_ptr_write_there():
    import ctypes

    import numpy as np

    memory = np.zeros(cuda.CUlaunchAttributeValue.sizeof // 4, np.uint32)
    value = cuda.CUlaunchAttributeValue(_ptr=memory.ctypes.data)
    value.clusterDim.x = 4   # a view of a view, into the caller's memory
    value.clusterDim.z = 2
    assert list(memory[:3]) == [4, 0, 2] and value.cooperative == 4
    s = cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()
    s.params.nvSciSync.fence = 0x2000
    s.flags = 3
    at = cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS(_ptr=s.getPtr())
    assert at.params.nvSciSync.fence == 0x2000 and at.flags == 3
    at.flags = 1
    assert s.flags == 1
    assert ctypes.c_uint64.from_address(at.params.nvSciSync.getPtr()).value == 0x2000


@pytest.mark.parametrize("bad, exc", [("0x10", TypeError), (1.5, TypeError), (bytearray(8), TypeError),
                                      (-1, OverflowError), (2**64, OverflowError)])
def test_a_bad_struct_ptr_names_ptr(bad, exc):
    from cuda import cudart

    with pytest.raises(exc, match="_ptr"):
        cudart.dim3(_ptr=bad)
    with pytest.raises(exc, match="_ptr"):
        cuda.CUlaunchAttributeValue(_ptr=bad)


# -- docstrings ---------------------------------------------------------------------


def test_help_shows_the_signature_once():
    import pydoc

    text = pydoc.render_doc(cuda.cuLaunchKernel, renderer=pydoc.plaintext)
    # Python 3.13's help() wraps a long signature one parameter a line.
    assert len(re.findall(r"cuLaunchKernel\(\s*f,\s*gridDimX", text)) == 1, text[:2000]
    assert not cuda.cuMemAlloc.__doc__.startswith("cuMemAlloc(")


def _param_doc(function, param):
    """The lines under `param` in the Parameters section of `function`'s docstring."""
    import inspect

    lines = inspect.cleandoc(function.__doc__).splitlines()
    start = lines.index(param)
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        out.append(line.strip())
    return " ".join(out)


def test_docstrings_describe_the_python_forms_of_a_parameter():
    kernel_params = _param_doc(cuda.cuLaunchKernel, "kernelParams")
    assert "Array of pointers to kernel parameters" in kernel_params  # the header's text stays
    assert "(values, types)" in kernel_params and "ctypes" in kernel_params
    assert "buffer" in kernel_params and "int address" in kernel_params
    src = _param_doc(cuda.cuMemcpyHtoD, "srcHost")
    assert "buffer-protocol object" in src and "ByteCount bytes" in src and "int address" in src
    stream = _param_doc(cuda.cuStreamSynchronize, "hStream")
    assert "CUstream, an int (the raw value), or None (NULL)" in stream
    kind = _param_doc(cuda.cuGetErrorName, "error")
    assert "a CUresult member or an int" in kind
    import nvrtc

    options = _param_doc(nvrtc.nvrtcCompileProgram, "options")
    assert "a list of bytes or str" in options
