"""Other libraries' device arrays as kernel arguments: CuPy's, PyTorch's and
any ``__cuda_array_interface__`` object, by stand-ins of their shape (the
libraries themselves are tried on a GPU in test_pythonic_core.py).

Each array type's way to its pointer is learned once (args.POINTER_GETTERS);
the pointer of each object is read anew every call, and anything odd goes
to args.py's slow path, whose errors name the parameter. Packed by
``Plan.pack_bytes`` (what a launch packs).
"""

import pytest

from cubind._launch import args
from cubind._launch.args import POINTER_GETTERS
from cubind._launch.launch import Plan
from cubind._launch.params import INT, Param


class MemoryPointer:
    """cupy.cuda.MemoryPointer's shape: ``ptr`` a descriptor of the class."""

    __module__ = "cupy.cuda.memory"
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class CupyLike:
    """cupy.ndarray's shape: ``.data.ptr`` and ``__cuda_array_interface__``."""

    __module__ = "cupy._core.core"

    def __init__(self, ptr):
        self.data = MemoryPointer(ptr)

    @property
    def __cuda_array_interface__(self):
        return {"shape": (4,), "typestr": "<f4", "data": (self.data.ptr, False), "version": 3}


class TorchLike:
    """torch.Tensor's shape: ``is_cuda``, ``data_ptr()``, ``__dlpack__``, and
    a ``__cuda_array_interface__`` that refuses a CPU tensor."""

    __module__ = "torch"

    def __init__(self, ptr, is_cuda=True):
        self.ptr_value, self.is_cuda = ptr, is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"

    def data_ptr(self):
        return self.ptr_value

    def __dlpack__(self, stream=None):
        raise NotImplementedError

    @property
    def __cuda_array_interface__(self):
        if not self.is_cuda:
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor")
        return {"shape": (4,), "typestr": "<f4", "data": (self.ptr_value, False), "version": 2}


class Interface:
    """Any other library (Numba, JAX): ``__cuda_array_interface__`` alone, a
    property read each time."""

    def __init__(self, ptr):
        self.interface = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}

    @property
    def __cuda_array_interface__(self):
        return self.interface


def plan():
    return Plan("k", [Param(i, INT, 8, False, True, ".u64 .ptr") for i in range(2)])


def packed(*values):
    """The two pointer slots packed, as ints: a value's type is learned by
    the first pack that meets it."""
    return [int.from_bytes(raw, "little") for raw in plan().pack_bytes(*values)]


def learned(value):
    """``value``, its type learned by a first pack: the next takes the C path."""
    packed(0, value)
    return value


# -- each library's way ---------------------------------------------------------------


def test_each_library_is_learned_as_its_own_way():
    for value, way, pointer in [(CupyLike(0x100), args.DATA_PTR, 0x100), (TorchLike(0x200), args.torch_pointer, 0x200),
                                (Interface(0x300), args.cai_pointer, 0x300), (MemoryPointer(0x400), args.PTR, 0x400)]:
        assert packed(0, value) == [0, pointer]
        assert POINTER_GETTERS[type(value)] is way, type(value)
        assert packed(value, 0) == [pointer, 0]  # the learned way


# -- refusals: never a wrong address ---------------------------------------------------


@pytest.mark.parametrize("interface", [
    {"shape": (4,), "typestr": "<f4", "version": 3},  # no "data"
    {"data": 0x300},  # a bare int
    {"data": ()},  # no pointer in it
    {"data": None},
])
def test_an_interface_without_a_data_tuple_is_a_clear_error(interface):
    value = learned(Interface(0x300))
    value.interface = interface
    with pytest.raises(TypeError, match=r"k: parameter 1 \(.u64 .ptr\): .*Interface is not device memory "
                                        r"\(its __cuda_array_interface__ has no \"data\""):
        packed(0, value)
