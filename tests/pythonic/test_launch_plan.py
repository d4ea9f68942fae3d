"""Arguments typed by the kernel, without a driver (cubind/_launch/launch.pyx's
Plan and args.py): Python values, every scalar width, numpy scalars and
ctypes values, structs by value, templates, errors naming the parameter and
its type, parameters known by size only, array types learned once, and the
launch dimensions.
"""

import ctypes
import struct

import pytest

import cubind
from cubind._launch.args import POINTER_GETTERS
from cubind._launch.launch import Plan, dims
from cubind._launch.params import BYTES, INT, Param, params_from_sizes
from tests.pythonic._core_fixtures import compiled_module, own_cache_dir  # noqa: F401  (fixtures)

np = pytest.importorskip("numpy")


# -- argument typing (the packing plan, no driver needed) --------------------------


def plan_for(params, name="k"):

    return Plan(name, params)


def ptx_plan(module, name):
    return plan_for(module.entries[module.lowered_names.get(name, name)], name)


class CAIArray:
    """An array library's device array, as far as a launch can tell."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}


class PtrArray:
    """cubind.Array's shape: __cuda_array_interface__ and an int .ptr."""

    __cuda_array_interface__ = property(lambda self: {"data": (self.ptr, False)})

    def __init__(self, ptr):
        self.ptr = ptr


def test_python_values_take_the_parameters_types(module):
    import cuda

    got = ptx_plan(module, "saxpy").pack_bytes(2.5, CAIArray(0x1000), PtrArray(0x2000), cuda.CUdeviceptr(0x3000), 7)
    assert got == [struct.pack("<f", 2.5), struct.pack("<Q", 0x1000), struct.pack("<Q", 0x2000),
                   struct.pack("<Q", 0x3000), struct.pack("<Q", 7)]


def test_every_scalar_width(module):
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    got = ptx_plan(module, "mix").pack_bytes(Pair(3, 0.5), 1.25, 65, -2, -3, -(2**63), 255, True)
    assert got == [bytes(Pair(3, 0.5)), struct.pack("<d", 1.25), b"A", struct.pack("<h", -2),
                   struct.pack("<i", -3), struct.pack("<q", -(2**63)), b"\xff", b"\x01"]


def test_ints_to_float_parameters_and_integral_floats_to_int_parameters(module):
    got = ptx_plan(module, "saxpy").pack_bytes(3, 0, 0, 0, 4.0)
    assert got[0] == struct.pack("<f", 3.0) and got[4] == struct.pack("<Q", 4)


def test_numpy_scalars_and_ctypes_values_pass_their_own_bytes(module):
    plan = ptx_plan(module, "saxpy")
    got = plan.pack_bytes(np.int32(-1), np.uint64(5), ctypes.c_void_p(9), np.float64(1.5), ctypes.c_size_t(3))
    assert got == [struct.pack("<i", -1), struct.pack("<Q", 5), struct.pack("<Q", 9), struct.pack("<d", 1.5),
                   struct.pack("<Q", 3)]


def test_struct_parameters_take_bytes_buffers_and_structured_scalars(module):
    plan = ptx_plan(module, "mix")
    rest = (0.0, 0, 0, 0, 0, 0, False)
    raw = struct.pack("<i4xd", 7, 2.5)
    records = np.zeros(1, dtype=np.dtype([("a", "<i4"), ("b", "<f8")], align=True))
    records[0] = (7, 2.5)
    record = records[0]
    for value in (raw, bytearray(raw), memoryview(raw), record, np.frombuffer(raw, dtype=np.uint8)):
        assert plan.pack_bytes(value, *rest)[0] == raw, type(value)


def test_templated_kernel_parameters(module):
    assert ptx_plan(module, "fill<float>").pack_bytes(0x10, 1)[1] == struct.pack("<f", 1.0)
    assert ptx_plan(module, "fill<int>").pack_bytes(0x10, -1)[1] == struct.pack("<i", -1)


@pytest.mark.parametrize("args,exc,message", [
    ((1.0, 0, 0, 0), TypeError, "k takes 5 arguments (.f32, .u64, .u64, .u64, .u64), got 4"),
    ((1.0, 0, 0, 0, 0, 0), TypeError, "k takes 5 arguments"),
    ((np.float64(1.0), 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): numpy.float64 is 8 bytes, the parameter 4"),
    ((ctypes.c_int(1), 0, 0, 0, ctypes.c_int(1)), TypeError,
     "k: parameter 4 (.u64): ctypes.c_int is 4 bytes, the parameter 8"),
    ((1e39, 0, 0, 0, 0), OverflowError, "k: parameter 0 (.f32): 1e+39 is out of range for a float32"),
    ((1.0, 0, 0, 0, 2**64), OverflowError, "k: parameter 4 (.u64): 18446744073709551616 is out of range"),
    ((1.0, -(2**63) - 1, 0, 0, 0), OverflowError, "k: parameter 1 (.u64)"),
    ((1.0, 1.5, 0, 0, 0), TypeError, "k: parameter 1 (.u64): expected an int, got float 1.5"),
    ((1.0, "x", 0, 0, 0), TypeError, "k: parameter 1 (.u64): cannot pass str"),
    ((1.0, np.zeros(4, np.float32), 0, 0, 0), TypeError, "host memory: copy it to the device first"),
    ((1.0, [1, 2], 0, 0, 0), TypeError, "k: parameter 1 (.u64): cannot pass list"),
    (("2.0", 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): cannot pass str"),
    ((None, 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): cannot pass NoneType"),
])
def test_bad_arguments_name_the_parameter_and_its_type(module, args, exc, message):
    with pytest.raises(exc) as info:
        ptx_plan(module, "saxpy").__class__("k", module.entries["saxpy"]).pack_bytes(*args)
    assert message in str(info.value)


@pytest.mark.parametrize("index,value,exc,message", [
    (2, 256, OverflowError, "k: parameter 2 (.u8): 256 is out of range [-128, 255]"),
    (2, -129, OverflowError, "[-128, 255]"),
    (3, 70000, OverflowError, "k: parameter 3 (.u16)"),
    (4, 2**32, OverflowError, "k: parameter 4 (.u32)"),
    (0, b"short", TypeError, "k: parameter 0 (.align 8 .b8[16]): bytes is 5 bytes, the parameter 16"),
    (0, 3, TypeError, "a 16-byte struct by value takes bytes"),
    (0, np.zeros((4, 4), np.float32)[:, 0], TypeError, "not contiguous"),
    (1, "1.0", TypeError, "k: parameter 1 (.f64): cannot pass str"),
])
def test_bad_arguments_for_narrow_and_struct_parameters(module, index, value, exc, message):
    args = [bytes(16), 0.0, 0, 0, 0, 0, 0, False]
    args[index] = value
    with pytest.raises(exc) as info:
        plan_for(module.entries["mix"]).pack_bytes(*args)
    assert message in str(info.value)


def test_parameters_known_by_size_only():
    plan = plan_for(params_from_sizes([4, 8, 4, 8, 2, 12]))
    got = plan.pack_bytes(1.5, 2.5, 7, CAIArray(0x40), np.float16(1.0), bytes(range(12)))
    assert got == [struct.pack("<f", 1.5), struct.pack("<d", 2.5), struct.pack("<I", 7), struct.pack("<Q", 0x40),
                   np.float16(1.0).tobytes(), bytes(range(12))]
    with pytest.raises(TypeError, match=r"k: parameter 4 \(2-byte parameter\): expected an int, got float"):
        plan.pack_bytes(1.5, 2.5, 7, 0, 1.5, bytes(12))
    with pytest.raises(OverflowError, match=r"parameter 2 \(4-byte parameter\)"):
        plan.pack_bytes(1.5, 2.5, 2**32, 0, 0, bytes(12))


def test_many_parameters_and_large_structs_leave_the_stack_buffer():
    params = [Param(i, INT, 4, text=".u32") for i in range(300)] + [Param(300, BYTES, 5000, text=".b8[5000]")]
    got = plan_for(params).pack_bytes(*range(300), bytes(5000))
    assert got[:300] == [struct.pack("<I", i) for i in range(300)] and got[300] == bytes(5000)


def test_a_new_array_type_is_learned_once(module):

    class Fresh(CAIArray):
        pass

    plan = ptx_plan(module, "saxpy")
    assert Fresh not in POINTER_GETTERS
    plan.pack_bytes(0.0, Fresh(0x10), 0, 0, 0)
    assert Fresh in POINTER_GETTERS
    assert plan.pack_bytes(0.0, Fresh(0x20), 0, 0, 0)[1] == struct.pack("<Q", 0x20)


def test_an_array_that_refuses_its_pointer_is_a_type_error(module):
    class Tensorish:  # PyTorch's shape: a CPU tensor's __cuda_array_interface__ raises
        def __init__(self, ptr, on_device):
            self.ptr_value, self.on_device = ptr, on_device

        @property
        def __cuda_array_interface__(self):
            if not self.on_device:
                raise RuntimeError("not a CUDA tensor")
            return {"data": (self.ptr_value, False)}

    plan = ptx_plan(module, "saxpy")
    with pytest.raises(TypeError, match=r"saxpy: parameter 1 \(.u64\): cannot pass"):
        plan.pack_bytes(0.0, Tensorish(0, False), 0, 0, 0)
    assert plan.pack_bytes(0.0, Tensorish(0x40, True), 0, 0, 0)[1] == struct.pack("<Q", 0x40)
    with pytest.raises(TypeError, match=r"parameter 1 \(.u64\): .*Tensorish is not device memory \(not a CUDA"):
        plan.pack_bytes(0.0, Tensorish(0, False), 0, 0, 0)


def test_launch_dimensions():

    assert dims(4, "grid") == (4, 1, 1) and dims((2, 3), "grid") == (2, 3, 1) and dims([1, 2, 3], "b") == (1, 2, 3)
    assert dims(np.int64(5), "grid") == (5, 1, 1)
    for value, exc, message in [(0, ValueError, "grid: each dimension must be at least 1, got 0"),
                                ((1, 2, 3, 4), ValueError, "grid: expected 1 to 3 dimensions, got 4"),
                                ((), ValueError, "got 0"), (2**32, OverflowError, "grid: 4294967296 does not fit"),
                                ("8", TypeError, "grid: expected an int, not str"),
                                ((1, 0), ValueError, r"grid\[1\]: each dimension"), (2.5, TypeError, "float")]:
        with pytest.raises(exc, match=message):
            dims(value, "grid")


def test_a_subclass_of_array_takes_the_slot_path():
    from cubind._launch.launch import SlotAddressed

    assert issubclass(cubind.Array, SlotAddressed)
