"""Other libraries' arrays and streams in a launch, on a real GPU (each test
marked ``gpu``; cubind/_launch/args.py): a launch waits for the stream an
array's ``__cuda_array_interface__`` names and for a DLPack producer's, and
CuPy's and PyTorch's streams and arrays themselves. The stand-ins of their
shape, on every machine, are in test_launch_foreign.py.
"""

import pytest

import cubind
from tests.pythonic._core_fixtures import (  # noqa: F401  (fixtures)
    compiled_gpu_module,
    device_0,
    device_memory,
    own_cache_dir,
    spin_cycles,
)

np = pytest.importorskip("numpy")


@pytest.mark.gpu
def test_a_launch_waits_for_the_stream_of_an_interface(gpu_module, device, dmem):
    # CAI v3: the launch on `second` orders itself after the "stream" the
    # producer names; without it the copy reads src before `first` sets it.
    spin, set_int, copy_int = (gpu_module.get_kernel(n) for n in ("spin", "set_int", "copy_int"))
    src, dst = dmem(np.zeros(1, np.int32)), dmem(np.zeros(1, np.int32))

    class Produced:
        def __init__(self, ptr, stream):
            self.__cuda_array_interface__ = {"shape": (1,), "typestr": "<i4", "data": (int(ptr), False),
                                             "version": 3, "stream": int(stream.handle)}

    with cubind.Stream(non_blocking=True) as first, cubind.Stream(non_blocking=True) as second:
        for value in (7, 9):
            spin(1, 1, spin_cycles(device, 20), stream=first)
            set_int(1, 1, src, value, stream=first)
            copy_int(1, 1, Produced(src, first), dst, stream=second)
            second.synchronize()
            assert dmem.get(dst, np.zeros(1, np.int32))[0] == value


class _DLPackAlone:
    """An array seen through DLPack only (as a library without
    __cuda_array_interface__ offers its arrays)."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        if max_version is None:
            return self.array.__dlpack__(stream=stream)
        return self.array.__dlpack__(stream=stream, max_version=max_version)


@pytest.mark.gpu
def test_a_dlpack_argument_is_ordered_by_its_producer(gpu_module, device, dmem):
    # An object known by DLPack alone: the launch asks its producer (here a
    # cubind.Array of stream `first`) for a capsule with its own stream.
    spin, set_int, copy_int = (gpu_module.get_kernel(n) for n in ("spin", "set_int", "copy_int"))
    dst = dmem(np.zeros(1, np.int32))

    with cubind.Stream(non_blocking=True) as first, cubind.Stream(non_blocking=True) as second:
        src = cubind.empty(1, np.int32, stream=first)
        for value in (7, 9):
            spin(1, 1, spin_cycles(device, 20), stream=first)
            set_int(1, 1, src, value, stream=first)
            copy_int(1, 1, _DLPackAlone(src), dst, stream=second)
            second.synchronize()
            assert dmem.get(dst, np.zeros(1, np.int32))[0] == value


# -- other libraries' streams and arrays -------------------------------------------------


@pytest.mark.gpu
@pytest.mark.foreign_allocator
def test_cupy_streams_and_arrays(gpu_module):
    cupy = pytest.importorskip("cupy")
    saxpy = gpu_module.get_kernel("saxpy")
    n = 10_000
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.ones(n, dtype=cupy.float32)
    out = cupy.empty(n, dtype=cupy.float32)
    theirs = cupy.cuda.Stream(non_blocking=True)
    saxpy((n + 255) // 256, 256, 2.0, x, y, out, n, stream=theirs)
    theirs.synchronize()
    assert cupy.allclose(out, 2 * x + y)
    with cubind.Stream() as ours:
        external = cupy.cuda.ExternalStream(int(ours))
        with external:
            z = out * 2
        saxpy((n + 255) // 256, 256, 1.0, z, y, out, n, stream=ours)
        ours.synchronize()
    assert cupy.allclose(out, 4 * x + 3)
    wrapped = cubind.Stream.from_handle(theirs)
    assert int(wrapped) == theirs.ptr and not wrapped.owned


@pytest.mark.gpu
@pytest.mark.foreign_allocator
def test_torch_streams_and_tensors(gpu_module):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA")
    saxpy = gpu_module.get_kernel("saxpy")
    n = 10_000
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.ones(n, dtype=torch.float32, device="cuda")
    out = torch.empty(n, dtype=torch.float32, device="cuda")
    theirs = torch.cuda.Stream()
    saxpy((n + 255) // 256, 256, 2.0, x, y, out, n, stream=theirs)
    theirs.synchronize()
    assert torch.allclose(out, 2 * x + y)
    with cubind.Stream() as ours:
        external = torch.cuda.ExternalStream(int(ours))
        with torch.cuda.stream(external):
            z = out * 2
        saxpy((n + 255) // 256, 256, 1.0, z, y, out, n, stream=ours)
        ours.synchronize()
    assert torch.allclose(out, 4 * x + 3)
    with pytest.raises(TypeError, match="host memory"):
        saxpy(1, 1, 1.0, x.cpu().numpy(), y, out, n)
    # Tensors are read by data_ptr() (a view's address includes its offset);
    # a CPU tensor is refused as its __cuda_array_interface__ refuses it.
    with pytest.raises(TypeError, match="not device memory"):
        saxpy(1, 1, 1.0, x.cpu(), y, out, n)
    saxpy((n + 255) // 256, 256, 1.0, x[1:], x[:-1], out[1:], n - 1)
    torch.cuda.synchronize()
    assert torch.equal(out[1:], x[1:] + x[:-1])
    # The same views known by DLPack alone: a capsule per argument, asked with
    # our stream; its byte offset, if any, is added to its data pointer.
    with cubind.Stream() as ours:
        saxpy((n + 255) // 256, 256, 2.0, _DLPackAlone(x[1:]), _DLPackAlone(y[1:]), _DLPackAlone(out[1:]), n - 1,
              stream=ours)
        ours.synchronize()
    assert torch.equal(out[1:], 2 * x[1:] + 1)
    with pytest.raises(TypeError, match="not device memory .*DLPack device type is 1, not CUDA"):
        saxpy(1, 1, 1.0, _DLPackAlone(x.cpu()), y, out, n)
