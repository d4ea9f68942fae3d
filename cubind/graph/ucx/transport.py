"""The UCX side of remote queues, on RAPIDS' ucxx (its asyncio API): one
event loop on its own thread per process (``Engine``), on which every UCX
call is made; a receiver listens (``InLink``), a transmitter connects
(``OutLink``), as GXF's UcxReceiver and UcxTransmitter do.

On one connection, in order:

- the transmitter sends a hello (its layout, its queue's path, whether it
  sends device tensors, its pump's worker address); the receiver answers
  ok with its capacity, policy, the room it grants (credits: its capacity
  less what its queue still holds of a lost connection), its pump's worker
  address and the connection's tag, or the reason it refuses (another
  layout; "busy": connected to another transmitter);
- every message then goes on the data path (``pump.pyx``): the two
  processes' pumps, each a UCP worker progressed by a thread of its own,
  connected by endpoints made from those addresses, move the headers, the
  tensor buffers (from the memory they lie in), the credits and the
  transmitter's goodbye with its count, in compiled code; Python takes
  whole messages on the receiving side and hands them to the queue;
- where both ends are in one place (``place()``: one host, one container)
  the data path's endpoints have no peer-failure handling: with it UCX
  keeps only transports that can detect a dead peer (TCP), and a 1 MiB
  message moves at a tenth of the rate shared memory, CMA or CUDA IPC
  give. The connection (ucxx's endpoint, with that handling) stays open
  beside it, and its loss is how a dead peer is seen;
- on the connection, after the hello: the receiver's goodbye when its
  entity ends, and its "ended" once it has the transmitter's goodbye (the
  transmitter closes then, first, so that the listening port leaves no
  TIME_WAIT behind).

The state the scheduler reads (credits, counts, failure, ended) is under
each link's lock; the transport calls the run's ``wake`` without holding
it.

This module holds what both ends share (the engine and its pump, the
handoff, the notes' framing); ``outlink.py`` the transmitter's side, ``inlink.py`` the
receiver's."""

import asyncio
import atexit
import functools
import json
import logging
import os
import struct
import threading
import time

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


def peer_checks(peer_place):
    """Whether the data path to a peer in ``peer_place`` needs UCX's
    peer-failure handling: a peer elsewhere (or a place unknown) does; one
    in this place does not (see the module's docstring)."""
    here = place()
    return here is None or peer_place != here


def not_built(exc):
    """The error of a data path module the build left out (``exc``, its
    ImportError): the pump, which calls UCX through ucx.cucp, needs UCX's
    headers to build (setup.py)."""
    return UcxError(
        f"cubind.graph's UCX data path was not built ({exc}): cubind was built without UCX's headers "
        "(ucp/api/ucp.h). Install libucx-cu13 (libucx-cu12 for CUDA 12; ucxx brings it) into the environment "
        "that builds cubind, then build it again (scripts/run-example.sh or `python setup.py build_ext "
        "--inplace` in a clone, or `pip install --no-build-isolation .`: docs/building.md).")


def start_pump():
    """A data path (``pump.Pump``) on the libucp that ucxx loads (the libucx
    wheel's), and the daemon thread running its loop."""
    import libucx  # type: ignore[import-not-found]  # ucxx's dependency

    try:
        from .pump import Pump
    except ImportError as exc:
        raise not_built(exc) from exc

    # The very files ucxx loads, loaded first: the pump's binding (ucx.cucp) then finds that
    # libucp loaded (its soname) rather than opening another copy: the wheel holds copies (not
    # links) under other names, and a second copy of libucs in the process crashes in its
    # destructor at exit.
    libucx.load_library()
    pump = Pump()
    thread = threading.Thread(target=pump.run, name="cubind.graph ucx pump", daemon=True)
    thread.start()
    return pump, thread


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
        self._lock = threading.Lock()
        # SO_REUSEADDR on the listening sockets: a part restarted while its last connections are in
        # TIME_WAIT can listen on its port again (read when ucxx makes its context, on first use).
        os.environ.setdefault("UCX_TCP_CM_REUSEADDR", "y")
        self.ucxx = ucxx_module()
        self.loop = asyncio.new_event_loop()
        self._devices = set()
        self._pump = None
        self.thread = threading.Thread(target=self._run, name="cubind.graph ucx", daemon=True)
        self.thread.start()
        self.call(self._init_ucxx())

    async def _init_ucxx(self):
        """ucxx's context, made on the loop. ucxx's default completes a
        request by polling it on each turn of the loop, which keeps the
        loop's thread on the GIL while a connection's one receive waits (all
        a connection has, the messages being on the data path): two-process
        pings went 359 against 11 290 a second here. Its futures, set by a
        notifier thread, let the loop sleep: asked for here (the process's
        environment, which child processes inherit, left alone), unless
        ``UCXPY_ENABLE_PYTHON_FUTURE`` says otherwise or ucxx was set up
        before."""
        wanted = os.environ.get("UCXPY_ENABLE_PYTHON_FUTURE")
        try:
            self.ucxx.init(enable_python_future=True if wanted is None else wanted != "0")
        except RuntimeError:
            pass  # initiated already, as whoever did it chose

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def use_device(self, ordinal):
        """Makes ``ordinal``'s primary context current on the calling thread,
        once per process (the first device tensor's)."""
        if ordinal not in self._devices:
            cubind.Device(ordinal).set_current()
            self._devices.add(ordinal)

    def pump(self):
        """The process's data path (``pump.pyx``), made and started at the
        first call, on the libucp that ucxx loaded (the libucx wheel's)."""
        with self._lock:
            if self._pump is None:
                self._pump, self._pump_thread = start_pump()
            return self._pump

    @property
    def started_pump(self):
        """The data path if a connection made it, else None (never made here)."""
        return self._pump

    def cuda_context(self, ordinal):
        """Device ``ordinal``'s primary context (an int) for the data path.
        ``use_device`` makes it current once, on whichever thread asks first
        (the publishing scheduler's or the receiving pump's): the loop's
        thread no longer touches device memory, and the data path makes the
        context current around its own turns."""
        from cubind._core.context import primary_context

        self.use_device(ordinal)
        return int(primary_context(ordinal))

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
            self._stop_pump()

    def _stop_pump(self):
        """The pump's thread ended and UCX released (its free device blocks
        too) while the process still holds its CUDA contexts."""
        pump = self._pump
        if pump is None:
            return
        pump.stop()
        self._pump_thread.join(5)
        if not self._pump_thread.is_alive():
            pump.close()


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
    a second connection in one process lost them: tagged messages, posted
    in order (each posts at its first step) and waited together."""
    frames = [asyncio.ensure_future(ep.send(frame)) for frame in note_frames(data)]
    for result in await asyncio.gather(*frames, return_exceptions=True):
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


# How long a data path's close may take (a flush towards a live peer), and how often it is looked at.
CHANNEL_CLOSE_S = 2.0
CHANNEL_POLL_S = 0.001


async def close_channel(channel, force):
    """Closes a data path (``pump.Channel``) and waits until the pump let
    it go: its buffers are no longer read or written after that. A flush
    that does not end in ``CHANNEL_CLOSE_S`` (a peer gone meanwhile) is
    forced."""
    channel.close(force)
    deadline = time.monotonic() + CHANNEL_CLOSE_S
    while not channel.closed:
        if time.monotonic() > deadline and not force:
            force = True
            channel.close(True)
        await asyncio.sleep(CHANNEL_POLL_S)


async def close_endpoint(ep, tasks):
    for task in tasks:
        if not task.done():
            task.cancel()
    if ep is not None:
        try:
            await asyncio.wait_for(ep.close(), 2)
        except Exception:
            pass  # closing a connection whose peer is gone

