"""GXF's UCX components: a ``UcxContext`` per process, ``UcxReceiver`` (it
listens on ``port``) and ``UcxTransmitter`` (it connects to
``receiver_address:port``), queues as the double-buffer ones are (capacity,
policy), whose other end is in another process. The serializer components
are accepted where a GXF app names them (``UcxEntitySerializer``,
``UcxComponentSerializer``, ``UcxSerializationBuffer``); what crosses and
how is ``ucx/wire.py``'s.

The context is the run's external source (``scheduling/external.py``): it opens every
queue's connection before the first tick (listeners first, then each
transmitter connects, then each receiver waits for its transmitter), tells
the scheduler when remote messages or credits arrive, and closes them after
the run, with the counts of messages each queue sent and received."""

import asyncio
import concurrent.futures
import importlib
import time

import numpy as np

import cubind
from cubind.graph.model.component import Component
from cubind.graph.model.errors import GraphError, ParameterError
from cubind.graph.model.message import TensorDescription
from cubind.graph.model.parameters import Parameter, Ref
from cubind.graph.model.queues import Receiver, Transmitter
from cubind.graph.model.resources import Allocator
from cubind.graph.scheduling.external import ExternalSource

from .transport import Engine, UcxError, not_built


def _data_path(module):
    """The UCX data path's ``module`` (inlink, outlink, sendpath: compiled,
    over the pump), imported when a UCX queue is resolved. A build without
    UCX's headers leaves the compiled part out (setup.py), and cubind.graph
    still imports; a UCX queue then says how to get it."""
    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ImportError as exc:
        raise not_built(exc) from exc

CLOSE_TIMEOUT_S = 30.0


class UcxSerializationBuffer(Component, gxf_type="UcxSerializationBuffer"):
    """Bounds a message's header (its non-tensor part, ``buffer_size``
    bytes); tensors travel as their own UCX messages, from their memory."""

    allocator = Parameter(Ref(Allocator), None, "accepted for GXF's shape; the header is a Python bytes object")
    buffer_size = Parameter(int, 4096, "the largest header, in bytes")

    def on_bind(self):
        if self.buffer_size < 64:
            raise ParameterError(f"{self.path}/buffer_size: must be at least 64 bytes, got {self.buffer_size}")


class UcxComponentSerializer(Component, gxf_type="UcxComponentSerializer"):
    """Where received tensors are allocated: ``allocator`` (default: as
    ``UnboundedAllocator`` does, on the receiving entity's device)."""

    allocator = Parameter(Ref(Allocator), None)


class UcxEntitySerializer(Component, gxf_type="UcxEntitySerializer"):
    component_serializers = Parameter([Ref(UcxComponentSerializer)], None)
    verbose_warning = Parameter(bool, True, "accepted for GXF's shape")


class UcxContext(Component, ExternalSource, gxf_type="UcxContext"):
    """One per process: the UCX engine of its remote queues. ``reconnect``:
    a transmitter whose receiver is not up yet retries (every 0.1 s) until
    ``connect_timeout_ms``; without it one attempt. ``cpu_data_only``: device
    tensors are refused at publish (both sides must agree)."""

    serializer = Parameter(Ref(UcxEntitySerializer), None)
    reconnect = Parameter(bool, True)
    cpu_data_only = Parameter(bool, False)
    enable_async = Parameter(bool, True, "transfers are queued and made on the UCX loop's thread")
    connect_timeout_ms = Parameter(int, 30000, "how long to wait for the peers before the first tick")

    def on_bind(self):
        if not self.enable_async:
            raise ParameterError(f"{self.path}/enable_async: false (transfers made in the publishing tick) is not "
                                 f"provided; transfers are always made on the UCX loop's thread")
        if self.connect_timeout_ms < 1:
            raise ParameterError(f"{self.path}/connect_timeout_ms: must be at least 1, got {self.connect_timeout_ms}")
        self.engine = None
        self.links = []
        self._wake = None

    def resolve(self, graph):
        super().resolve(graph)
        others = [c for c in graph.components(UcxContext) if c is not self]
        if others:
            raise GraphError(f"{self.path}: a process has one UcxContext; {others[0].path} is another")

    # -- the run's external source

    def wake(self):
        if self._wake is not None:
            self._wake()

    def external_wait(self, seconds):
        """The data path's news taken on the waiting scheduler's thread
        (``pump.Pump.poll``): a message, a credit or a goodbye costs no
        thread's wake-up and no handoff of the GIL."""
        pump = None if self.engine is None else self.engine.started_pump
        return False if pump is None else pump.poll(seconds)

    def open_external(self, wake):
        graph = self.entity.graph
        self.links = [q.link for q in graph.components((UcxReceiver, UcxTransmitter))]
        if not self.links:
            return
        for link in self.links:
            link.reset()
        self._wake = wake
        self.engine = Engine.shared()
        deadline = time.monotonic() + self.connect_timeout_ms / 1000
        try:
            self._wait_open(deadline)
        except BaseException:
            self._shutdown(True)
            raise

    def _wait_open(self, deadline):
        graph = self.entity.graph
        future = asyncio.run_coroutine_threadsafe(self._open(deadline), self.engine.loop)
        while True:  # in steps, so that SIGINT/SIGTERM (graph.interrupt) ends the wait for the peers
            try:
                return future.result(0.1)
            except concurrent.futures.TimeoutError:
                if graph.interrupted:
                    future.cancel()
                    raise UcxError(f"{self.path}: interrupted while waiting for the peers to connect") from None

    async def _open(self, deadline):
        ucxx = self.engine.ucxx
        in_link, out_link = _data_path("inlink").InLink, _data_path("outlink").OutLink
        ins = [link for link in self.links if isinstance(link, in_link)]
        outs = [link for link in self.links if isinstance(link, out_link)]
        for link in ins:
            link.listen(ucxx)
        # Every listener is up before anything waits: two parts feeding each other both start.
        results = await asyncio.gather(*(link.connect(ucxx, deadline) for link in outs), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        for link in ins:
            await link.wait_connected(deadline)

    def external_active(self):
        for link in self.links:  # not any() over a generator: the scheduler asks on every wait
            if link.active():
                return True
        return False

    def entity_done(self, entity):
        for link in self.links:
            if link.queue.entity is entity:
                link.finish()

    def external_failure(self):
        for link in self.links:
            if link.failure is not None:
                return link.failure
        return None

    def close_external(self, failed):
        if self.engine is None:
            return None
        try:
            return self._shutdown(failed)
        finally:
            self._wake = None

    def _shutdown(self, failed):
        async def close_all():
            await asyncio.gather(*(link.close(failed, CLOSE_TIMEOUT_S) for link in self.links),
                                 return_exceptions=True)

        # The engine stays set while the links drain: a send loop still
        # sending the last messages uses it (a device tensor's context).
        try:
            self.engine.call(close_all(), CLOSE_TIMEOUT_S + 5)
        finally:
            self.engine = None
        return None if failed else self.external_failure()

    def external_counts(self):
        return {link.queue.path: link.counts() for link in self.links}

    # -- for the links

    def receive_allocator(self):
        """The component serializer's allocator, where one is named: received
        tensors are then copied into its tensors (``copy_into``)."""
        return self._allocator()

    def copy_into(self, allocator, queue, entry, data):
        """A tensor of ``allocator`` on the receiving entity's device holding
        ``data`` (a received block's view), the copy done on return. The
        data path receives into blocks of its own (``cuMemAlloc`` memory,
        which UCX's CUDA IPC needs: an allocator's stream-ordered memory
        made UCX bounce every buffer through the host, 1 419 against 28
        messages/s of 16 MiB on an H100)."""
        storage = "device" if entry["storage"] == "device" else "host"
        description = TensorDescription(entry["name"], storage, entry["shape"], entry["dtype"])
        with cubind.Device(queue.entity.device or 0) as device:
            target = allocator.tensor(description).data
            if storage == "host":
                np.copyto(target, data)
                return target
            stream = cubind.current_stream() or device.default_stream
            target.copy_from(data, stream=stream)
            stream.synchronize()  # the block goes back when ``data`` goes
        return target

    def _allocator(self):
        serializer = self.serializer
        for component in (serializer.component_serializers or ()) if serializer is not None else ():
            if component.allocator is not None:
                return component.allocator
        return None


def _context(queue, graph):
    found = graph.components(UcxContext)
    if not found:
        raise GraphError(f"{queue.path}: a {type(queue).__name__} needs a UcxContext in its app "
                         f"(GXF's: one per process, e.g. in the scheduler's entity)")
    return found[0]


def _check_port(queue, allow_zero):
    if not (0 if allow_zero else 1) <= queue.port <= 65535:
        raise ParameterError(f"{queue.path}/port: {queue.port} is not a port (1 to 65535)")


class UcxReceiver(Receiver, gxf_type="UcxReceiver"):
    """Listens on ``port`` for one ``UcxTransmitter``; its messages arrive in
    this queue's back stage as a local transmitter's do. Reading (or
    dropping) a message gives its room back to the transmitter, so a
    ``DownstreamReceptiveSchedulingTerm`` there sees this queue's room."""

    capacity = Parameter(int, 10, "messages the queue holds (GXF's UcxReceiver default: 10)")
    address = Parameter(str, "0.0.0.0", "the address peers reach (ucxx listens on every interface)")
    port = Parameter(int, 13337)
    buffer = Parameter(Ref(UcxSerializationBuffer), None)

    def on_bind(self):
        super().on_bind()
        _check_port(self, allow_zero=False)
        self.link = None

    def resolve(self, graph):
        super().resolve(graph)
        self.link = _data_path("inlink").InLink(self, _context(self, graph))

    def receive(self):
        message = super().receive()
        if message is not None:
            self.link.grant(1)
        return message

    def deliver(self, message):
        raise GraphError(f"{self.path}: a UcxReceiver is fed by its UcxTransmitter over UCX, not by a Connection")

    def deliver_remote(self, message):
        """A message from the peer, into the back stage by the policy; returns
        how many messages left the queue doing so (their room goes back)."""
        outcome = self.stages.push(message)
        if outcome == 2:
            raise self.full_error()
        return outcome  # 1: one message dropped (the new one, or the oldest)


class UcxTransmitter(Transmitter, gxf_type="UcxTransmitter"):
    """Connects to the ``UcxReceiver`` at ``receiver_address:port``; what it
    publishes is sent there after each tick. Its ``targets`` hold the
    connection, whose room is the remote queue's (credits) plus this
    transmitter's ``capacity``: that many messages wait on the data path
    for credits, each sent as one arrives."""

    receiver_address = Parameter(str, "0.0.0.0")
    port = Parameter(int, 13337)
    buffer = Parameter(Ref(UcxSerializationBuffer), None)
    maximum_connection_retries = Parameter(int, 200, "attempts at most while the receiver is not up")

    def on_bind(self):
        super().on_bind()
        _check_port(self, allow_zero=False)
        if self.maximum_connection_retries < 1:
            raise ParameterError(f"{self.path}/maximum_connection_retries: must be at least 1")
        self.link = None

    def resolve(self, graph):
        super().resolve(graph)
        self.link = _data_path("outlink").OutLink(self, _context(self, graph))
        self.targets.append(self.link)
        self._encode = _data_path("sendpath").encode_published
        # What publish hands the encoder, worked out once (a message's path string cost its share).
        self._encode_args = (self.path, not self.link.context.cpu_data_only,
                             None if self.buffer is None else self.buffer.buffer_size)

    def publish(self, message):
        """As a double-buffer transmitter's, after checking that ``message``
        can cross a process (an error here names the codelet that published it)."""
        encoded = self._encode(message, *self._encode_args)
        if not self._publish(message):  # one that publish stamped is encoded again at delivery
            self.link.remember(message, encoded)


__all__ = ["UcxContext", "UcxReceiver", "UcxTransmitter", "UcxSerializationBuffer", "UcxEntitySerializer",
           "UcxComponentSerializer", "UcxError"]
