"""The UCX side of remote queues, on RAPIDS' ucxx (its asyncio API): one
event loop on its own thread per process (``Engine``), on which every UCX
call is made; a receiver listens (``InLink``), a transmitter connects
(``OutLink``), as GXF's UcxReceiver and UcxTransmitter do.

On one connection, in order:

- the transmitter sends a hello (its layout, its queue's path, whether it
  sends device tensors); the receiver answers ok with its capacity and
  policy, or the reason it refuses (another layout);
- transmitter to receiver: per message a header (``wire.encode``, framed
  by ``send_note``: one UCX message where it fits ``NOTE_FRAME``) then one
  UCX message per tensor buffer, from the memory it lies in; at the end a
  goodbye with the count sent (the receiver checks it got as many);
- receiver to transmitter: credits (one per message that left its queue:
  read or dropped), so the transmitter knows the room left downstream, and a
  goodbye when its run ends.

Each direction has one sending task, so a header and its buffers are never
interleaved with another message's. The state the scheduler reads (credits,
counts, failure, ended) is under each link's lock; the transport calls the
run's ``wake`` without holding it."""

import asyncio
import atexit
import collections
import json
import os
import struct
import threading
import time

import cubind
from cubind.graph.model.errors import GraphError
from cubind.graph.model.queues import FAULT, REJECT, QueueFullError

from .staging import DeviceStaging
from .wire import LAYOUT, WireError, assemble, decode_header, encode

_BYE = object()
HELLO_TIMEOUT_S = 10.0
CONNECT_ATTEMPT_S = 2.0
RETRY_PERIOD_S = 0.1
PEER_CLOSE_S = 2.0
# A note's first UCX message: most headers and every control note fit one.
NOTE_FRAME = 4096
NOTE_LIMIT = 1 << 30
# Messages a transmitter has in flight on its connection (their sends posted, not yet complete).
SEND_WINDOW = 4
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


def _json(obj):
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


class _Link:
    def __init__(self, queue, context):
        self.queue, self.context = queue, context
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.ep = None
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


class OutLink(_Link):
    """A UcxTransmitter's connection; it stands in its ``targets`` for the
    remote receiver: ``free()`` is the room left there (credits), and the
    scheduler's ``deliver()`` hands it the messages to send."""

    def reset(self):
        super().reset()
        self.credits = 0
        self.remote = None  # the receiver's answer: path, capacity, policy
        self.sent = 0
        self.queued = 0
        self.outbox = None
        self.to_send = None  # the Handoff into outbox: messages, then the goodbye
        self.tasks = []
        self.finished = False
        self.bye_sent = False
        self.staging = DeviceStaging()

    @property
    def peer(self):
        return f"{self.queue.receiver_address}:{self.queue.port}"

    # -- the scheduler's side (any thread)

    def free(self):
        with self.lock:
            return self.credits

    def active(self):
        """Credits still to come back: the receiver holds or is sent messages."""
        with self.lock:
            return (self.remote is not None and not self.peer_ended and self.failure is None
                    and not self.finished and self.credits < self.remote["capacity"])

    def finish(self):
        """Its entity will not publish again: a goodbye follows what is queued,
        so that the receiver's run can end (in this process or another)."""
        with self.lock:
            if self.finished or self.outbox is None:
                return
            self.finished = True
        self.to_send.put(_BYE)

    def deliver(self, message):
        header, buffers = encode(message, self.queue.path, not self.context.cpu_data_only)
        with self.lock:
            if self.failure is not None:
                raise self.failure
            if self.peer_ended:
                # The receiving entity ended: as a queue nobody reads, no room is left. A message decided
                # before its goodbye arrived is counted as dropped (the counts say so), not sent into a void.
                self.dropped += 1
                return
            if self.credits <= 0:
                policy = self.remote["policy"]
                if policy == REJECT:
                    self.dropped += 1
                    return
                if policy == FAULT:
                    raise QueueFullError(f"{self.where}: the UcxReceiver {self.remote['path']} at {self.peer} is "
                                         f"full (capacity {self.remote['capacity']}, policy 2: fault); add a "
                                         f"DownstreamReceptiveSchedulingTerm on {self.queue.name}")
                # policy 0: sent anyway; the receiver drops its oldest and gives that credit back.
            self.credits -= 1
            self.queued += 1
        self.to_send.put((header, buffers, message.ready_event))

    def counts(self):
        with self.lock:
            return {"sent": self.sent, "dropped": self.dropped, "peer": self.peer,
                    "remote": self.remote["path"] if self.remote else None}

    # -- on the engine's loop

    async def connect(self, ucxx, deadline):
        queue = self.queue
        attempts, started = 0, time.monotonic()
        while True:
            attempts += 1
            left = deadline - time.monotonic()
            try:
                ep = await ucxx.create_endpoint(queue.receiver_address, queue.port,
                                                connect_timeout=max(0.1, min(CONNECT_ATTEMPT_S, left)))
                break
            except Exception as exc:  # ucxx raises its UCXXError kinds, asyncio its TimeoutError
                text = str(exc) or type(exc).__name__
                if "Invalid IP address or hostname" in text:
                    raise UcxError(f"{self.where}: receiver_address {queue.receiver_address!r} is not an address "
                                   f"UCX can reach ({text})") from None
                retry = self.context.reconnect and attempts < queue.maximum_connection_retries
                if not retry or time.monotonic() + RETRY_PERIOD_S >= deadline:
                    raise UcxError(f"{self.where}: no UcxReceiver answered at {self.peer} after {attempts} "
                                   f"attempt{'s' if attempts > 1 else ''} in {time.monotonic() - started:.1f} s "
                                   f"({type(exc).__name__}: {text}); is the receiving part started, and the "
                                   f"address and port right? (UcxContext reconnect: {self.context.reconnect}, "
                                   f"connect_timeout_ms: {self.context.connect_timeout_ms})") from None
                await asyncio.sleep(RETRY_PERIOD_S)
        self.ep = ep
        # The hello and its answer are send_obj pairs in every protocol version: a peer of another one is named.
        hello = {"hello": True, "layout": LAYOUT, "source": queue.path, "cpu_data_only": self.context.cpu_data_only}
        try:
            await ep.send_obj(_json(hello))
            reply = json.loads(bytes(await asyncio.wait_for(ep.recv_obj(), HELLO_TIMEOUT_S)).decode())
        except Exception as exc:
            raise UcxError(f"{self.where}: the peer at {self.peer} did not answer the hello "
                           f"({type(exc).__name__}: {exc}); is it a cubind.graph UcxReceiver?") from None
        if not reply.get("ok"):
            raise UcxError(f"{self.where}: the UcxReceiver at {self.peer} refused the connection: {reply.get('error')}")
        with self.lock:
            self.remote = {"path": reply["path"], "capacity": int(reply["capacity"]), "policy": int(reply["policy"])}
            self.credits = self.remote["capacity"]
        self.outbox = asyncio.Queue()
        self.to_send = Handoff(self.context.engine, self.outbox)
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._send_loop()), loop.create_task(self._control_loop())]

    async def _send_loop(self):
        """Up to ``SEND_WINDOW`` messages in flight: the next message's
        sends are posted while the ones before still complete (a rendezvous
        waits for the receiver), in the order of the queue (one task per UCX
        message, made here in order: each posts at its first step)."""
        loop = asyncio.get_running_loop()
        in_flight = collections.deque()
        try:
            while True:
                item = await self.outbox.get()
                if item is _BYE:
                    while in_flight:
                        await self._sent(*in_flight.popleft())
                    with self.lock:
                        sent = self.sent
                    await send_note(self.ep, _json({"bye": True, "sent": sent}))
                    with self.lock:
                        self.bye_sent = True
                    return
                header, buffers, ready = item
                taken = ()
                if ready is not None:
                    ordinal = self.queue.entity.device or 0
                    self.context.engine.use_device(ordinal)
                    await after_producer(loop, ready, ordinal)
                    buffers, taken = self.staging.stage(buffers, ordinal)
                # The parts of one message keep each other (and the message's arrays) alive until all are sent.
                parts = [loop.create_task(self.ep.send(part)) for part in (*note_frames(header), *buffers)]
                in_flight.append((parts, taken))
                while in_flight and (len(in_flight) > SEND_WINDOW or all(t.done() for t in in_flight[0][0])):
                    await self._sent(*in_flight.popleft())
        except Exception as exc:
            self._fail(UcxError(f"{self.where}: the connection to the UcxReceiver at {self.peer} was lost "
                                f"while sending message {self.sent + 1} ({type(exc).__name__}: {exc})"))
        finally:
            for parts, _ in in_flight:
                for task in parts:
                    task.cancel()

    async def _sent(self, parts, taken):
        """Waits for one message's UCX sends; its failure is raised once all
        have ended. Its staging blocks are then free for a later message."""
        for result in await asyncio.gather(*parts, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result
        self.staging.give_back(taken)
        with self.lock:
            self.sent += 1

    async def _control_loop(self):
        answer = False
        try:
            while True:
                note = json.loads(bytes(await receive_note(self.ep)).decode())
                with self.lock:
                    if "credit" in note:
                        self.credits += int(note["credit"])
                    elif note.get("bye"):
                        self.peer_ended = True
                        self.credits = 0
                        # Our goodbye follows what is queued, with the count: the receiver's close waits for it.
                        answer, self.finished = not self.finished, True
                if note.get("bye") and answer:
                    self.to_send.put(_BYE)  # after the messages handed before it
                self.context.wake()
                if note.get("bye"):
                    return
        except Exception as exc:
            if self.bye_sent:
                return  # the receiver closes once it has our goodbye
            self._fail(UcxError(f"{self.where}: the connection to the UcxReceiver at {self.peer} "
                                f"({self.remote['path']}) was lost ({type(exc).__name__}: {exc or 'peer gone'})"))

    async def close(self, failed, timeout):
        """Sends what is queued and a goodbye (unless the run failed), then closes."""
        if self.outbox is not None and not failed and self.failure is None:
            with self.lock:
                queue_bye, self.finished = not self.finished, True
            if queue_bye:
                self.to_send.put(_BYE)
            try:
                await asyncio.wait_for(asyncio.shield(self.tasks[0]), timeout)
            except asyncio.TimeoutError:
                self._fail(UcxError(f"{self.where}: {self.queued - self.sent} message(s) still unsent to {self.peer} "
                                    f"after {timeout:.0f} s at the end of the run"))
        with self.lock:
            self.closing = True
        await _close_endpoint(self.ep, self.tasks)


class InLink(_Link):
    """A UcxReceiver's listener and its one connection."""

    def reset(self):
        super().reset()
        self.listener = None
        self.peer = None
        self.received = 0
        self.expected = None
        self.connected = None
        self.credit_box = None
        self.to_grant = None  # the Handoff into credit_box: credits, then the goodbye
        self.tasks = []
        self.peer_closed = None
        self.said_bye = None
        self.finished = False

    def active(self):
        """The transmitter may still send: connected, not said goodbye, not failed,
        and this queue's entity may still read."""
        with self.lock:
            return self.peer is not None and not self.peer_ended and self.failure is None and not self.finished

    def finish(self):
        """Its entity will not read again: a goodbye tells the transmitter, whose
        run then stops waiting for room here (a message it publishes after
        that is an error, not a silent loss)."""
        with self.lock:
            if self.finished or self.credit_box is None or self.peer is None:
                return
            self.finished = True
        self.to_grant.put(_BYE)

    def grant(self, count):
        """``count`` messages left the queue (read or dropped): their room goes back to the transmitter."""
        if count and self.to_grant is not None:
            self.to_grant.put(count)

    def counts(self):
        with self.lock:
            return {"received": self.received, "dropped": self.queue.dropped, "peer": self.peer}

    # -- on the engine's loop

    def listen(self, ucxx):
        queue = self.queue
        self.connected = asyncio.get_running_loop().create_future()
        self.credit_box = asyncio.Queue()
        self.to_grant = Handoff(self.context.engine, self.credit_box)
        self.peer_closed = asyncio.Event()
        self.said_bye = asyncio.Event()
        try:
            self.listener = ucxx.create_listener(self._accept, queue.port)
        except Exception as exc:
            busy = type(exc).__name__ == "UCXXBusyError"
            raise UcxError(f"{self.where}: cannot listen on port {queue.port}"
                           f"{': the port is in use' if busy else ''} ({type(exc).__name__}: {exc})") from None

    async def wait_connected(self, deadline):
        try:
            await asyncio.wait_for(asyncio.shield(self.connected), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise UcxError(f"{self.where}: no UcxTransmitter connected to port {self.queue.port} in "
                           f"{self.context.connect_timeout_ms} ms (UcxContext connect_timeout_ms); is the "
                           f"sending part started, with this host's address and port?") from None
        if self.failure is not None:
            raise self.failure

    async def _accept(self, ep):
        try:
            hello = json.loads(bytes(await asyncio.wait_for(ep.recv_obj(), HELLO_TIMEOUT_S)).decode())
            if not isinstance(hello, dict) or not hello.get("hello"):
                raise ValueError("not a hello")
        except Exception as exc:
            self._refused(f"a peer that is not a cubind.graph UcxTransmitter connected ({type(exc).__name__}: {exc})")
            return
        if self.peer is not None:
            # A second transmitter is turned away; the connection made stays (and its run goes on).
            await _answer(ep, {"ok": False, "error": f"{self.queue.path} is already connected to {self.peer} "
                                                     f"(one UcxTransmitter per UcxReceiver)"})
            return
        problem = self._mismatch(hello)
        if problem is not None:
            await _answer(ep, {"ok": False, "error": problem})
            self._refused(f"refused {hello.get('source')!r}: {problem}")
            return
        await _answer(ep, {"ok": True, "path": self.queue.path, "capacity": self.queue.capacity,
                           "policy": self.queue.policy})
        with self.lock:
            self.ep, self.peer = ep, hello["source"]
        if not self.connected.done():
            self.connected.set_result(True)
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._credit_loop())]
        self.context.wake()
        await self._receive_loop()

    def _mismatch(self, hello):
        theirs = hello.get("layout")
        if theirs != LAYOUT:
            keys = sorted(k for k in set(LAYOUT) | set(theirs or {}) if (theirs or {}).get(k) != LAYOUT.get(k))
            diff = ", ".join(f"{k}: theirs {(theirs or {}).get(k)!r}, ours {LAYOUT.get(k)!r}" for k in keys)
            return f"the message layouts differ ({diff})"
        if bool(hello.get("cpu_data_only")) != self.context.cpu_data_only:
            return (f"the UcxContexts differ on cpu_data_only (theirs {hello.get('cpu_data_only')}, ours "
                    f"{self.context.cpu_data_only}): device tensors would be sent where they cannot be received")
        return None

    def _refused(self, text):
        self._fail(UcxError(f"{self.where}: {text}"))
        if self.connected is not None and not self.connected.done():
            self.connected.set_result(False)

    async def _receive_loop(self):
        """The next header's receive is posted as soon as the current
        message's buffers' are (tagged messages match in the order their
        receives are posted), so it is under way while the buffers arrive."""
        ep, where = self.ep, f"entity {self.queue.entity.name!r}, {self.queue.path}"
        loop = asyncio.get_running_loop()
        next_note = loop.create_task(receive_note(ep))
        try:
            while True:
                try:
                    raw = await next_note
                except Exception as exc:
                    if not self.peer_ended:
                        self._fail(UcxError(f"{self.where}: the connection from {self.peer} was lost after "
                                            f"{self.received} message(s) ({type(exc).__name__}: {exc or 'peer gone'})"))
                    return
                try:
                    note = json.loads(bytes(raw).decode())
                except ValueError:
                    note = None
                if isinstance(note, dict) and note.get("bye"):
                    self._ended(note)
                    await self._until_closed(ep)
                    return
                try:
                    entries = decode_header(raw, f"{where}: message {self.received + 1} from {self.peer}")
                    tensors, receives = self._post_tensors(ep, entries)
                    next_note = loop.create_task(receive_note(ep))
                    for result in await asyncio.gather(*receives, return_exceptions=True):
                        if isinstance(result, BaseException):
                            raise result
                    message = assemble(entries, tensors)
                    grant = self.queue.deliver_remote(message)
                except (WireError, QueueFullError) as exc:
                    self._fail(exc)
                    return
                except Exception as exc:
                    self._fail(UcxError(f"{self.where}: message {self.received + 1} from {self.peer} was lost "
                                        f"({type(exc).__name__}: {exc})"))
                    return
                with self.lock:
                    self.received += 1
                self.grant(grant)
                self.context.wake()
        finally:
            if not next_note.done():
                next_note.cancel()

    async def _until_closed(self, ep):
        """After the goodbye the transmitter closes first: the listening
        port's side of the connection then leaves no TIME_WAIT behind, and
        the app can be started again at once."""
        try:
            await receive_note(ep)
        except Exception:
            pass
        self.peer_closed.set()

    def _post_tensors(self, ep, entries):
        """The arrays a message's tensors go into, and their receives posted
        in the header's order (one task each, made here: each posts at its
        first step, before any receive made after it)."""
        tensors, device = {}, False
        for entry in entries:
            if entry["kind"] == "tensor":
                tensors[entry["name"]] = self.context.allocate(self.queue, entry)
                device = device or entry["storage"] == "device"
        if device:
            self.context.engine.use_device(self.queue.entity.device or 0)
            self.context.allocations_ready(self.queue)
        loop = asyncio.get_running_loop()
        receives = [loop.create_task(ep.recv(tensors[entry["name"]])) for entry in entries
                    if entry["kind"] == "tensor" and entry["nbytes"]]
        return tensors, receives

    def _ended(self, note):
        with self.lock:
            self.peer_ended = True
            self.expected = int(note.get("sent", -1))
            lost = self.expected - self.received
        self.said_bye.set()
        if lost:
            self._fail(UcxError(f"{self.where}: {self.peer} sent {self.expected} message(s), {self.received} "
                                f"arrived"))
        self.context.wake()

    async def _credit_loop(self):
        try:
            while True:
                count = await self.credit_box.get()
                if count is _BYE:
                    await send_note(self.ep, _json({"bye": True}))
                    return
                while not self.credit_box.empty():  # credits queued meanwhile go in one note
                    more = self.credit_box.get_nowait()
                    if more is _BYE:
                        self.credit_box.put_nowait(_BYE)
                        break
                    count += more
                await send_note(self.ep, _json({"credit": count}))
        except Exception:
            return  # the receive loop reports a lost connection

    async def close(self, failed, timeout):
        if self.tasks and not self.peer_ended and not failed:
            if not self.finished:
                self.finished = True
                self.to_grant.put(_BYE)
            try:
                await asyncio.wait_for(asyncio.shield(self.tasks[0]), timeout)
                # Our goodbye is out; the transmitter's comes once its run ends, with its count: what
                # it sent meanwhile is received and counted, not lost with the connection.
                await asyncio.wait_for(self.said_bye.wait(), timeout)
            except asyncio.TimeoutError:
                self._fail(UcxError(f"{self.where}: {self.peer} did not end its sending in {timeout:.0f} s "
                                    f"after this queue's entity ended ({self.received} message(s) arrived)"))
        if self.peer_ended and self.peer_closed is not None:
            try:
                await asyncio.wait_for(self.peer_closed.wait(), PEER_CLOSE_S)
            except asyncio.TimeoutError:
                pass
        with self.lock:
            self.closing = True
        await _close_endpoint(self.ep, self.tasks)
        if self.listener is not None:
            self.listener.close()
        if self.connected is not None and not self.connected.done():
            self.connected.cancel()


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


async def _answer(ep, obj):
    try:
        await ep.send_obj(_json(obj))
    except Exception:
        pass  # the peer left; it learns nothing more from us


async def _close_endpoint(ep, tasks):
    for task in tasks:
        if not task.done():
            task.cancel()
    if ep is not None:
        try:
            await asyncio.wait_for(ep.close(), 2)
        except Exception:
            pass  # closing a connection whose peer is gone
