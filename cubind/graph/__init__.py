"""cubind.graph: GXF's Python codelets on cubind. Codelets with ``start()``,
``tick()`` and ``stop()`` in entities, wired by double-buffer queues,
ticked by a greedy or multi-thread scheduler as their scheduling terms
allow, passing messages of host (numpy) and device (``cubind.Array``)
tensors; device tensors cross an edge ordered by an event, never a host
synchronisation. An app is YAML in GXF's shape (``python -m cubind.graph
app.yaml``) or built in Python:

    from cubind import graph as gx

    class PingTx(gx.Codelet):
        def tick(self):
            self.tx("signal").publish(gx.Message())

    g = gx.Graph()
    tx = g.entity("tx")
    out = tx.add(gx.DoubleBufferTransmitter(capacity=1), "signal")
    tx.add(gx.CountSchedulingTerm(count=10))
    tx.add(PingTx(), "ping")
    ...
    g.connect(out, "rx/signal")
    g.run()

Across processes, GXF's ``UcxContext``, ``UcxTransmitter`` and
``UcxReceiver`` carry messages over UCX (RAPIDS' ucxx, ``cubind[ucx]``).

Built on ``import cubind``'s public objects only (and the 1:1 ``cuda``
module for pinned host memory); ``docs/graph.md`` maps GXF's concepts to it.
"""

from .apps.loader import load, loads
from .model.clock import Clock, ManualClock, RealtimeClock
from .model.codelet import Codelet
from .model.component import Component
from .model.entity import Entity
from .model.errors import CodeletError, GraphError, ParameterError
from .model.message import Message, Tensor, TensorDescription, Timestamp
from .model.parameters import Parameter, Ref
from .model.queues import DoubleBufferReceiver, DoubleBufferTransmitter, QueueFullError, Receiver, Transmitter
from .model.resources import Allocator, BlockMemoryPool, CudaStreamPool, UnboundedAllocator
from .scheduling.graph import Connection, Graph
from .scheduling.resident import GPUResidentChain, ResidentChain
from .scheduling.scheduler import GreedyScheduler, MultiThreadScheduler, RunResult, Scheduler
from .scheduling.terms import (
    BooleanSchedulingTerm,
    CountSchedulingTerm,
    DownstreamReceptiveSchedulingTerm,
    MessageAvailableSchedulingTerm,
    PeriodicSchedulingTerm,
    SchedulingTerm,
    TargetTimeSchedulingTerm,
)
from .ucx.components import (
    UcxComponentSerializer,
    UcxContext,
    UcxEntitySerializer,
    UcxError,
    UcxReceiver,
    UcxSerializationBuffer,
    UcxTransmitter,
)

__all__ = [
    "Graph", "Entity", "Component", "Connection", "Codelet", "Parameter", "Ref",
    "Message", "Tensor", "TensorDescription", "Timestamp",
    "Receiver", "Transmitter", "DoubleBufferReceiver", "DoubleBufferTransmitter", "QueueFullError",
    "Allocator", "UnboundedAllocator", "BlockMemoryPool", "CudaStreamPool",
    "Clock", "RealtimeClock", "ManualClock",
    "SchedulingTerm", "CountSchedulingTerm", "PeriodicSchedulingTerm", "BooleanSchedulingTerm",
    "MessageAvailableSchedulingTerm", "DownstreamReceptiveSchedulingTerm", "TargetTimeSchedulingTerm",
    "Scheduler", "GreedyScheduler", "MultiThreadScheduler", "RunResult", "ResidentChain", "GPUResidentChain",
    "GraphError", "ParameterError", "CodeletError",
    "UcxContext", "UcxReceiver", "UcxTransmitter", "UcxSerializationBuffer", "UcxEntitySerializer",
    "UcxComponentSerializer", "UcxError",
    "load", "loads",
]
