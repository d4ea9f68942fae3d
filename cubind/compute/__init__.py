"""cubind.compute: Kompute's Manager, Tensor, Algorithm and Sequence on CUDA
graphs. Record once, evaluate many: a recorded sequence is one CUDA graph,
instantiated once; each evaluation is one graph launch; new push constants
update the instantiated graph's kernel nodes in place.

    from cubind import compute as kp

    mgr = kp.Manager()
    a, b, out = mgr.tensor([2, 2, 2]), mgr.tensor([1, 2, 3]), mgr.tensor([0, 0, 0])
    algo = mgr.algorithm([a, b, out], MULTIPLY)   # CUDA C++ source
    (mgr.sequence()
        .record(kp.OpTensorSyncDevice([a, b]))
        .record(kp.OpAlgoDispatch(algo))
        .record(kp.OpTensorSyncLocal([out]))
        .eval())
    assert list(out.data()) == [2, 4, 6]

Built on cubind's public objects and the 1:1 ``cuda`` module only;
``docs/compute.md`` describes it and what differs from Kompute.
"""

from .algorithm import Algorithm
from .manager import Manager
from .ops import OpAlgoDispatch, OpBase, OpMemoryBarrier, OpTensorCopy, OpTensorSyncDevice, OpTensorSyncLocal
from .sequence import Sequence
from .tensor import Tensor, TensorTypes

__all__ = [
    "Manager", "Tensor", "TensorTypes", "Algorithm", "Sequence",
    "OpBase", "OpTensorSyncDevice", "OpTensorSyncLocal", "OpTensorCopy", "OpMemoryBarrier", "OpAlgoDispatch",
]
