"""Algorithm: a kernel bound to tensors, with specialisation and push
constants, in Kompute's terms.

How an algorithm's values reach the kernel's parameters: the tensors first,
in order, each as its device address (a pointer parameter), then the push
constants, in order, each converted to its parameter's own type as the
kernel's PTX declares it (a Python float to a ``float`` is a float32, to a
``double`` a float64; an int to any integer width, range-checked). So::

    extern "C" __global__ void k(const float *a, float *out, float scale, unsigned n)

takes ``mgr.algorithm([a, out], SRC, push_consts=[2.0, 16])``. The number of
push constants is the kernel's parameter count less the tensors'.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

import cubind

from .specialize import defines
from .tensor import Tensor

if TYPE_CHECKING:
    from typing import Any

    from .tensor import _Number, _Values

log = logging.getLogger("cubind.compute")


class Algorithm:
    """One algorithm of a :class:`Manager` (``mgr.algorithm(...)``)."""

    def __init__(self, manager, tensors, kernel, workgroup=None, spec_consts=None, push_consts=None, *,
                 block=None, entry=None):
        self._manager = manager
        self._tensors = manager._own_tensors(tensors, "tensors")
        if not self._tensors:
            raise ValueError("tensors: an algorithm needs at least one tensor")
        self._spec_consts = spec_consts
        with manager.device:
            self._kernel = _resolve_kernel(manager, kernel, spec_consts, entry)
            self._check_tensor_params()
            self._push = self._checked_push(push_consts, "push_consts", initial=True)
            self._grid, self._block = _launch_shape(self._kernel, self._tensors[0].size(), workgroup, block)
        self._lock = threading.Lock()
        self._users = weakref.WeakSet()  # sequences to tell of push-constant changes and destruction
        self._destroyed = False
        log.debug("algorithm %s on %d tensors: grid %s, block %s, %d push constants", self._kernel.name,
                  len(self._tensors), self._grid, self._block, len(self._push))

    # -- what it is ------------------------------------------------------------------

    @property
    def kernel(self) -> cubind.Kernel:
        return self._kernel

    @property
    def workgroup(self) -> tuple[int, int, int]:
        """The grid, in blocks (Kompute's workgroup count)."""
        return self._grid

    @property
    def block(self) -> tuple[int, int, int]:
        """Threads per block (Kompute's local size, which GLSL puts in the shader)."""
        return self._block

    def get_tensors(self) -> list[Tensor]:
        return list(self._tensors)

    def get_spec_consts(self) -> Any:
        return self._spec_consts

    def get_push_consts(self) -> list[_Number]:
        return list(self._push)

    def is_init(self) -> bool:
        return not self._destroyed

    def __repr__(self):
        state = " (destroyed)" if self._destroyed else ""
        return f"<cubind.compute.Algorithm {self._kernel.name} on {len(self._tensors)} tensors{state}>"

    # -- push constants -----------------------------------------------------------------

    @property
    def push_count(self) -> int:
        return len(self._kernel.params) - len(self._tensors)

    def set_push_constants(self, push_consts: _Values) -> None:
        """New default push constants: every sequence that dispatches this
        algorithm without its own takes them at its next evaluation, by
        updating its graph's kernel node in place (no re-recording)."""
        self._check_alive("algorithm")
        values = self._checked_push(push_consts, "push_consts")
        with self._lock:
            self._push = values
            users = list(self._users)
        for sequence in users:
            sequence._push_changed(self)

    def _checked_push(self, push_consts, what, initial=False):
        """``push_consts`` as a tuple, checked by packing them as the kernel's
        parameters: count, then each value's type and range."""
        count = self.push_count
        if push_consts is None:
            if initial and count:
                raise ValueError(f"{what}: {self._describe_push()}; give their initial values")
            return () if initial else None
        if isinstance(push_consts, np.ndarray):
            push_consts = [v for v in push_consts.reshape(-1)]
        if not isinstance(push_consts, (list, tuple)):
            raise TypeError(f"{what}: expected a list of numbers, not {type(push_consts).__name__}")
        if len(push_consts) != count:
            raise ValueError(f"{what}: {self._describe_push()}, got {len(push_consts)} values")
        for i, value in enumerate(push_consts):
            if not isinstance(value, (int, float, np.number, np.bool_)):
                raise TypeError(f"{what}[{i}]: expected a number, not {type(value).__name__}")
        values = tuple(push_consts)
        self._pack(values)  # raises the kernel's TypeError/OverflowError naming the parameter
        return values

    def _describe_push(self):
        params = self._kernel.params[len(self._tensors):]
        types = ", ".join(p.text for p in params)
        return (f"kernel {self._kernel.name} takes {len(params)} push constants after its "
                f"{len(self._tensors)} tensors" + (f" ({types})" if params else ""))

    def _kernel_args(self, push):
        """The kernel's arguments: the tensors' device addresses, then ``push``."""
        return (*(t.device_ptr for t in self._tensors), *push)

    def _pack(self, push):
        """Every parameter's bytes: the tensors' device addresses, then ``push``."""
        return self._kernel.plan.pack_bytes(*(t.device_ptr for t in self._tensors), *push)

    def _check_tensor_params(self):
        params = self._kernel.params
        if len(params) < len(self._tensors):
            raise ValueError(f"tensors: kernel {self._kernel.name} takes {len(params)} parameters, fewer than the "
                             f"{len(self._tensors)} tensors")
        for i, param in enumerate(params[:len(self._tensors)]):
            if not param.takes_address:
                raise TypeError(f"tensors[{i}]: kernel {self._kernel.name}'s parameter {i} ({param.text}) is not a "
                                f"pointer; tensors come first, as pointers, then the push constants")

    # -- release ---------------------------------------------------------------------------

    def _check_alive(self, what):
        if self._destroyed:
            raise ValueError(f"{what}: the algorithm was destroyed (Algorithm.destroy() or Manager.destroy())")

    def destroy(self) -> None:
        """Sequences that recorded a dispatch of it refuse to evaluate afterwards."""
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            users = list(self._users)
        for sequence in users:
            sequence._invalidate(f"an algorithm it dispatches was destroyed ({self!r})")
        log.debug("algorithm %s destroyed", self._kernel.name)


def _resolve_kernel(manager, kernel, spec_consts, entry):
    """A cubind.Kernel from source, a Program, a Module or a Kernel."""
    if isinstance(kernel, (str, bytes)):
        kernel = cubind.Program(kernel, name="algorithm.cu")
    if isinstance(kernel, cubind.Program):
        return _pick(manager.compile_cache.module(kernel, defines(spec_consts)), entry)
    if spec_consts is not None:
        raise ValueError("spec_consts: compiled code cannot take specialisation constants; "
                         "give the CUDA C++ source or a cubind.Program")
    if isinstance(kernel, cubind.Module):
        return _pick(kernel, entry)
    if isinstance(kernel, cubind.Kernel):
        if entry is not None:
            raise ValueError("entry: a cubind.Kernel is already one kernel")
        return kernel
    raise TypeError(f"kernel: expected CUDA C++ source, a cubind.Program, Module or Kernel, "
                    f"not {type(kernel).__name__}")


def _pick(module, entry):
    if entry is not None:
        return module.get_kernel(entry)
    names = sorted(module.entries)
    if len(names) != 1:
        raise ValueError(f"entry: the module has {len(names)} kernels ({', '.join(names) or 'none'}); "
                         f"name the one to run with entry=")
    return module.get_kernel(names[0])


def _dims(value, what):
    values = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(values) <= 3:
        raise ValueError(f"{what}: expected 1 to 3 dimensions, got {len(values)}")
    for i, v in enumerate(values):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{what}[{i}]: expected an int, not {type(v).__name__}")
        if v < 1:
            raise ValueError(f"{what}[{i}]: each dimension must be at least 1, got {v}")
    return tuple(int(v) for v in values) + (1,) * (3 - len(values))


def _launch_shape(kernel, size, workgroup, block):
    """(grid, block). Given a workgroup, it is the grid and a block defaults
    to one thread (GLSL's default local size). Without one, exactly ``size``
    threads run: the block is the largest divisor of ``size`` not above the
    kernel's suggested block size, so a kernel written for Kompute (one
    thread per element, no bounds check) is right as it is; with ``block``
    alone, the grid covers ``size`` rounded up (the kernel checks bounds)."""
    if workgroup is not None:
        return _dims(workgroup, "workgroup"), _dims(block, "block") if block is not None else (1, 1, 1)
    if block is not None:
        block = _dims(block, "block")
        return (-(-size // block[0]), 1, 1), block
    suggested = kernel.suggested_block_size()[1] or 256
    threads = next(d for d in range(min(suggested, size), 0, -1) if size % d == 0)
    return (size // threads, 1, 1), (threads, 1, 1)


def check_tensor(tensor, manager, what):
    """``tensor`` if it is a live tensor of ``manager``."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: expected a cubind.compute.Tensor, not {type(tensor).__name__}")
    if tensor.manager is not manager:
        raise ValueError(f"{what}: the tensor belongs to another Manager")
    tensor._check_alive(what)
    return tensor
