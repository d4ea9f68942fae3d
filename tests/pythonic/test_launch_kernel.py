"""Kernels launched (cubind/_launch/kernel.py: Kernel, LaunchConfig, launch):
against tests/fake_driver, what reaches cuLaunchKernel (read back from the
fake), errors raised before the driver, launch configurations and
cuLaunchKernelEx, cubind arrays as arguments; and on a real GPU (the tests
marked ``gpu``) kernels typed by PTX or by cuKernelGetParamInfo, templates,
structs by value, narrow scalars, the driver's refusals, clusters and
occupancy.
"""

import ctypes
import struct

import pytest

import cubind
from tests.pythonic._core_fixtures import (  # noqa: F401  (fixtures)
    compiled_gpu_module,
    compiled_module,
    device_0,
    device_memory,
    own_cache_dir,
    ptx_file_of_module,
    run_fake,
)

np = pytest.importorskip("numpy")


# -- launches through the fake driver ----------------------------------------------


def low(value_bytes):
    return int.from_bytes(value_bytes.ljust(8, b"\0"), "little")


def test_a_launch_hands_the_driver_the_typed_arguments(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        import cuda
        saxpy = module.get_kernel("saxpy")
        record(5)
        saxpy(4, 256, 2.0, cuda.CUdeviceptr(0x1000), 0x2000, 0x3000, 1 << 20)
        first = recorded(5)
        saxpy((2, 2), (16, 16), 0.5, 1, 2, 3, 4, stream=None, shared_mem=128)
        print(json.dumps([first, recorded(5), launches()]))
    """)
    first, second, count = got
    assert first[0] & 0xFFFFFFFF == low(struct.pack("<f", 2.0)) and first[1:] == [0x1000, 0x2000, 0x3000, 1 << 20]
    assert second[0] & 0xFFFFFFFF == low(struct.pack("<f", 0.5)) and second[1:] == [1, 2, 3, 4]
    assert count == 2


def test_narrow_and_struct_arguments_reach_the_driver(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        mix = module.get_kernel("mix")
        record(8)
        mix(1, 1, struct.pack("<i4xd", 7, 2.5), -1.5, 65, -2, -3, 2**63, 200, True)
        print(json.dumps(recorded(8)))
    """)
    assert got[0] == 7  # the struct's first 8 bytes: int 7 and padding
    assert got[1] == low(struct.pack("<d", -1.5))
    assert got[2] & 0xFF == 65 and got[3] & 0xFFFF == 0xFFFE and got[4] & 0xFFFFFFFF == 0xFFFFFFFD
    assert got[5] == 2**63 and got[6] & 0xFF == 200 and got[7] & 0xFF == 1


def test_launch_errors_are_exceptions_before_the_driver(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        saxpy = module.get_kernel("saxpy")
        s = cubind.Stream()
        s.close()
        out = [error(lambda: saxpy(1, 1, 1.0, 0, 0, 0)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, streem=None)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, stream="s")),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, stream=s)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, shared_mem=-1)),
               error(lambda: saxpy(0, 1, 1.0, 0, 0, 0, 0)),
               error(lambda: saxpy(1)),
               error(lambda: module.get_kernel("sxapy")),
               error(lambda: module.get_kernel("fill<double>")),
               launches()]
        print(json.dumps(out))
    """)
    assert got[0] == "TypeError: saxpy takes 5 arguments (.f32, .u64, .u64, .u64, .u64), got 4"
    assert got[1].startswith("TypeError: saxpy: unexpected keyword argument 'streem'")
    assert got[2].startswith("TypeError: stream: expected a stream")
    assert got[3] == "ValueError: stream: the stream is closed"
    assert got[4].startswith("OverflowError: shared_mem: -1")
    assert got[5] == "ValueError: grid: each dimension must be at least 1, got 0"
    assert got[6].startswith("TypeError: saxpy: a launch takes grid and block first")
    assert got[7].startswith("ValueError: kernel 'sxapy' is not in the module; it has ")
    assert "fill<double>" in got[8] and "name_expressions" in got[8]
    assert got[9] == 0


def test_launch_config_and_launch_ex(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        saxpy = module.get_kernel("saxpy")
        config = cubind.LaunchConfig((4, 1), 128, shared_mem=64, cluster=2, cooperative=True,
                                     attributes={"priority": 1})
        s = config._struct
        attrs = [(a.id.name, a.value.clusterDim.x) for a in s.attrs]
        cubind.launch(0x99, config, saxpy, 1.0, 0, 0, 0, 0)
        out = [[s.gridDimX, s.gridDimY, s.blockDimX, s.sharedMemBytes, s.numAttrs, last_stream()], attrs, repr(config),
               error(lambda: cubind.launch(None, config, saxpy, 1.0)),
               error(lambda: cubind.launch(None, saxpy, config)),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"no_such": 1})),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"priority": "high"})),
               error(lambda: cubind.LaunchConfig(1, 1, cluster=(1, 0))),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"access_policy_window": 1}))]
        print(json.dumps(out))
    """)
    assert got[0] == [4, 1, 128, 64, 3, 0x99]
    assert got[1] == [["CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION", 2], ["CU_LAUNCH_ATTRIBUTE_COOPERATIVE", 1],
                      ["CU_LAUNCH_ATTRIBUTE_PRIORITY", 1]]
    assert "cluster=(2, 1, 1)" in got[2] and "cooperative=True" in got[2]
    assert got[3].startswith("TypeError: saxpy takes 5 arguments")
    assert got[4].startswith("TypeError: config: expected a cubind.LaunchConfig")
    assert got[5].startswith("ValueError: attributes: 'no_such' is not a CUlaunchAttributeID")
    assert got[6] == "TypeError: attributes['priority']: expected an int, not str"
    assert got[7].startswith("ValueError: cluster[1]: each dimension must be at least 1")
    assert "CUlaunchAttributeValue" in got[8]


def test_cubind_arrays_pass_their_pointers_and_a_freed_one_is_refused(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        import numpy as np
        saxpy = module.get_kernel("saxpy")
        a = cubind.empty(64, np.float32)
        view = a[4:]  # read from the array's slots in the launch path: the offset counts
        record(5)
        saxpy(1, 32, 2.0, a, view, a, 64)
        first = recorded(5)
        a.free()
        try:
            saxpy(1, 32, 2.0, a, view, a, 64)
            refused = None
        except ValueError as exc:
            refused = str(exc)
        print(json.dumps([first, a.memory.ptr, refused]))
    """)
    first, ptr_after_free, refused = got
    assert first[2] - first[1] == 16 and first[3] == first[1]  # 4 float32s in, and the same array again
    assert ptr_after_free is None and "released" in refused


# == on a real GPU (each test marked gpu) ===========================================================


CLUSTER = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cluster_info(unsigned *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = cluster.num_blocks();
        out[2 * blockIdx.x + 1] = cluster.block_rank();
    }
}
"""


# -- kernels: typing, templates, structs, errors ---------------------------------------


@pytest.mark.gpu
def test_saxpy_with_numpy_inputs_copied_by_1to1_calls(gpu_module, dmem):
    n = 100_000
    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dx, dy, dout = dmem(x), dmem(y), dmem(np.zeros(n, np.float32))
    saxpy = gpu_module.get_kernel("saxpy")
    assert saxpy.typed_by == "PTX"
    saxpy((n + 255) // 256, 256, 2.5, dx, int(dy), dout, n)
    assert np.allclose(dmem.get(dout, x), np.float32(2.5) * x + y)


@pytest.mark.gpu
def test_saxpy_with_cubind_arrays(gpu_module):
    n = 4096
    x, y = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    out = cubind.empty(n, np.float32)
    gpu_module.get_kernel("saxpy")(n // 128, 128, 0.5, cubind.to_gpu(x), cubind.to_gpu(y), out, n)
    assert np.array_equal(out.get(), 0.5 * x + y)


@pytest.mark.gpu
def test_templated_kernels_by_name_expression(gpu_module, dmem):
    for expression, dtype, value in (("fill<float>", np.float32, 1.5), ("fill<int>", np.int32, -7),
                                     ("fill<double>", np.float64, 2.25)):
        out = dmem(np.zeros(300, dtype))
        gpu_module.get_kernel(expression)(3, 128, out, value, 300)
        assert (dmem.get(out, np.zeros(300, dtype)) == value).all(), expression


@pytest.mark.gpu
def test_struct_by_value_and_narrow_scalars(gpu_module, dmem):
    class Item(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double), ("c", ctypes.c_char)]

    item_sum = gpu_module.get_kernel("item_sum")
    out = dmem(np.zeros(1, np.float64))
    dtype = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "i1")], align=True)
    record = np.zeros(1, dtype)
    record[0] = (3, 0.25, 2)
    for value in (Item(3, 0.25, b"\x02"), bytes(Item(3, 0.25, b"\x02")), record[0]):
        item_sum(1, 1, value, out)
        assert dmem.get(out, np.zeros(1, np.float64))[0] == 5.25, type(value)
    narrow = gpu_module.get_kernel("narrow")
    out5 = dmem(np.zeros(5, np.float64))
    narrow(1, 1, -3, -30000, 250, -(2**40), 1.5, out5)
    assert list(dmem.get(out5, np.zeros(5, np.float64))) == [-3, -30000, 250, -(2.0**40), 1.5]


@pytest.mark.gpu
def test_cubin_without_ptx_is_typed_by_param_info(gpu_module, dmem):
    bare = cubind.Module.load(gpu_module.code)  # the CUBIN alone
    saxpy = bare.get_kernel("saxpy")
    assert saxpy.typed_by == "cuKernelGetParamInfo"
    assert [p.size for p in saxpy.params] == [4, 8, 8, 8, 8]
    x = np.arange(256, dtype=np.float32)
    dx, dout = dmem(x), dmem(np.zeros(256, np.float32))
    saxpy(2, 128, 3.0, dx, dx, dout, 256)  # 3.0 to a 4-byte parameter: a float32
    assert np.array_equal(dmem.get(dout, x), 4 * x)


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_driver_refusals_are_cuda_errors(gpu_module):
    fill = gpu_module.get_kernel("fill<int>")
    with pytest.raises(cubind.CUDAError) as info:
        fill(1, 4096, 0, 0, 0)  # more threads per block than any device allows
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE" and info.value.call == "cuLaunchKernel"
    assert info.value.message


@pytest.mark.gpu
def test_packing_is_exact_for_every_width(gpu_module, dmem):
    # The argument bytes, as the kernel reads them: a double[] echo of mixed
    # widths, passed as numpy scalars and as plain Python values alike.
    narrow = gpu_module.get_kernel("narrow")
    out = dmem(np.zeros(5, np.float64))
    narrow(1, 1, np.int8(-1), np.int16(2), np.uint8(3), np.int64(4), np.float64(5.0), out)
    assert list(dmem.get(out, np.zeros(5, np.float64))) == [-1, 2, 3, 4, 5]


# -- launch configurations, clusters, occupancy ----------------------------------------


@pytest.mark.gpu
def test_launch_config_with_cluster_dims(device, dmem):
    if device.compute_capability < (9, 0):
        pytest.skip("thread-block clusters need compute capability 9.0")
    gpu_module = cubind.Program(CLUSTER).compile("cubin")
    kernel = gpu_module.get_kernel("cluster_info")
    out = dmem(np.zeros(16, np.uint32))
    with cubind.Stream() as stream:
        config = cubind.LaunchConfig(8, 64, cluster=2, attributes={"priority": 0})
        cubind.launch(stream, config, kernel, out)
        stream.synchronize()
    got = dmem.get(out, np.zeros(16, np.uint32)).reshape(8, 2)
    assert list(got[:, 0]) == [2] * 8
    assert list(got[:, 1]) == [b % 2 for b in range(8)]
    assert kernel.max_active_clusters(config) >= 1


@pytest.mark.gpu
def test_launch_config_without_attributes_matches_the_call_form(gpu_module, dmem):
    fill = gpu_module.get_kernel("fill<float>")
    out = dmem(np.zeros(1000, np.float32))
    cubind.launch(None, cubind.LaunchConfig((4, 1, 1), (256,)), fill, out, 4.5, 1000)
    assert (dmem.get(out, np.zeros(1000, np.float32)) == 4.5).all()


@pytest.mark.gpu
def test_occupancy_and_function_attributes(gpu_module, device):
    saxpy = gpu_module.get_kernel("saxpy")
    min_grid, block = saxpy.suggested_block_size()
    assert 32 <= block <= device.attribute("max_threads_per_block") and block % 32 == 0
    assert min_grid >= device.multiprocessor_count
    per_sm = saxpy.max_active_blocks(block)
    assert 1 <= per_sm <= device.attribute("max_blocks_per_multiprocessor")
    assert saxpy.max_active_blocks((block, 1, 1), shared_mem=0) == per_sm
    assert saxpy.num_regs > 0 and saxpy.max_threads_per_block <= 1024
    assert saxpy.attribute("num_regs") == saxpy.num_regs
    with pytest.raises(ValueError, match="CUfunction_attribute"):
        saxpy.attribute("no_such")
