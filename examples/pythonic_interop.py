#!/usr/bin/env python3
"""CuPy and PyTorch sharing GPU memory with cubind, each way, with no copy.

cubind arrays go to CuPy through ``__cuda_array_interface__`` and DLPack and
to PyTorch through DLPack and ``__cuda_array_interface__``; their arrays come
back through ``cubind.from_dlpack``. Each exchange checks that both sides see
the same device address and that a write on one side is read on the other.
A library that is not installed (or has no GPU support) is skipped with the
reason; without a GPU the example says so and exits 0.

    python examples/pythonic_interop.py
"""

import importlib

import numpy as np
from _driver_common import exit_with, open_gpu

import cubind


def _load(name):
    """The module, or None after printing why it is skipped."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        print(f"{name}: skipped ({exc})")
        return None


def _same(what, ours, theirs):
    if ours != theirs:
        print(f"{what}: cubind's address 0x{ours:x}, theirs 0x{theirs:x}: a copy was made")
        return False
    return True


def with_cupy(cp):
    a = cubind.to_gpu(np.arange(12, dtype=np.float32).reshape(3, 4))
    c = cp.asarray(a)  # __cuda_array_interface__: no copy
    d = cp.from_dlpack(a[:, ::2])  # DLPack, a strided view
    good = _same("cubind -> CuPy (CAI)", a.ptr, c.data.ptr) and _same("cubind -> CuPy (DLPack)", a.ptr, d.data.ptr)
    c *= 2  # written by CuPy ...
    good &= bool((a.get() == np.arange(12).reshape(3, 4) * 2).all())  # ... read by cubind

    x = cp.arange(10, dtype=cp.int32)
    b = cubind.from_dlpack(x)  # CuPy -> cubind
    good &= _same("CuPy -> cubind (DLPack)", b.ptr, x.data.ptr)
    b[::2].fill(-1)  # written by cubind, read by CuPy
    good &= x.get().tolist() == [-1, 1, -1, 3, -1, 5, -1, 7, -1, 9]
    print(f"CuPy {cp.__version__}: both ways, no copy: {'ok' if good else 'FAILED'}")
    del a, b, c, d, x
    cp.get_default_memory_pool().free_all_blocks()  # CuPy's pool keeps freed blocks to the end otherwise
    return good


def with_torch(torch):
    if not torch.cuda.is_available():
        print(f"torch {torch.__version__}: skipped (built without CUDA or no GPU visible to it)")
        return True
    a = cubind.to_gpu(np.arange(6, dtype=np.float32))
    t = torch.from_dlpack(a)  # DLPack: no copy
    u = torch.as_tensor(a, device="cuda")  # __cuda_array_interface__
    good = _same("cubind -> torch (DLPack)", a.ptr, t.data_ptr()) and _same("cubind -> torch (CAI)", a.ptr,
                                                                              u.data_ptr())
    t.add_(10)  # written by torch, read by cubind
    good &= bool((a.get() == np.arange(6) + 10).all())

    x = torch.zeros(2, 3, dtype=torch.float64, device="cuda")
    b = cubind.from_dlpack(x.t())  # torch -> cubind, a transposed view
    good &= _same("torch -> cubind (DLPack)", b.ptr, x.data_ptr()) and b.strides == (8, 24)
    b[1].fill(3.5)  # written by cubind, read by torch
    good &= x[:, 1].tolist() == [3.5, 3.5] and x[:, 0].tolist() == [0.0, 0.0]
    print(f"torch {torch.__version__}: both ways, no copy: {'ok' if good else 'FAILED'}")
    del a, b, t, u, x
    torch.cuda.empty_cache()  # as CuPy's pool: the caching allocator gives its blocks back only when asked
    return good


def main():
    open_gpu()  # raises NoGPU, which exit_with reports, where there is none
    good = True
    for name, exchange in (("cupy", with_cupy), ("torch", with_torch)):
        module = _load(name)
        if module is not None:
            good &= exchange(module)
    return good


if __name__ == "__main__":
    exit_with(main)
