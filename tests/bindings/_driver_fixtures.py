"""The GPU fixtures of the driver package's tests (tests/bindings/test_driver*.py):
``cuda`` (the driver with device 0's primary context current), the
``kernel`` and ``pinned`` factories. A test file imports the fixture
functions (pytest finds them by the names they register)."""

import ctypes

import numpy as np
import pytest

from tests._helpers import ok


@pytest.fixture(name="cuda")
def cuda_in_context(driver, cu_context):
    """The driver module with device 0's primary context current (the module-level ``cuda`` is the same module)."""
    return driver


@pytest.fixture(name="kernel")
def kernel_factory(cuda, load_module):
    """Factory: compile + load ``src``, return its function ``name`` (a CUfunction)."""

    def get(src, name, kind="PTX"):
        return ok(cuda.cuModuleGetFunction, load_module(src, kind), name.encode())

    return get


@pytest.fixture(name="pinned")
def pinned_memory(cuda):
    """Factory: page-locked host memory (cuMemAllocHost) as a numpy array; freed at teardown."""
    allocations = []

    def alloc(count, dtype=np.uint8):
        nbytes = count * np.dtype(dtype).itemsize
        address = int(ok(cuda.cuMemAllocHost, nbytes))
        allocations.append(address)
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address)).view(dtype)

    yield alloc
    cuda.cuCtxSynchronize()
    for address in allocations:
        cuda.cuMemFreeHost(address)
