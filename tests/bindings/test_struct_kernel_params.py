"""Struct fields holding a launch's kernel arguments (CUDA_KERNEL_NODE_PARAMS,
CUDA_LAUNCH_PARAMS, cudaKernelNodeParams...) take every form cuLaunchKernel's
kernelParams takes, packed by the same packer; the struct keeps the packed
arguments alive and reads the field back as the array's address."""

import ctypes
import gc

import pytest

cuda = pytest.importorskip("cuda")
from cuda import cudart  # noqa: E402

STRUCTS = [(cuda.CUDA_KERNEL_NODE_PARAMS, "kernelParams"), (cuda.CUDA_KERNEL_NODE_PARAMS, "extra"),
           (cuda.CUDA_KERNEL_NODE_PARAMS_v1, "kernelParams"), (cuda.CUDA_KERNEL_NODE_PARAMS_v3, "kernelParams"),
           (cuda.CUDA_LAUNCH_PARAMS, "kernelParams"), (cudart.cudaKernelNodeParams, "kernelParams"),
           (cudart.cudaKernelNodeParams, "extra"), (cudart.cudaKernelNodeParamsV2, "kernelParams")]


def _packed(address, n):
    return list((ctypes.c_void_p * n).from_address(address))


@pytest.mark.parametrize("cls, field", STRUCTS)
def test_values_and_types_are_packed_and_kept_by_the_struct(cls, field):
    s = cls()
    values = [ctypes.c_int(-5), 2.5, cuda.CUdeviceptr(0x1000), ctypes.c_char(b"Z"), 7]
    setattr(s, field, (values, [ctypes.c_int, ctypes.c_float, None, ctypes.c_char, ctypes.c_size_t]))
    del values
    gc.collect()
    ptrs = _packed(getattr(s, field), 5)
    assert ctypes.c_int.from_address(ptrs[0]).value == -5
    assert ctypes.c_float.from_address(ptrs[1]).value == 2.5
    assert ctypes.c_uint64.from_address(ptrs[2]).value == 0x1000
    assert ctypes.c_char.from_address(ptrs[3]).value == b"Z"
    assert ctypes.c_size_t.from_address(ptrs[4]).value == 7


def test_more_arguments_than_fit_inline_are_kept_too():
    s = cuda.CUDA_KERNEL_NODE_PARAMS()
    s.kernelParams = (list(range(40)), [ctypes.c_int] * 40)
    gc.collect()
    ptrs = _packed(s.kernelParams, 40)
    assert [ctypes.c_int.from_address(p).value for p in ptrs] == list(range(40))


def test_none_an_address_and_a_buffer_of_addresses():
    s = cuda.CUDA_KERNEL_NODE_PARAMS()
    s.kernelParams = 0x1234
    assert s.kernelParams == 0x1234
    s.kernelParams = None
    assert s.kernelParams == 0
    array = (ctypes.c_uint64 * 2)(0x10, 0x20)
    s.kernelParams = array
    assert s.kernelParams == ctypes.addressof(array)


def test_a_struct_keeps_a_buffer_alive_and_releases_the_old_arguments():
    s = cuda.CUDA_KERNEL_NODE_PARAMS()
    s.kernelParams = bytearray(16)
    s.kernelParams = ((1,), (ctypes.c_int,))   # the bytearray is released, the new tuple kept
    assert ctypes.c_int.from_address(_packed(s.kernelParams, 1)[0]).value == 1


def test_bad_kernel_arguments_name_the_field():
    s = cuda.CUDA_KERNEL_NODE_PARAMS()
    with pytest.raises(TypeError, match=r"kernelParams: expected None, an int address"):
        s.kernelParams = [1, 2]
    with pytest.raises(ValueError, match=r"kernelParams: 2 values but 1 types"):
        s.kernelParams = ((1, 2), (ctypes.c_int,))
