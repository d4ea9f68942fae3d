# cython: language_level=3
"""Device tensors crossing an edge: the producer's work is ordered before the
consumer's by an event, never by a host synchronisation, and a tensor on
another device than the consumer's entity is copied there.

Inside a codelet's phase its pool stream is cubind's current stream (``with
stream:``), so the event is recorded where the producer queued its work and
the wait is queued where the consumer will queue its own.

Compiled: every device message runs :func:`publish_order` once and
:func:`await_ready` once per receiver, and their bookkeeping in Python
(finding the stream's pool, scanning the components) cost as much as the
driver calls. The driver is still called through cubind's public objects
(``Event.record``, ``Stream.wait``, ``Array.record_stream``), which refuse
handles a ``Device.reset()`` destroyed."""

import collections
import weakref

import cubind

from .message import Tensor

# Ready events are pooled per producer stream: making and destroying one per
# message (cuEventCreate, its finalizer, cuEventDestroy) was most of what a
# device tensor's edge cost. An event goes back to its stream's pool when no
# message refers to it any more; every wait issued on it is then queued, and
# a wait is a snapshot of the event's last record (cuStreamWaitEvent), so
# recording it again for a later message moves none of them.
#
# The pools by id(stream), each entry (weak reference to the stream, deque):
# a WeakKeyDictionary's lookup (Stream.__hash__, __eq__ in Python) cost a
# microsecond a message. An entry whose stream is gone is recognised by its
# reference no longer answering (a new object may have taken the id), and
# every entry of a gone stream is dropped when a new one is made: once per
# stream, a scan of the streams that published device tensors. A weak
# reference's callback did not do: under threads some ran after a new
# stream had taken the id, and some entries stayed (a stress test saw 3 of
# 160), each keeping its events. Each step is a dict operation under the
# GIL, and a lost race only makes a new pool.
cdef dict _pools = {}


cdef class ReadyEvent:
    """A message's ready event (``message.ready_event``): the pooled
    :class:`cubind.Event` (``event``), returned to its pool when collected;
    or, ``event`` None, a message whose producer's stream had nothing left
    to run at publish (``READY``): ready as it stands, its handle 0."""

    cdef readonly object event
    cdef object _pool

    def __cinit__(self, event, pool):
        self.event = event
        self._pool = pool

    @property
    def handle(self):
        return 0 if self.event is None else self.event.handle

    def synchronize(self):
        if self.event is not None:
            self.event.synchronize()

    def query(self):
        return True if self.event is None else self.event.query()

    def __dealloc__(self):
        # tp_dealloc calls this before it clears the fields; a cycle's
        # collection may have cleared them (tp_clear) first.
        if self._pool is not None and self.event is not None:
            self._pool.append(self.event)  # deque.append: one step, safe from any thread


# The ready event of every message published while its default stream was idle.
READY = ReadyEvent(None, None)


cdef object _pool_of(object stream):
    cdef object key = id(stream)
    cdef object entry = _pools.get(key)
    if entry is not None and (<tuple>entry)[0]() is stream:
        return (<tuple>entry)[1]
    _drop_gone()
    pool = collections.deque()
    _pools[key] = (weakref.ref(stream), pool)
    return pool


cdef void _drop_gone() except *:
    # Over a snapshot: dropping a pool releases its events, whose releases
    # run Python, where another thread may change the dict.
    for key, entry in list(_pools.items()):
        if (<tuple>entry)[0]() is None and _pools.get(key) is entry:
            _pools.pop(key, None)


cdef bint _carries_device(object message) except -1:
    # Message.has_device_tensors, compiled (publish asks it of every message).
    for value in (<dict?>message._components).values():
        if type(value) is Tensor:  # its storage slot, without the is_device property's call
            if value.storage == "device":
                return True
        elif isinstance(value, Tensor) and value.is_device:
            return True
    return False


def publish_order(message):
    """At publish: where ``message`` carries device tensors, its ready event
    (:func:`record_ready`); else nothing."""
    if _carries_device(message):
        record_ready(message)


def record_ready(message):
    """At publish: an event after the producer's queued work (its current
    stream, else the current device's default stream), from that stream's
    pool of events; ``READY`` where that is the default stream and it has
    nothing left to run."""
    stream = cubind.current_stream()
    if stream is None:
        # The device's default stream: one Stream object per device, so its events are pooled too.
        # An event made and destroyed per message cost a two-process device row a third of its rate
        # on the H200 (a transmitter publishing from the default stream).
        stream = _default_stream()
        # Nothing of its own left to run: no event (cubind._core.current.default_stream_idle says
        # why, 15.8 us against 2.0 beside UCX's copies on the H200).
        if _default_stream_idle():
            message.ready_event = READY
            return
    pool = _pool_of(stream)
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


# Each device's default stream (the Device's own object) by the current context's device: asking
# cubind.Device() for it cost a default-stream publish 0.5 us a message (1.2 us on the H200's host).
cdef dict _default_streams = {}
cdef object _current_ordinal = None  # cubind._core.current's, imported at the first device message
cdef object _default_stream_idle = None  # the same module's


cdef object _default_stream():
    """The default stream of the current context's device (device 0's made
    current where none is)."""
    global _current_ordinal, _default_stream_idle
    if _current_ordinal is None:
        # Imported here: importing cubind.graph loads no driver.
        from cubind._core.current import current_ordinal, default_stream_idle
        _current_ordinal, _default_stream_idle = current_ordinal, default_stream_idle
    stream = _default_streams.get(_current_ordinal())  # -1: no context current
    if stream is None:
        stream = cubind.Device().default_stream  # makes a context current where none is
        _default_streams[_current_ordinal()] = stream
    return stream


cdef object _consumer_stream():
    stream = cubind.current_stream()
    if stream is None:
        stream = _default_stream()
    return stream


def await_ready(message, device):
    """At receive: the consumer's stream waits for the producer's event; the
    device tensors not on ``device`` (the entity's ordinal, None: any) are
    copied to it on that stream (peer to peer where the driver allows it). A
    message reaching several receivers is shared, so a copy goes into a
    shallow copy of the message. Returns the message the consumer gets."""
    stream = _consumer_stream()
    ready = message.ready_event
    if type(ready) is ReadyEvent:
        ready = (<ReadyEvent>ready).event  # None: ready at publish (``READY``)
    if ready is not None:
        stream.wait(ready)
    cdef dict components = message._components
    cdef list elsewhere = None
    for name, tensor in components.items():
        if not isinstance(tensor, Tensor) or not tensor.is_device:
            continue
        data = tensor.data
        # Its memory is freed in its producer's stream order: without this the
        # producer's next allocation could take it while this consumer's work
        # still reads it (a GPU run showed 198 of 200 results overwritten).
        data.record_stream(stream)
        if device is not None and data.device_ordinal != device:
            if elsewhere is None:
                elsewhere = []
            elsewhere.append((name, tensor))
    if elsewhere is None:
        return message
    moved = message.copy()
    for name, tensor in elsewhere:
        moved.replace(name, type(tensor)(name, _copy_to(tensor.data, device, stream)))
    return moved


cdef object _copy_to(array, device, stream):
    with cubind.Device(device):
        out = cubind.empty(array.shape, array.dtype, stream=stream)
        out.copy_from(array, stream=stream)
    return out
