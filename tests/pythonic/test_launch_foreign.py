"""Other libraries' device arrays as kernel arguments: CuPy's, PyTorch's and
any ``__cuda_array_interface__`` object, by stand-ins of their shape (the
libraries themselves are tried on a GPU in test_launch_foreign_gpu.py).

Each array type's way to its pointer is learned once (args.POINTER_GETTERS);
the launch path (launch.pyx) then reads the pointer of each object in C,
anew every call, and leaves anything odd to args.py's slow path, whose
errors name the parameter. Packed by ``Plan.pack_bytes`` (what a launch
packs), and once through the fake driver.
"""

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cubind._launch import args
from cubind._launch.args import POINTER_GETTERS
from cubind._launch.launch import Plan
from cubind._launch.params import INT, Param
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


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


class DLPackOnly:
    """A DLPack producer and nothing else (no interface, no pointer attribute):
    a new capsule of its memory per call, each call's stream and max_version kept."""

    def __init__(self, ptr, device_type=2, old=False):
        self.address, self.device_type, self.old = ptr, device_type, old
        self.owner = Owner()  # what the capsule holds until its deleter runs
        self.calls = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None, max_version=None):
        from cubind._interop.dlpack import make_capsule

        if self.old and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.calls.append((stream, max_version))
        return make_capsule(self.owner, self.address, self.device_type, 0, (4,), (1,), 2, 32,
                            versioned=max_version is not None)


class Owner:
    pass


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
        assert packed(value, 0) == [pointer, 0]  # the C path


def test_a_learned_pointer_is_read_without_calling_a_getter():
    # The launch path reads it in C: nothing of args.py runs, only the
    # library's own data_ptr() and property.
    calls = []
    values = [learned(CupyLike(0x100)), learned(TorchLike(0x200)), learned(Interface(0x300))]
    p = plan()

    def profile(frame, event, arg):
        if event == "call":
            calls.append((frame.f_code.co_filename, frame.f_code.co_name))

    got = []
    sys.setprofile(profile)
    try:
        for value in values:  # a loop, not a comprehension: before 3.12 that is a frame of its own
            got.append(p.pack_bytes(value, 0)[0])
    finally:
        sys.setprofile(None)
    assert got == [struct.pack("<Q", pointer) for pointer in (0x100, 0x200, 0x300)]
    assert [name for file, name in calls if file == __file__] == ["data_ptr", "__cuda_array_interface__"]
    assert [name for file, name in calls if file == args.__file__] == []


def test_a_pointer_that_changes_is_read_anew_each_call():
    cupy, torch, other = learned(CupyLike(0x100)), learned(TorchLike(0x200)), learned(Interface(0x300))
    p = plan()
    for step in range(3):
        cupy.data = MemoryPointer(0x1000 * step + 0x100)
        torch.ptr_value = 0x1000 * step + 0x200
        other.interface = dict(other.interface, data=(0x1000 * step + 0x300, False))
        for value, offset in ((cupy, 0x100), (torch, 0x200), (other, 0x300)):
            assert p.pack_bytes(value, 0)[0] == struct.pack("<Q", 0x1000 * step + offset)


def test_one_parameter_takes_each_library_in_turn():
    # The plan keeps the type last met per parameter: another one there is
    # read its own way. Each stand-in would give 0xBAD read the other's way.
    class Cupy(CupyLike):
        __module__ = "cupy._core.core"
        is_cuda = True

        def data_ptr(self):
            return 0xBAD

    class Torch(TorchLike):
        __module__ = "torch"

        def __init__(self, ptr):
            super().__init__(ptr)
            self.data = MemoryPointer(0xBAD)

    p = plan()
    values = [learned(Cupy(0x100)), learned(Torch(0x200)), learned(Interface(0x300)), 0x400]
    for _ in range(3):
        for value, pointer in zip(values, (0x100, 0x200, 0x300, 0x400)):
            assert p.pack_bytes(value, value) == [struct.pack("<Q", pointer)] * 2


def test_a_plan_keeps_the_types_it_met_only_while_it_lives():
    class Fresh(Interface):
        pass

    learned(Fresh(0x10))  # by another plan: POINTER_GETTERS holds the type
    alone = sys.getrefcount(Fresh)
    p = plan()
    p.pack_bytes(Fresh(0x10), 0)
    assert sys.getrefcount(Fresh) == alone + 1  # the first parameter's
    p.pack_bytes(Fresh(0x10), Fresh(0x20))
    assert sys.getrefcount(Fresh) == alone + 2  # and the second's
    del p
    assert sys.getrefcount(Fresh) == alone  # gone with the plan


def test_packing_keeps_no_reference():
    # The C path counts references by hand: a read, a refusal and a slow
    # path leave every object as they found it.
    pointer = 2**40 + 1  # an int made here, not a shared small one
    values = [CupyLike(pointer), TorchLike(pointer), Interface(pointer), TorchLike(pointer, is_cuda=False),
              Interface(pointer)]
    values[4].interface = {"shape": (4,)}
    p = plan()

    def pack_all():
        for index in range(len(values)):
            try:
                p.pack_bytes(values[index], 0)
            except TypeError:
                pass

    pack_all()  # each type learned
    watched = [pointer, *values, values[0].data, values[2].interface, values[2].interface["data"],
               values[4].interface, args.DATA_PTR, args.torch_pointer, args.cai_pointer]
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(100):
        pack_all()
    assert [sys.getrefcount(o) for o in watched] == before


# -- refusals: never a wrong address ---------------------------------------------------


def test_a_cpu_tensor_is_refused_naming_the_parameter():
    learned(TorchLike(0x200))
    for _ in range(2):  # the first time and once its type is known
        with pytest.raises(TypeError, match=r"k: parameter 1 \(.u64 .ptr\): torch.TorchLike is not device "
                                            r"memory \(a tensor on cpu is not CUDA device memory\)"):
            packed(0, TorchLike(0x200, is_cuda=False))


def test_a_cpu_tensor_of_an_unseen_type_is_refused():
    class Parameter(TorchLike):
        __module__ = "torch.nn.parameter"

    with pytest.raises(TypeError, match=r"parameter 0 .*Parameter is not device memory \(a tensor on cpu"):
        packed(Parameter(0x200, is_cuda=False), 0)


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


def test_an_interface_of_another_shape_takes_the_slow_path():
    # Not an exact dict and tuple: args.cai_pointer reads it as Python does,
    # through their own __getitem__, never their storage.
    class Interfaces(dict):
        def __getitem__(self, key):
            return (0x500, False) if key == "data" else super().__getitem__(key)

    class Data(tuple):
        def __getitem__(self, index):
            return 0x600 if index == 0 else super().__getitem__(index)

    value = learned(Interface(0x300))
    for interface, pointer in [(Interfaces(data=(0x999, False)), 0x500), ({"data": Data((0x999, False))}, 0x600),
                               ({"data": [0x700, False]}, 0x700)]:
        value.interface = interface
        assert packed(0, value) == [0, pointer]


@pytest.mark.parametrize("bad", [4096.0, "4096", None, 1.5])
def test_a_pointer_that_is_no_int_is_refused(bad):
    # Not converted by int(): a float or a string read as an address would
    # launch with a wrong one.
    cupy, torch, other = learned(CupyLike(0x100)), learned(TorchLike(0x200)), learned(Interface(0x300))
    cupy.data = MemoryPointer(bad)
    torch.ptr_value = bad
    other.interface = {"data": (bad, False)}
    for value in (cupy, torch, other):
        with pytest.raises(TypeError, match=r"k: parameter 1 \(.u64 .ptr\): .* is not device memory"):
            packed(0, value)


def test_a_freed_array_is_refused():
    class Tensor(TorchLike):
        __module__ = "torch"
        freed = False

        def data_ptr(self):
            if self.freed:
                raise RuntimeError("the storage was freed")
            return self.ptr_value

    class FreedMemory:
        @property
        def ptr(self):
            raise AttributeError("freed")

    tensor = learned(Tensor(0x10))
    tensor.freed = True
    cupy = learned(CupyLike(0x100))
    cupy.data = FreedMemory()
    for value in (tensor, cupy):
        with pytest.raises(TypeError, match=r"parameter 1 .* is not device memory \((the storage was )?freed\)"):
            packed(0, value)


def test_an_interrupt_while_reading_is_not_swallowed():
    # A failed read goes to the slow path only for an Exception: a
    # KeyboardInterrupt raised in the library's property stops the launch.
    class Interrupted(Interface):
        interrupt = False

        @property
        def __cuda_array_interface__(self):
            if self.interrupt:
                raise KeyboardInterrupt
            return self.interface

    value = learned(Interrupted(0x300))
    value.interrupt = True
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(frame.f_code.co_name) if event == "call" else None)
    try:
        with pytest.raises(KeyboardInterrupt):
            plan().pack_bytes(0, value)
    finally:
        sys.setprofile(None)
    assert "convert" not in calls


def test_an_int_subclass_pointer_is_its_value():
    class Address(int):
        pass

    torch = learned(TorchLike(0x200))
    torch.ptr_value = Address(0x2000)
    assert packed(0, torch) == [0, 0x2000]


# -- subclasses ------------------------------------------------------------------------


def test_subclasses_are_learned_as_their_own_types():
    class MyCupy(CupyLike):  # another module: read through its __cuda_array_interface__
        pass

    class Parameter(TorchLike):
        __module__ = "torch.nn.parameter"

    class MyInterface(Interface):
        pass

    for value, way in [(MyCupy(0x100), args.cai_pointer), (Parameter(0x200), args.torch_pointer),
                       (MyInterface(0x300), args.cai_pointer)]:
        assert type(value) not in POINTER_GETTERS
        assert packed(0, value)[1] == value.__cuda_array_interface__["data"][0]
        assert POINTER_GETTERS[type(value)] is way
        assert packed(0, type(value)(0x4000))[1] == 0x4000  # the C path, once learned


def test_a_subclass_cpu_tensor_is_refused_once_learned():
    class Parameter(TorchLike):
        __module__ = "torch.nn.parameter"

    learned(Parameter(0x200))
    with pytest.raises(TypeError, match=r"parameter 1 .*Parameter is not device memory \(a tensor on cpu"):
        packed(0, Parameter(0x200, is_cuda=False))


# -- DLPack producers ----------------------------------------------------------------


@pytest.mark.parametrize("old", [False, True])
def test_a_dlpack_producer_gives_its_capsules_address(old):
    # Read from a capsule made per call (versioned, or 0.x where the producer
    # takes no max_version), the capsule let go at once: its owner is released.
    value = DLPackOnly(0x7000, old=old)
    held = sys.getrefcount(value.owner)
    for _ in range(2):
        assert packed(0, value) == [0, 0x7000]
    after = sys.getrefcount(value.owner)  # outside the assert: its rewriting holds what it reads
    assert POINTER_GETTERS[DLPackOnly] is args.dlpack_pointer
    assert after == held
    # A graph node's arguments (pack_bytes): no stream to order before, -1.
    assert value.calls == ([(-1, None)] if old else [(-1, (1, 1))]) * 2


def test_a_dlpack_producer_off_the_gpu_is_refused_naming_the_parameter():
    value = DLPackOnly(0x7000, device_type=1)
    expected = (r"k: parameter 1 \(.u64 .ptr\): \S*DLPackOnly is not device memory \(its DLPack "
                r"device type is 1, not CUDA .*host memory: copy it with cubind.to_gpu\)")
    with pytest.raises(TypeError, match=expected):
        packed(0, value)
    assert value.calls == []  # refused before a capsule is asked for


def test_a_numpy_array_is_still_host_memory_not_a_dlpack_producer():
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"cannot pass numpy.ndarray.*host memory: copy it to the device first"):
        packed(0, np.zeros(4))


# -- through the fake driver -----------------------------------------------------------

PTX = """.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u64 k_param_2) { ret; }
"""


def test_a_launch_reads_each_pointer_at_each_call(fake_driver):
    code = textwrap.dedent(f"""
        import ctypes, json, cubind
        from tests.pythonic.test_launch_foreign import CupyLike, Interface, MemoryPointer, TorchLike
        fake = ctypes.CDLL({str(fake_driver)!r})
        ctypes.c_int.in_dll(fake, "fake_record_args").value = 3
        kernel = cubind.Module.load({PTX.encode()!r}).get_kernel("k")
        cupy, torch, other = CupyLike(0x1000), TorchLike(0x2000), Interface(0x3000)
        got = []
        for step in range(3):
            kernel(1, 1, cupy, torch, other)
            got.append(list((ctypes.c_ulonglong * 3).in_dll(fake, "fake_args")))
            cupy.data = MemoryPointer(cupy.data.ptr + 0x10)
            torch.ptr_value += 0x10
            other.interface = dict(other.interface, data=(other.interface["data"][0] + 0x10, False))
        try:
            kernel(1, 1, cupy, TorchLike(0x2000, is_cuda=False), other)
        except TypeError as exc:
            got.append(str(exc))
        print(json.dumps(got))
    """)
    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got[:3] == [[0x1000 + 0x10 * s, 0x2000 + 0x10 * s, 0x3000 + 0x10 * s] for s in range(3)]
    assert got[3] == ("k: parameter 1 (.u64): torch.TorchLike is not device memory "
                      "(a tensor on cpu is not CUDA device memory)")


def test_a_launch_waits_for_the_stream_an_interface_names(fake_driver):
    # Version 3 of the protocol: a consumer orders its work after the
    # producer's "stream" (1 and 2 are the default streams, 0 is forbidden).
    code = textwrap.dedent(f"""
        import ctypes, json, cubind
        from tests.pythonic.test_launch_foreign import Interface
        fake = ctypes.CDLL({str(fake_driver)!r})
        waits = ctypes.c_int.in_dll(fake, "fake_stream_wait_count")
        waited = ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_stream")
        kernel = cubind.Module.load({PTX.encode()!r}).get_kernel("k")
        producer, consumer = cubind.Stream(), cubind.Stream()
        x, y = Interface(0x1000), Interface(0x2000)
        got = {{}}

        def count(name, *args, **options):
            before = waits.value
            kernel(1, 1, *args, **options)
            n = waits.value - before
            got[name] = [n, waited.value == int(consumer.handle) if n else None]

        x.interface["stream"] = producer.handle
        count("other stream", x, y, 0, stream=consumer)
        count("its own stream", x, y, 0, stream=producer)
        y.interface["stream"] = producer.handle
        count("two arrays of one stream", x, y, 0, stream=consumer)
        x.interface["stream"] = y.interface["stream"] = None
        count("None", x, y, 0, stream=consumer)
        x.interface["stream"] = 1
        count("legacy stream, launched on it", x, y, 0)
        count("legacy stream, launched on another", x, y, 0, stream=consumer)
        x.interface = type("Interfaces", (dict,), {{}})(x.interface, stream=producer.handle)
        count("an interface of another shape", x, y, 0, stream=consumer)
        x.interface = {{"data": (0x1000, False), "stream": producer.handle}}
        before = waits.value
        cubind.launch(consumer, cubind.LaunchConfig(1, 1), kernel, x, y, 0)
        got["launch()"] = [waits.value - before, waited.value == int(consumer.handle)]
        before = waits.value
        kernel.plan.pack_bytes(x, y, 0)
        got["packed for a graph node"] = [waits.value - before, None]
        for bad in (0, "1"):
            x.interface["stream"] = bad
            try:
                kernel(1, 1, x, y, 0, stream=consumer)
            except (TypeError, ValueError) as exc:
                got[repr(bad)] = str(exc)
        print(json.dumps(got))
    """)
    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), FAKE_DEVICE_COUNT="1", PYTHONPATH=pythonpath(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got.pop("0") == ("k: parameter 0 (.u64): its __cuda_array_interface__ 'stream' is 0, which the protocol "
                            "forbids (1: legacy default stream, 2: per-thread default stream)")
    assert got.pop("'1'") == ("k: parameter 0 (.u64): its __cuda_array_interface__ 'stream' is a str, not an int "
                              "stream handle")
    assert got == {"other stream": [1, True], "its own stream": [0, None], "two arrays of one stream": [1, True],
                   "None": [0, None], "legacy stream, launched on it": [0, None],
                   "legacy stream, launched on another": [1, True], "an interface of another shape": [1, True],
                   "launch()": [1, True], "packed for a graph node": [0, None]}


def test_a_dlpack_producer_is_asked_for_the_launchs_stream(fake_driver):
    code = textwrap.dedent(f"""
        import ctypes, json, cubind
        from tests.pythonic.test_launch_foreign import DLPackOnly
        fake = ctypes.CDLL({str(fake_driver)!r})
        ctypes.c_int.in_dll(fake, "fake_record_args").value = 3
        kernel = cubind.Module.load({PTX.encode()!r}).get_kernel("k")
        stream = cubind.Stream()
        x = DLPackOnly(0x5000)
        kernel(1, 1, x, 0, 0, stream=stream)
        kernel(1, 1, x, 0, 0)
        cubind.launch(stream, cubind.LaunchConfig(1, 1), kernel, x, 0, 0)
        print(json.dumps({{"args": list((ctypes.c_ulonglong * 3).in_dll(fake, "fake_args")),
                          "streams": [s for s, _ in x.calls], "stream": int(stream.handle)}}))
    """)
    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), FAKE_DEVICE_COUNT="1", PYTHONPATH=pythonpath(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["args"] == [0x5000, 0, 0]
    assert got["streams"] == [got["stream"], 1, got["stream"]]  # 1: the legacy default stream


def test_packing_into_a_nodes_slots_writes_all_of_them_or_none():
    # KernelNode.set_args packs straight into the node's slots: a refused
    # argument must leave the earlier values, not half of the new ones.
    import ctypes

    p = plan()
    slots = [ctypes.create_string_buffer(8) for _ in range(2)]
    pointers = (ctypes.c_void_p * 2)(*[ctypes.addressof(s) for s in slots])
    p.pack_to_slots(ctypes.addressof(pointers), 0x10, learned(Interface(0x20)))
    assert [int.from_bytes(s.raw, "little") for s in slots] == [0x10, 0x20]
    with pytest.raises(TypeError, match=r"k: parameter 1 \(.u64 .ptr\): cannot pass str"):
        p.pack_to_slots(ctypes.addressof(pointers), 0x30, "x")
    assert [int.from_bytes(s.raw, "little") for s in slots] == [0x10, 0x20]
    with pytest.raises(ValueError, match="slots: a null address"):
        p.pack_to_slots(0, 1, 2)


def test_a_value_that_is_no_device_array_is_looked_up_once_a_pack(monkeypatch):
    # A cuda.CUdeviceptr-like value (an int by __index__): the packer asks
    # whether its type is a device array once, and the slow path does not ask again.
    class Address:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    asked = []
    real = args._pointer_getter
    monkeypatch.setattr(args, "_pointer_getter", lambda value: asked.append(type(value)) or real(value))
    assert packed(0, Address(0x900)) == [0, 0x900]
    assert asked == [Address]
