"""Device tensors crossing an edge: the producer's work is ordered before the
consumer's by an event, never by a host synchronisation, and a tensor on
another device than the consumer's entity is copied there.

Inside a codelet's phase its pool stream is cubind's current stream (``with
stream:``), so the event is recorded where the producer queued its work and
the wait is queued where the consumer will queue its own."""

import collections
import weakref

import cubind

# Ready events are pooled per producer stream: making and destroying one per
# message (cuEventCreate, its finalizer, cuEventDestroy) was most of what a
# device tensor's edge cost. An event goes back to its stream's pool when no
# message refers to it any more; every wait issued on it is then queued, and
# a wait is a snapshot of the event's last record (cuStreamWaitEvent), so
# recording it again for a later message moves none of them.
_pools: "weakref.WeakKeyDictionary[cubind.Stream, collections.deque]" = weakref.WeakKeyDictionary()


class ReadyEvent:
    """A message's ready event (``message.ready_event``): the pooled
    :class:`cubind.Event` (``event``), returned to its pool when collected."""

    __slots__ = ("event", "_pool")

    def __init__(self, event, pool):
        self.event, self._pool = event, pool

    @property
    def handle(self):
        return self.event.handle

    def synchronize(self):
        self.event.synchronize()

    def query(self):
        return self.event.query()

    def __del__(self):
        self._pool.append(self.event)  # deque.append: one step, safe from any thread


def record_ready(message):
    """At publish: an event after the producer's queued work (its current
    stream, else the current device's default stream)."""
    stream = cubind.current_stream()
    if stream is None:  # the default stream: no pool (none is kept per context)
        message.ready_event = cubind.Event(timing=False).record(None)
        return
    pool = _pools.get(stream)
    if pool is None:
        pool = _pools.setdefault(stream, collections.deque())
    while True:
        try:
            event = pool.pop()
        except IndexError:
            event = cubind.Event(timing=False)
        try:
            event.record(stream)
            break
        except ValueError:  # its context was reset (Device.reset()): the event is gone, take another
            continue
    message.ready_event = ReadyEvent(event, pool)


def _consumer_stream():
    stream = cubind.current_stream()
    if stream is None:
        cubind.ensure_context()
        stream = cubind.Device().default_stream
    return stream


def await_ready(message, device):
    """At receive: the consumer's stream waits for the producer's event; the
    device tensors not on ``device`` (the entity's ordinal, None: any) are
    copied to it on that stream (peer to peer where the driver allows it). A
    message reaching several receivers is shared, so a copy goes into a
    shallow copy of the message. Returns the message the consumer gets."""
    stream = _consumer_stream()
    if message.ready_event is not None:
        ready = message.ready_event
        stream.wait(ready.event if isinstance(ready, ReadyEvent) else ready)
    tensors = message.tensors()
    for tensor in tensors.values():
        if tensor.is_device:
            # Its memory is freed in its producer's stream order: without this the
            # producer's next allocation could take it while this consumer's work
            # still reads it (a GPU run showed 198 of 200 results overwritten).
            tensor.data.record_stream(stream)
    if device is None:
        return message
    moved = None
    for name, tensor in tensors.items():
        if tensor.is_device and tensor.data.device_ordinal != device:
            moved = moved or message.copy()
            moved.replace(name, type(tensor)(name, _copy_to(tensor.data, device, stream)))
    return moved or message


def _copy_to(array, device, stream):
    with cubind.Device(device):
        out = cubind.empty(array.shape, array.dtype, stream=stream)
        out.copy_from(array, stream=stream)
    return out
