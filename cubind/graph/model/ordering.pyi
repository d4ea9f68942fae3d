"""Types of cubind/graph/model/ordering.pyx: device tensors ordered across an edge, compiled."""

import collections

import cubind

from .message import Message

class ReadyEvent:
    """A message's ready event: the pooled event, returned to its stream's pool when collected
    (None: ready at publish, ``READY``)."""
    @property
    def event(self) -> cubind.Event | None: ...
    @property
    def handle(self) -> object: ...
    def __init__(self, event: cubind.Event | None, pool: collections.deque[cubind.Event] | None) -> None: ...
    def synchronize(self) -> None: ...
    def query(self) -> bool: ...

READY: ReadyEvent

def publish_order(message: Message) -> None:
    """At publish: a ready event where the message carries device tensors."""

def record_ready(message: Message) -> None:
    """At publish: an event after the producer's queued work."""

def await_ready(message: Message, device: int | None) -> Message:
    """At receive: the consumer's stream waits for the producer's event; returns the message the consumer gets."""
