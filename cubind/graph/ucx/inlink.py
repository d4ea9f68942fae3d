"""A UcxReceiver's listener and connection (``InLink``): it accepts its
transmitter, receives each message into the queue's back stage and sends
the credits of the messages that left the queue (``transport.py`` says
the protocol).

With the UcxContext's ``reconnect`` (GXF's), a connection lost mid-run is
not the end of the run: the listener takes the next transmitter that
connects (a restarted one) within ``connect_timeout_ms``, and grants it
the room the queue has left (messages of the lost connection still in the
queue are read as usual)."""

import asyncio
import json
import secrets
import threading
import time

from .recvpath import ReceivePath
from .transport import (
    BYE,
    HELLO_TIMEOUT_S,
    Handoff,
    Link,
    UcxError,
    answer,
    as_json,
    close_channel,
    close_endpoint,
    log,
    lost_connection,
    peer_checks,
    place,
    receive_note,
    send_note,
)
from .wire import LAYOUT

PEER_CLOSE_S = 2.0
# The note that tells the transmitter its goodbye arrived (after every message before it).
ENDED = object()


class _Connection:
    """One transmitter's connection: its endpoint, its data path
    (``pump.Channel``), the notes to send on the connection (our goodbye,
    the "ended" after theirs), and what arrived on it (a restarted
    transmitter makes another, which counts from zero as that transmitter
    does)."""

    def __init__(self, ep, peer, engine):
        self.ep, self.peer = ep, peer
        self.channel = None
        self.box = asyncio.Queue()
        self.to_grant = Handoff(engine, self.box)  # our goodbye, and the "ended"
        self.tasks = []
        self.received = 0
        self.credits = 0  # the room granted when it was accepted
        self.again = False  # it follows a lost connection
        self.arrived = None  # what arrived on that one, where it came from the same queue path
        self.said_bye = asyncio.Event()
        self.closed = asyncio.Event()  # the transmitter closed after its goodbye


class InLink(Link, ReceivePath):
    """A UcxReceiver's listener and its one connection at a time; what
    arrives on it is taken into the queue by ``recvpath.ReceivePath``'s
    ``pump_ready``, compiled."""

    def __init__(self, queue, context):
        # The pump's thread and each polling scheduler call ``pump_ready``: one at a time (recvpath.pyx).
        self.delivering = threading.Lock()
        super().__init__(queue, context)

    def reset(self):
        super().reset()
        self.allocator_asked = False  # the context's receive_allocator(): asked again at the first message
        self.listener = None
        self.connected = None  # the first connection: the run's open waits for it
        self.conn = None
        self.absent = None  # the peer of a lost connection, while a transmitter may connect again
        self.absent_received = 0  # what arrived on that connection: told to it when it comes back
        self.watch = None  # the task that ends the wait for it
        self.received = 0
        # Messages in the queue that came over UCX (less those read or dropped): a connection is
        # granted the rest of the capacity as credits; changed with the grants, under the lock.
        self.held = 0
        self.reconnects = 0
        self.finished = False

    def active(self):
        """The transmitter may still send (or one may connect again): not said
        goodbye, not failed, and this queue's entity may still read."""
        with self.lock:
            return ((self.conn is not None or self.absent is not None) and not self.peer_ended
                    and self.failure is None and not self.finished)

    def finish(self):
        """Its entity will not read again: a goodbye tells the transmitter, whose
        run then stops waiting for room here (a message it publishes after
        that is an error, not a silent loss)."""
        with self.lock:
            if self.finished:
                return
            self.finished = True
            handoff = None if self.conn is None else self.conn.to_grant
        if handoff is not None:
            handoff.put(BYE)

    def counts(self):
        with self.lock:
            peer = self.absent if self.conn is None else self.conn.peer
            return {"received": self.received, "dropped": self.queue.dropped, "peer": peer,
                    "reconnects": self.reconnects}

    # -- on the engine's loop

    def listen(self, ucxx):
        queue = self.queue
        self.connected = asyncio.get_running_loop().create_future()
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
        problem = self._mismatch(hello)
        with self.lock:
            busy = None if self.conn is None else self.conn.peer
            if busy is None and problem is None:
                conn = self._connection(ep, hello["source"])
        if busy is not None:
            # A second transmitter is turned away; the connection made stays (and its run goes on). "busy":
            # a restarted transmitter may be here before this side saw its old connection go; it tries again.
            await answer(ep, {"ok": False, "busy": True, "error": f"{self.queue.path} is already connected to "
                                                                  f"{busy} (one UcxTransmitter per UcxReceiver)"})
            return
        if problem is not None:
            await answer(ep, {"ok": False, "error": problem})
            self._refused(f"refused {hello.get('source')!r}: {problem}")
            return
        try:
            channel, data = self._channel(hello)
        except Exception as exc:
            with self.lock:
                if self.conn is conn:
                    self.conn = None
            why = f"its data path could not be made ({type(exc).__name__}: {exc})"
            await answer(ep, {"ok": False, "error": why})
            self._refused(f"refused {hello.get('source')!r}: {why}")
            return
        self._attach(conn, channel)
        await answer(ep, {"ok": True, "path": self.queue.path, "capacity": self.queue.capacity,
                          "policy": self.queue.policy, "credits": conn.credits, "arrived": conn.arrived,
                          "data": data})
        if conn.again:
            log.warning("%s: %s connected (again, after a lost connection); receiving resumes with room for %d "
                        "message(s)", self.where, conn.peer, conn.credits)
        if not self.connected.done():
            self.connected.set_result(True)
        # The note loop starts after the answer: a note sent before it would be read as the answer.
        conn.tasks.append(asyncio.get_running_loop().create_task(self._note_loop(conn)))
        self.context.wake()
        await self._watch(conn)
        with self.lock:
            replaced = conn is not self.conn
        if replaced:  # lost: the current connection (if any) is another one; close() closes that
            await close_channel(conn.channel, True)
            await close_endpoint(conn.ep, conn.tasks)

    def _channel(self, hello):
        """The data path from the transmitter's pump (its hello says where),
        and what the answer tells it: our pump's address, the connection's
        tag (ours to choose: one per connection, so that a lost one's
        messages are never taken for a new one's) and our place."""
        pump = self.context.engine.pump()
        tag = secrets.randbits(56) << 8
        channel = pump.open(bytes.fromhex(hello["data"]["address"]), tag, peer_checks(hello.get("place")), True, self)
        return channel, {"address": pump.address.hex(), "tag": tag, "place": place()}

    def _connection(self, ep, peer):
        """The connection of a transmitter just accepted, made current (the
        lock held) and, where it follows a lost connection from the same
        queue path, how many messages arrived on that one (the transmitter,
        if it is the same, counts the rest as lost). Its credits are reckoned
        once it has its channel (``_accept``)."""
        conn = _Connection(ep, peer, self.context.engine)
        conn.again = self.absent is not None
        if conn.again:
            self.reconnects += 1
            conn.arrived = self.absent_received if peer == self.absent else None
        if self.watch is not None:
            self.watch.cancel()
            self.watch = None
        self.conn, self.absent, self.peer_ended = conn, None, False
        if self.finished:  # the entity ended while the transmitter was away: no room, a goodbye
            conn.to_grant.put(BYE)
        return conn

    def _attach(self, conn, channel):
        """``channel`` becomes ``conn``'s data path, and its grant the room the
        queue has now, both under the lock ``grant`` reads the channel with:
        a message read before is in the grant, one read after is credited on
        the channel (reckoned when the connection was taken, a read in
        between gave its room to neither)."""
        with self.lock:
            conn.channel = channel
            conn.credits = max(0, self.queue.capacity - self.held)

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

    async def _watch(self, conn):
        """Waits on the connection: the transmitter sends nothing on it after
        the hello (its messages go on the data path) and closes it after its
        goodbye; an end before that goodbye is a lost connection."""
        try:
            await receive_note(conn.ep)
        except Exception as exc:
            if self.peer_ended:
                conn.closed.set()
                return
            text = (f"{self.where}: the connection from {conn.peer} was lost after {conn.received} "
                    f"message(s) ({type(exc).__name__}: {exc or 'peer gone'})")
            if lost_connection(exc):
                self._lost(conn, text)
            else:  # a note that is not ours (its length past the limit)
                self._fail(UcxError(text))
            return
        self._fail(UcxError(f"{self.where}: {conn.peer} sent a note on the connection after its hello (not a "
                            f"cubind.graph UcxTransmitter of this protocol, {LAYOUT['protocol']}?)"))

    def _lost(self, conn, text):
        """``conn`` was lost (its transmitter died, or the network between):
        with ``reconnect`` the next transmitter to connect is taken, within
        ``connect_timeout_ms``; without it, or once this queue's entity has
        ended, the run ends with ``text``."""
        with self.lock:
            if self.failure is not None or self.closing or conn is not self.conn:
                return
            wait = self.context.reconnect and not self.finished
            if wait:
                self.conn, self.absent, self.absent_received = None, conn.peer, conn.received
        if not wait:
            self._fail(UcxError(text))
            return
        ms = self.context.connect_timeout_ms
        log.warning("%s; waiting up to %d ms for a UcxTransmitter to connect again (UcxContext reconnect: True)",
                    text, ms)
        self.watch = asyncio.get_running_loop().create_task(self._await_return(text, ms))
        self.context.wake()

    async def _await_return(self, text, ms):
        await asyncio.sleep(ms / 1000)  # cancelled when a transmitter connects
        self._fail(UcxError(f"{text}, and no UcxTransmitter connected again in {ms} ms (UcxContext reconnect: "
                            f"True, connect_timeout_ms: {ms})"))

    def _ended(self, conn, expected):
        """The transmitter's goodbye (on the pump's thread): it sent
        ``expected`` messages, every one of which is taken by now; the
        transmitter hears that it arrived ("ended") and then closes."""
        with self.lock:
            self.peer_ended = True
            missing = expected - conn.received
        self.context.engine.soon(conn.said_bye.set)
        conn.to_grant.put(ENDED)
        if missing:
            self._fail(UcxError(f"{self.where}: {conn.peer} sent {expected} message(s), {conn.received} arrived"))
        self.context.wake()

    async def _note_loop(self, conn):
        """Our notes on the connection, in order: our goodbye (this entity
        reads no more), the "ended" after the transmitter's."""
        try:
            while True:
                item = await conn.box.get()
                await send_note(conn.ep, as_json({"bye": True} if item is BYE else {"ended": True}))
                if item is ENDED:
                    return
        except Exception:
            return  # the watch reports a lost connection

    async def close(self, failed, timeout):
        if self.watch is not None:
            self.watch.cancel()
        conn = self.conn
        if conn is not None and conn.tasks and not self.peer_ended and not failed:
            with self.lock:
                bye, self.finished = not self.finished, True
            if bye:
                conn.to_grant.put(BYE)
            try:
                # The transmitter's goodbye follows ours once its run ends, with its count: what it
                # sent meanwhile is received and counted, not lost with the connection.
                await asyncio.wait_for(conn.said_bye.wait(), timeout)
            except asyncio.TimeoutError:
                self._fail(UcxError(f"{self.where}: {conn.peer} did not end its sending in {timeout:.0f} s "
                                    f"after this queue's entity ended ({conn.received} message(s) arrived)"))
        if self.peer_ended and conn is not None:
            try:
                await asyncio.wait_for(conn.closed.wait(), PEER_CLOSE_S)
            except asyncio.TimeoutError:
                pass
        with self.lock:
            self.closing = True
        if conn is not None:
            await close_channel(conn.channel, failed or not self.peer_ended)
            await close_endpoint(conn.ep, conn.tasks)
        if self.listener is not None:
            self.listener.close()
        if self.connected is not None and not self.connected.done():
            self.connected.cancel()
