"""The UCX side of remote queues, on RAPIDS' ucxx (its asyncio API): one
event loop on its own thread per process (``Engine``), on which every UCX
call is made; a receiver listens (``InLink``), a transmitter connects
(``OutLink``), as GXF's UcxReceiver and UcxTransmitter do.

On one connection, in order:

- the transmitter sends a hello (its layout, its queue's path, whether it
  sends device tensors); the receiver answers ok with its capacity, policy
  and the room it grants (credits: its capacity less what its queue still
  holds of a lost connection), or the reason it refuses (another layout;
  "busy": connected to another transmitter);
- transmitter to receiver: per message a header (``wire.encode``, framed
  by ``send_note``: one UCX message where it fits ``NOTE_FRAME``) then one
  UCX message per tensor buffer, from the memory it lies in; at the end a
  goodbye with the count sent (the receiver checks it got as many);
- where both ends are in one place (``place()``: one host, one container),
  the receiver's answer also carries its worker's address and a tag, and
  the tensor buffers go on a second endpoint made from that address
  (``DataRoute``), without UCX's peer-failure handling: with it UCX keeps
  only transports that can detect a dead peer (TCP), and a 1 MiB message
  moves at a tenth of the rate shared memory, CMA or CUDA IPC give. The
  first endpoint still carries the headers, credits and goodbyes, and
  its loss is how a dead peer is seen, as before;
- receiver to transmitter: credits (one per message that left its queue:
  read or dropped), so the transmitter knows the room left downstream, and a
  goodbye when its run ends.

Each direction has one sending task, so a header and its buffers are never
interleaved with another message's. The state the scheduler reads (credits,
counts, failure, ended) is under each link's lock; the transport calls the
run's ``wake`` without holding it.

This module holds what both ends share (the engine, the handoff, the
notes' framing); ``outlink.py`` the transmitter's side, ``inlink.py`` the
receiver's."""

import asyncio
import atexit
import functools
import json
import logging
import os
import secrets
import struct
import threading

import cubind
from cubind.graph.model.errors import GraphError

from .wire import WireError

BYE = object()
HELLO_TIMEOUT_S = 10.0
# Where a connection lost and made again is told (python -m cubind.graph shows warnings on stderr).
log = logging.getLogger("cubind.graph.ucx")
# A note's first UCX message: most headers and every control note fit one.
NOTE_FRAME = 4096
NOTE_LIMIT = 1 << 30
_LENGTH = struct.Struct("<Q")


class UcxError(GraphError):
    """A UCX connection that cannot be made or was lost; the message names
    the queue (entity/component) and the peer's address."""


def ucxx_module():
    """RAPIDS' ucxx, or a ``GraphError`` saying how to install it."""
    try:
        import ucxx  # type: ignore[import-not-found]  # optional: pip install 'cubind[ucx]'
    except ImportError as exc:
        raise GraphError(f"UcxTransmitter/UcxReceiver need RAPIDS' ucxx, which does not import ({exc}): "
                         f"pip install 'cubind[ucx]' (see docs/graph.md, 'Across processes')") from None
    return ucxx


def lost_connection(exc):
    """Whether ``exc`` is how UCX ends the sends and receives of a connection
    that went (ucxx raises its own kinds: canceled, reset, not connected,
    unreachable), not a fault of ours (a truncated message, a decoding error,
    a CUDA error), which no reconnect mends."""
    return type(exc).__module__.partition(".")[0] == "ucxx" and "Truncated" not in type(exc).__name__


@functools.cache
def place():
    """Where this process runs, as UCX's same-host transports see it: the
    kernel's boot and the namespaces that shared memory, CMA and CUDA IPC
    need in common (network, IPC, PID, mount). Processes of one place may
    use them; a peer elsewhere (another host, or a container of its own on
    this one) cannot, and its data goes over the network."""
    parts = []
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            parts.append(f.read().strip())
        for ns in ("net", "ipc", "pid", "mnt"):
            parts.append(os.readlink(f"/proc/self/ns/{ns}"))
    except OSError:
        return None  # not Linux's /proc: no data route (the connection carries everything)
    return "/".join(parts)


def data_route_offer(hello, engine):
    """The receiver's side of the data route: ``{"address", "tag"}`` for its
    answer where the transmitter's hello says it is in this place, else None."""
    here = place()
    if here is None or hello.get("place") != here:
        return None
    return {"address": engine.worker_address(), "tag": secrets.randbits(64)}


class DataRoute:
    """The transmitter's second endpoint (see the module's docstring): made
    from the receiver's worker address without peer-failure handling; the
    tensor buffers are sent on it with the tag the receiver chose, and the
    receiver posts their receives with that tag through its connection's
    endpoint (``receive``)."""

    # Closing an endpoint without peer-failure handling flushes it: to a dead peer that never
    # ends, so a lost connection's route is abandoned after this long (UCX's clock: ns).
    ABANDON_NS = 100_000_000

    def __init__(self, ep, tag):
        self.ep, self.tag = ep, tag

    @classmethod
    async def connect(cls, ucxx, offer):
        tag = int(offer["tag"])  # read before the endpoint is made: a bad offer leaves none behind
        address = ucxx.get_ucx_address_from_buffer(bytes.fromhex(offer["address"]))
        ep = await ucxx.create_endpoint_from_worker_address(address, endpoint_error_handling=False)
        return cls(ep, tag)

    def send(self, buffer):
        return self.ep.send(buffer, tag=self.tag, force_tag=True)

    @staticmethod
    def receive(ep, buffer, tag):
        """A buffer of the route, received through the connection's endpoint
        ``ep``: UCX matches tags on the worker, whichever endpoint sent them,
        and ucxx cancels an endpoint's receives when it is lost."""
        return ep.recv(buffer, tag=tag, force_tag=True)

    def close(self):
        try:
            self.ep.abort(period=self.ABANDON_NS, max_attempts=1)
        except Exception:
            pass  # closing a route whose peer is gone


def as_json(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


class Engine:
    """The process's asyncio loop on a daemon thread, made on first use and
    kept for the process (ucxx's context is the process's too, bound to the
    loop that first used it); ``call`` runs a coroutine there and waits for
    it, ``soon`` schedules a plain call there. At exit ucxx's notifier thread
    is stopped and the loop with it."""

    _shared = None
    _lock = threading.Lock()

    @classmethod
    def shared(cls):
        with cls._lock:
            if cls._shared is None:
                cls._shared = cls()
                atexit.register(cls._shared.stop)
            return cls._shared

    def __init__(self):
        # SO_REUSEADDR on the listening sockets: a part restarted while its last connections are in
        # TIME_WAIT can listen on its port again (read when ucxx makes its context, on first use).
        os.environ.setdefault("UCX_TCP_CM_REUSEADDR", "y")
        self.ucxx = ucxx_module()
        self.loop = asyncio.new_event_loop()
        self._devices = set()
        self._address = None
        self.thread = threading.Thread(target=self._run, name="cubind.graph ucx", daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def use_device(self, ordinal):
        """Makes ``ordinal``'s primary context current on the loop's thread
        (where UCX is asked to read or write device memory), once."""
        if ordinal not in self._devices:
            cubind.Device(ordinal).set_current()
            self._devices.add(ordinal)

    def worker_address(self):
        """This process's UCX worker address (hex), for a data route to it; on the loop."""
        if self._address is None:
            self._address = self.ucxx.get_worker_address().tobytes().hex()
        return self._address

    def call(self, coro, timeout=None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def soon(self, fn, *args):
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self):
        async def finish():
            # reset() ends UCX itself (its CUDA transport's streams and events
            # too) now, while the process still holds its CUDA contexts; left
            # to the library's unloading, after cubind's exit hook released
            # them, UCX warns of each event it can no longer destroy.
            try:
                self.ucxx.reset()
            except Exception:  # an endpoint still referenced: at least stop the notifier
                stop = getattr(self.ucxx, "stop_notifier_thread", None)
                if stop is not None:
                    stop()
        try:
            self.call(finish(), 5)
        except Exception:
            pass  # at exit: whatever ucxx says, the loop stops
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


class Handoff:
    """Items handed from any thread to an asyncio queue on the engine's
    loop, in the order handed: one wake of the loop (``call_soon_threadsafe``)
    per batch of items handed before it runs, not one per item."""

    def __init__(self, engine, queue):
        self.engine, self.queue = engine, queue
        self.lock = threading.Lock()
        self.items = []

    def put(self, item):
        with self.lock:
            self.items.append(item)
            if len(self.items) > 1:
                return  # the flush scheduled for the first item takes this one too
        self.engine.soon(self._flush)

    def _flush(self):
        with self.lock:
            items, self.items = self.items, []
        for item in items:
            self.queue.put_nowait(item)


class Link:
    def __init__(self, queue, context):
        self.queue, self.context = queue, context
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.failure = None
        self.peer_ended = False
        self.closing = False
        self.dropped = 0

    def _fail(self, exc):
        with self.lock:
            if self.failure is None and not self.closing:
                self.failure = exc
        self.context.wake()

    @property
    def where(self):
        return f"{self.queue.path} (entity {self.queue.entity.name!r})"



async def after_producer(loop, ready, ordinal):
    """UCX reads device memory outside any stream: the producer's work
    (its ready event) must be done first. An event already complete is
    asked once (cuEventQuery); one still pending is waited on a helper
    thread, not on the loop, which keeps serving the other connections."""
    if not ready.query():
        await loop.run_in_executor(None, _wait_event, ready, ordinal)


def _wait_event(event, ordinal):
    with cubind.Device(ordinal):
        event.synchronize()


def note_frames(data):
    """The UCX messages of a note (a header or a control note): its length
    (8 bytes) and its bytes in one message where they fit ``NOTE_FRAME``,
    else the frame's worth first and the rest in a second message. One
    message instead of ucxx's ``send_obj`` pair (a size, then the bytes)
    halves a note's round trips on the loop; the receiver posts a frame-sized
    buffer, which UCX fills with the shorter message."""
    fits = NOTE_FRAME - _LENGTH.size
    head = _LENGTH.pack(len(data)) + data[:fits]
    return (head,) if len(data) <= fits else (head, data[fits:])


async def send_note(ep, data):
    """UCX's active messages halve the round trips again but, with ucxx 0.52,
    a second connection in one process lost them: tagged messages."""
    await posted_together([ep.send(frame) for frame in note_frames(data)])


async def posted_together(calls):
    """Awaits ucxx sends or receives (coroutines) posted in the order
    given: each posts its UCX request at its first step and the loop starts
    tasks in the order they are made, so tagged messages match in that
    order, while their completions are waited together (a message's header
    and buffers in flight at once, not one round trip each). The first
    failure is raised once all have ended."""
    if len(calls) == 1:
        await calls[0]
        return
    for result in await asyncio.gather(*calls, return_exceptions=True):
        if isinstance(result, BaseException):
            raise result


async def receive_note(ep):
    """A note sent by ``send_note``; ``WireError`` for a length past ``NOTE_LIMIT``."""
    frame = bytearray(NOTE_FRAME)
    await ep.recv(frame)
    (length,) = _LENGTH.unpack_from(frame)
    fits = NOTE_FRAME - _LENGTH.size
    if length <= fits:
        return bytes(frame[_LENGTH.size:_LENGTH.size + length])
    if length > NOTE_LIMIT:
        raise WireError(f"a note of {length} bytes announced, more than {NOTE_LIMIT} (not a cubind.graph peer?)")
    rest = bytearray(length - fits)
    await ep.recv(rest)
    return bytes(frame[_LENGTH.size:]) + bytes(rest)


async def answer(ep, obj):
    try:
        await ep.send_obj(as_json(obj))
    except Exception:
        pass  # the peer left; it learns nothing more from us


async def close_endpoint(ep, tasks):
    for task in tasks:
        if not task.done():
            task.cancel()
    if ep is not None:
        try:
            await asyncio.wait_for(ep.close(), 2)
        except Exception:
            pass  # closing a connection whose peer is gone

