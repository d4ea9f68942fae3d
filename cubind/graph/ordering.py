"""Device tensors crossing an edge: the producer's work is ordered before the
consumer's by an event, never by a host synchronisation, and a tensor on
another device than the consumer's entity is copied there.

Inside a codelet's phase its pool stream is cubind's current stream (``with
stream:``), so the event is recorded where the producer queued its work and
the wait is queued where the consumer will queue its own."""

import cubind


def record_ready(message):
    """At publish: an event after the producer's queued work (its current
    stream, else the current device's default stream)."""
    event = cubind.Event(timing=False)
    event.record(cubind.current_stream())
    message.ready_event = event


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
        stream.wait(message.ready_event)
    if device is None:
        return message
    moved = None
    for name, tensor in message.tensors().items():
        if tensor.is_device and tensor.data.device_ordinal != device:
            moved = moved or message.copy()
            moved.replace(name, type(tensor)(name, _copy_to(tensor.data, device, stream)))
    return moved or message


def _copy_to(array, device, stream):
    with cubind.Device(device):
        out = cubind.empty(array.shape, array.dtype, stream=stream)
        out.copy_from(array, stream=stream)
    return out
