"""Function-pointer typedefs are classes of their name, as in the classic
modules (``cuda.bindings.driver.CUoccupancyB2DSize(init_value=0)``): built
from a C function's address, ``int()`` gives it back, ``getPtr()`` the address
where it is stored (made with ``_ptr=``, that address: cuda.core passes it as
the function); an instance passes wherever that callback is taken, beside
the Python callables (through the trampolines) and raw addresses."""

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest

import cuda
from cuda import cudart
from tests._toolkit import ROOT, cuda_core_missing, cuda_core_path, pythonpath

DRIVER = ["CUoccupancyB2DSize", "CUhostFn", "CUstreamCallback", "CUasyncCallback"]
RUNTIME = ["cudaStreamCallback_t", "cudaHostFn_t", "cudaAsyncCallback"]
CLASSES = [(cuda, name) for name in DRIVER] + [(cudart, name) for name in RUNTIME]
IDS = [name for _, name in CLASSES]

B2D = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)


@pytest.mark.parametrize("module,name", CLASSES, ids=IDS)
def test_every_function_pointer_typedef_is_an_exported_class(module, name):
    cls = getattr(module, name)
    assert isinstance(cls, type) and cls.__name__ == name
    assert name in module.__all__
    assert module.sizeof(cls) == ctypes.sizeof(ctypes.c_void_p)


@pytest.mark.parametrize("module,name", CLASSES, ids=IDS)
def test_int_getptr_and_repr_round_trip(module, name):
    cls = getattr(module, name)
    f = cls(0x1234)
    assert int(f) == 0x1234 and f.__index__() == 0x1234
    assert ctypes.c_void_p.from_address(f.getPtr()).value == 0x1234
    assert repr(f) == f"<{name} 0x1234>"
    assert int(cls()) == 0 and int(cls(None)) == 0
    assert cls(f) == f and hash(cls(f)) == hash(f) and cls(0x10) != f


def test_a_ctypes_function_pointer_gives_its_address():
    fn = B2D(lambda block: 0)
    address = ctypes.cast(fn, ctypes.c_void_p).value
    assert int(cuda.CUoccupancyB2DSize(fn)) == address
    assert int(cuda.CUoccupancyB2DSize(init_value=address)) == address


@pytest.mark.parametrize("bad", ["f", 1.5, b"f"])
def test_bad_input_is_a_type_error_naming_the_parameter(bad):
    with pytest.raises(TypeError, match=r"^blockSizeToDynamicSMemSize: expected CUoccupancyB2DSize"):
        cuda.cuOccupancyMaxPotentialBlockSize(0, bad, 0, 0)
    with pytest.raises(TypeError, match=r"^fn: expected CUhostFn"):
        cuda.cuLaunchHostFunc(0, bad, 0)
    with pytest.raises(TypeError, match=r"^init_value: expected cudaHostFn_t"):
        cudart.cudaHostFn_t(bad)


def test_a_struct_field_of_the_type_takes_an_instance():
    params = cuda.CUDA_HOST_NODE_PARAMS()
    params.fn = cuda.CUhostFn(0x5678)
    assert params.fn == 0x5678
    nodes = cudart.cudaHostNodeParams()
    nodes.fn = cudart.cudaHostFn_t(0x9ABC)
    assert nodes.fn == 0x9ABC


def test_the_stubs_list_the_classes_and_type_the_parameters_with_them():
    stub = (os.path.dirname(cuda.__file__) + "/__init__.pyi")
    text = open(stub).read()
    assert "\nclass CUoccupancyB2DSize:\n" in text
    assert "def __init__(self, init_value: CUoccupancyB2DSize | int | None = 0, _ptr: int | None = 0) -> None" in text
    assert "blockSizeToDynamicSMemSize: CUoccupancyB2DSize | Callable[..., int] | int | None" in text


OCCUPANCY = """
import ctypes, json
import cuda
seen = []
B2D = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
def need(block):
    seen.append(block)
    return block * 1024          # 256 KiB for 256 threads: the block halves
fn = B2D(need)
wrapped = cuda.CUoccupancyB2DSize(ctypes.cast(fn, ctypes.c_void_p).value)
got = {}
got["instance"] = list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, wrapped, 0, 0)[1:])
got["ctypes"] = list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, fn, 0, 0)[1:])
got["none"] = list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, None, 0, 0)[1:])
got["zero"] = list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, 0, 0, 0)[1:])
got["null_instance"] = list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, cuda.CUoccupancyB2DSize(), 0, 0)[1:])
# cuda.core's form: made with _ptr= the function's address, passed as getPtr().
by_address = cuda.CUoccupancyB2DSize(_ptr=ctypes.cast(fn, ctypes.c_void_p).value)
got["by_address"] = [by_address.getPtr() == ctypes.cast(fn, ctypes.c_void_p).value,
                     list(cuda.cuOccupancyMaxPotentialBlockSize(0x4000, by_address.getPtr(), 0, 0)[1:])]
host = []
HOST = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def on_host(data):
    host.append(data)
host_fn = HOST(on_host)
err, = cuda.cuLaunchHostFunc(0, cuda.CUhostFn(ctypes.cast(host_fn, ctypes.c_void_p).value), 0x77)
got["host_instance"] = [int(err), host]
called = []
err, = cuda.cuLaunchHostFunc(0, lambda data: called.append(data), "payload")
got["host_callable"] = [int(err), called]
got["seen"] = seen
print(json.dumps(got))
"""


def test_an_instance_reaches_the_c_call_and_null_keeps_working(fake_driver):
    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", OCCUPANCY], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # The emulated driver calls the function with 256 and halves the block
    # when it asks for more than 48 KiB; without one, the block stays 256.
    assert got["instance"] == [132, 128] and got["ctypes"] == [132, 128]
    assert got["by_address"] == [True, [132, 128]]
    assert got["seen"] == [256, 256, 256]
    assert got["none"] == got["zero"] == got["null_instance"] == [132, 256]
    assert got["host_instance"] == [0, [0x77]]
    assert got["host_callable"] == [0, ["payload"]]   # a Python callable still goes through the trampoline


CUDA_CORE = """
import ctypes, json
import cubind.compat
cubind.compat.install()
from cuda.bindings import driver
import cuda, cuda.core.experimental
from cuda.core.experimental._module import KernelOccupancy
occupancy = KernelOccupancy._init(driver.CUfunction(0x4000))
result = occupancy.max_potential_block_size(0, 0)
seen = []
@ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
def need(block):
    seen.append(block)
    return block * 1024
# What cuda.core's users write; cuda.core passes its getPtr() to the driver.
b2d = driver.CUoccupancyB2DSize(_ptr=ctypes.cast(need, ctypes.c_void_p).value)
by_function = occupancy.max_potential_block_size(b2d, 0)
print(json.dumps([driver.CUoccupancyB2DSize is cuda.CUoccupancyB2DSize,
                  result.min_grid_size, result.max_block_size,
                  by_function.min_grid_size, by_function.max_block_size, seen]))
"""


@pytest.mark.skipif(cuda_core_missing("0.3.2") is not None, reason=str(cuda_core_missing("0.3.2")))
def test_cuda_core_imports_and_sizes_blocks_on_the_classic_modules(fake_driver):
    # cuda.core 0.3 names driver.CUoccupancyB2DSize at import (an annotation)
    # and in max_potential_block_size; an int goes through as NULL + bytes, a
    # CUoccupancyB2DSize(_ptr=function) as its getPtr(): the function.
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env.update(CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(*filter(None, [cuda_core_path(), ROOT])))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CUDA_CORE)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, 132, 256, 132, 128, [256]]
