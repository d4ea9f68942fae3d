"""The operations a sequence records, in Kompute's names. Each adds its
nodes to the sequence's graph when recorded (``_record``); none runs
anything by itself.

What each tensor type contributes: a device tensor has device memory and a
host mirror, copied by the sync operations; a host tensor's one memory is
both (the sync operations add nothing for it); a storage tensor has device
memory only (the sync operations refuse it).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from .algorithm import Algorithm, check_tensor
from .tensor import TensorTypes

if TYPE_CHECKING:
    from collections.abc import Sequence as _Seq
    from typing import Any

    from .sequence import Sequence
    from .tensor import Tensor, _Number, _Values


class OpBase:
    """An operation; subclasses say which tensors it uses and add its nodes."""

    def tensors(self) -> list[Tensor]:
        return []

    def _record(self, sequence, graph):
        raise NotImplementedError

    def __repr__(self):
        return f"<cubind.compute.{type(self).__name__} on {len(self.tensors())} tensors>"


def _tensor_list(tensors, op):
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    raise TypeError(f"{op}: expected a list of tensors, not {type(tensors).__name__}")


def _device_side(tensor):
    """(address, on host) of what kernels see."""
    if tensor.tensor_type() is TensorTypes.host:
        return tensor.host_ptr, True
    return tensor.device_ptr, False


def _host_data(tensor):
    """The host data's address, or None (storage tensors)."""
    return tensor.host_ptr


class OpTensorSyncDevice(OpBase):
    """Host data -> device memory, for each tensor."""

    def __init__(self, tensors: _Seq[Tensor]) -> None:
        self._tensors = _tensor_list(tensors, "OpTensorSyncDevice")

    def tensors(self):
        return list(self._tensors)

    def _record(self, sequence, graph):
        for i, tensor in enumerate(self._tensors):
            _no_storage(tensor, f"OpTensorSyncDevice: tensors[{i}]")
            if tensor.tensor_type() is TensorTypes.device:
                graph.add_copy([tensor], tensor.host_ptr, True, tensor.device_ptr, False, tensor.nbytes)


class OpTensorSyncLocal(OpBase):
    """Device memory -> host data, for each tensor (read it after the evaluation)."""

    def __init__(self, tensors: _Seq[Tensor]) -> None:
        self._tensors = _tensor_list(tensors, "OpTensorSyncLocal")

    def tensors(self):
        return list(self._tensors)

    def _record(self, sequence, graph):
        for i, tensor in enumerate(self._tensors):
            _no_storage(tensor, f"OpTensorSyncLocal: tensors[{i}]")
            if tensor.tensor_type() is TensorTypes.device:
                graph.add_copy([tensor], tensor.device_ptr, False, tensor.host_ptr, True, tensor.nbytes)


def _no_storage(tensor, what):
    if tensor.tensor_type() is TensorTypes.storage:
        raise ValueError(f"{what}: a storage tensor has no host data to sync")


class OpTensorCopy(OpBase):
    """The first tensor's data into each of the others (same byte size): the
    device data, and the host data where both have some, as Kompute's does."""

    def __init__(self, tensors: _Seq[Tensor]) -> None:
        self._tensors = _tensor_list(tensors, "OpTensorCopy")
        if len(self._tensors) < 2:
            raise ValueError("OpTensorCopy: tensors needs a source and at least one destination")

    def tensors(self):
        return list(self._tensors)

    def _record(self, sequence, graph):
        src = self._tensors[0]
        for i, dst in enumerate(self._tensors[1:], 1):
            if dst.nbytes != src.nbytes:
                raise ValueError(f"OpTensorCopy: tensors[{i}] has {dst.nbytes} bytes, the source {src.nbytes}")
            graph.add_copy([src, dst], *_device_side(src), *_device_side(dst), src.nbytes)
            if dst.tensor_type() is TensorTypes.device and _host_data(src) is not None:
                sequence._post_copies.append((src, dst))  # after the evaluation, as Kompute's postEval


class OpMemoryBarrier(OpBase):
    """Later operations wait for earlier ones: on ``tensors``, or on all
    of them when ``tensors`` is empty or None. Kompute's Vulkan access and
    stage masks have no CUDA meaning (a graph edge orders all memory) and
    are accepted and ignored."""

    def __init__(self, tensors: _Seq[Tensor] | None = None, *vulkan_masks: Any, **vulkan_options: Any) -> None:
        self._tensors = [] if tensors is None else _tensor_list(tensors, "OpMemoryBarrier")

    def tensors(self):
        return list(self._tensors)

    def _record(self, sequence, graph):
        graph.add_barrier(self._tensors)


class OpAlgoDispatch(OpBase):
    """Runs an algorithm; ``push_consts`` (optional) override the
    algorithm's own for this dispatch."""

    def __init__(self, algorithm: Algorithm, push_consts: _Values | None = None) -> None:
        if not isinstance(algorithm, Algorithm):
            raise TypeError(f"OpAlgoDispatch: algorithm: expected a cubind.compute.Algorithm, "
                            f"not {type(algorithm).__name__}")
        algorithm._check_alive("OpAlgoDispatch")
        self._algorithm = algorithm
        self._push = algorithm._checked_push(push_consts, "push_consts")
        self._lock = threading.Lock()
        self._users: weakref.WeakSet[Sequence] = weakref.WeakSet()

    @property
    def algorithm(self) -> Algorithm:
        return self._algorithm

    def tensors(self):
        return self._algorithm.get_tensors()

    def push_consts(self) -> tuple[_Number, ...]:
        """The push constants this dispatch uses now."""
        with self._lock:
            own = self._push
        return own if own is not None else tuple(self._algorithm.get_push_consts())

    def set_push_constants(self, push_consts: _Values | None) -> None:
        """New push constants for this dispatch (None: the algorithm's): the
        sequences that recorded it update their graph's node at their next
        evaluation, without recording again."""
        self._algorithm._check_alive("OpAlgoDispatch")
        values = self._algorithm._checked_push(push_consts, "push_consts")
        with self._lock:
            self._push = values
            users = list(self._users)
        for sequence in users:
            sequence._push_changed(self)

    def _record(self, sequence, graph):
        algorithm = self._algorithm
        algorithm._check_alive("OpAlgoDispatch")
        if algorithm._manager is not sequence.manager:
            raise ValueError("OpAlgoDispatch: the algorithm belongs to another Manager")
        push = self.push_consts()
        graph.add_kernel(algorithm.get_tensors(), self, algorithm, push)


def check_op_tensors(op, manager):
    """Every tensor of ``op`` is a live tensor of ``manager``."""
    for i, tensor in enumerate(op.tensors()):
        check_tensor(tensor, manager, f"{type(op).__name__}: tensors[{i}]")
