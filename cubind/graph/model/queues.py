"""Double-buffer receivers and transmitters, as GXF's: a message published
during a tick waits in the transmitter's back stage; after the tick the
scheduler hands it to each connected receiver's back stage; before the
receiving entity's tick its back stage moves to its main stage, which
``receive()`` reads. ``capacity`` bounds a queue (main and back stages
together); ``policy`` says what a full one does with one more message:
0 drops the oldest, 1 rejects the new one, 2 raises (GXF's default).

The stages and their lock are compiled (buffer.pyx's MessageBuffer): the
scheduler's loop moves messages between them on every tick without a
Python call. A codelet publishes and receives on its worker thread while the
scheduler moves messages on another."""

from . import ordering
from .buffer import MessageBuffer
from .component import Component
from .errors import GraphError, ParameterError
from .message import Message
from .parameters import Parameter

POP, REJECT, FAULT = 0, 1, 2


class QueueFullError(GraphError):
    """A message reached a full queue whose policy is 2 (fault)."""


class _Queue(Component):
    capacity = Parameter(int, 1, "messages the queue holds (both stages)")
    policy = Parameter(int, FAULT, "when full: 0 drop the oldest, 1 reject the new one, 2 raise")

    def on_bind(self):
        if self.capacity < 1:
            raise ParameterError(f"{self.path}/capacity: must be at least 1, got {self.capacity}")
        if self.policy not in (POP, REJECT, FAULT):
            raise ParameterError(f"{self.path}/policy: must be 0 (pop), 1 (reject) or 2 (fault), got {self.policy}")
        self.stages = MessageBuffer(self.capacity, self.policy)

    @property
    def dropped(self):
        """Messages the policy dropped (0 or 1) since the start."""
        return self.stages.dropped

    def size(self):
        """Messages in the main stage (what ``receive`` can read now)."""
        return self.stages.size()

    def back_size(self):
        return self.stages.back_size()

    def free(self):
        """Room left, both stages counted."""
        return self.stages.free()

    def _push(self, message):
        """Into the back stage, by the policy."""
        if self.stages.push(message) == 2:
            raise self.full_error()

    def full_error(self):
        return QueueFullError(f"{self.path}: queue full (capacity {self.capacity}, policy 2: fault); raise its "
                              f"capacity, pick policy 0 or 1, or add a DownstreamReceptiveSchedulingTerm to the "
                              f"producer")


class Receiver(_Queue):
    """Where messages arrive."""

    def receive(self):
        """The oldest message of the main stage, or None. Its device tensors
        are ordered after their producer's work on this codelet's stream."""
        message = self.stages.pop()
        if message is not None and message.ready_event is not None:
            message = ordering.await_ready(message, self.entity.device)
        return message

    def sync(self):
        """Back stage to main stage (before the entity ticks)."""
        self.stages.sync_in()

    def deliver(self, message):
        self._push(message)

    def put_next(self, message):
        """Into the main stage, to be received next, whatever the capacity
        and policy: a GPU-resident chain hands each of its entities the
        message it ticks on this way (scheduling/resident.py)."""
        self.stages.put_front(message)


class DoubleBufferReceiver(Receiver, gxf_type="DoubleBufferReceiver"):
    pass


class Transmitter(_Queue):
    """Where messages leave; connected to receivers by the graph."""

    def on_bind(self):
        super().on_bind()
        self.targets = []

    def publish(self, message):
        """Queues ``message``: its ``Timestamp`` gets the clock's ``pubtime``
        where it has none, and device tensors an event after the work queued
        so far on this codelet's stream."""
        self._publish(message)

    def _publish(self, message):
        """``publish``'s steps; whether it stamped ``pubtime`` (a UcxTransmitter's header then changed)."""
        if not isinstance(message, Message):
            raise TypeError(f"message: expected a cubind.graph Message, not {type(message).__name__}")
        stamp = message._components.get("timestamp")  # message.timestamp(), without its call
        stamped = stamp is not None and getattr(stamp, "pubtime", 0) is None
        if stamped:
            stamp.pubtime = self.entity.graph.clock.timestamp()
        ordering.publish_order(message)
        if self.stages.push(message) == 2:  # _push's step, without its call: every message publishes
            raise self.full_error()
        return stamped

    def sync(self):
        """Takes the messages published (after the entity's tick)."""
        return self.stages.take_all()


class DoubleBufferTransmitter(Transmitter, gxf_type="DoubleBufferTransmitter"):
    pass
