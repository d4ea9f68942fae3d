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
import time

from cubind.graph.model.queues import QueueFullError

from .receiving import ReceiveBlocks
from .transport import (
    BYE,
    HELLO_TIMEOUT_S,
    DataRoute,
    Handoff,
    Link,
    UcxError,
    answer,
    as_json,
    close_endpoint,
    data_route_offer,
    log,
    lost_connection,
    receive_note,
    send_note,
)
from .wire import LAYOUT, WireError, assemble, decode_header

PEER_CLOSE_S = 2.0


class _Connection:
    """One transmitter's connection: its endpoint, the credits and goodbye
    to send on it, and what arrived on it (a restarted transmitter makes
    another, which counts from zero as that transmitter does)."""

    def __init__(self, ep, peer, engine):
        self.ep, self.peer = ep, peer
        self.box = asyncio.Queue()
        self.to_grant = Handoff(engine, self.box)  # credits, then the goodbye
        self.tasks = []
        self.received = 0
        self.credits = 0  # the room granted when it was accepted
        self.again = False  # it follows a lost connection
        self.arrived = None  # what arrived on that one, where it came from the same queue path
        self.data_tag = None  # the tag of its data route's buffers, where it was offered one
        self.said_bye = asyncio.Event()
        self.closed = asyncio.Event()  # the transmitter closed after its goodbye


class InLink(Link):
    """A UcxReceiver's listener and its one connection at a time."""

    def reset(self):
        super().reset()
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
        self.blocks = None  # the device memory its tensors are received into, made at the first

    def receive_blocks(self, ordinal):
        if self.blocks is None:
            self.blocks = ReceiveBlocks(ordinal)
        return self.blocks

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

    def grant(self, count):
        """``count`` messages left the queue (read or dropped): their room goes
        back to the transmitter connected now (or to the next one's credits)."""
        if not count:
            return
        with self.lock:
            self.held -= count
            handoff = None if self.conn is None else self.conn.to_grant
        if handoff is not None:
            handoff.put(count)

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
        offer = data_route_offer(hello, self.context.engine)
        conn.data_tag = None if offer is None else offer["tag"]
        await answer(ep, {"ok": True, "path": self.queue.path, "capacity": self.queue.capacity,
                          "policy": self.queue.policy, "credits": conn.credits, "arrived": conn.arrived,
                          "data": offer})
        if conn.again:
            log.warning("%s: %s connected (again, after a lost connection); receiving resumes with room for %d "
                        "message(s)", self.where, conn.peer, conn.credits)
        if not self.connected.done():
            self.connected.set_result(True)
        # The credit loop starts after the answer: a credit sent before it would be read as the answer.
        conn.tasks.append(asyncio.get_running_loop().create_task(self._credit_loop(conn)))
        self.context.wake()
        await self._receive_loop(conn)
        with self.lock:
            replaced = conn is not self.conn
        if replaced:  # lost: the current connection (if any) is another one; close() closes that
            await close_endpoint(conn.ep, conn.tasks)

    def _connection(self, ep, peer):
        """The connection of a transmitter just accepted, made current (the
        lock held), with its credits (the room the queue has left) and, where
        it follows a lost connection from the same queue path, how many
        messages arrived on that one (the transmitter, if it is the same,
        counts the rest as lost)."""
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
        conn.credits = max(0, self.queue.capacity - self.held)
        return conn

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

    async def _receive_loop(self, conn):
        """The next header's receive is posted as soon as the current
        message's buffers' are (tagged messages match in the order their
        receives are posted), so it is under way while the buffers arrive."""
        ep, where = conn.ep, f"entity {self.queue.entity.name!r}, {self.queue.path}"
        loop = asyncio.get_running_loop()
        next_note = loop.create_task(receive_note(ep))
        try:
            while True:
                try:
                    raw = await next_note
                except Exception as exc:
                    if self.peer_ended:
                        return
                    text = (f"{self.where}: the connection from {conn.peer} was lost after {conn.received} "
                            f"message(s) ({type(exc).__name__}: {exc or 'peer gone'})")
                    if lost_connection(exc):
                        self._lost(conn, text)
                    else:  # a note that is not ours (its length past the limit)
                        self._fail(UcxError(text))
                    return
                try:
                    note = json.loads(bytes(raw).decode())
                except ValueError:
                    note = None
                if isinstance(note, dict) and note.get("bye"):
                    self._ended(conn, note)
                    await self._until_closed(conn)
                    return
                try:
                    entries = decode_header(raw, f"{where}: message {conn.received + 1} from {conn.peer}")
                    tensors, receives = self._post_tensors(conn, entries)
                    next_note = loop.create_task(receive_note(ep))
                    for result in await asyncio.gather(*receives, return_exceptions=True):
                        if isinstance(result, BaseException):
                            raise result
                    message = assemble(entries, tensors)
                    with self.lock:
                        self.held += 1
                    grant = self.queue.deliver_remote(message)
                except (WireError, QueueFullError) as exc:
                    self._fail(exc)
                    return
                except Exception as exc:
                    text = (f"{self.where}: message {conn.received + 1} from {conn.peer} was lost "
                            f"({type(exc).__name__}: {exc})")
                    if lost_connection(exc):
                        self._lost(conn, text)
                    else:
                        self._fail(UcxError(text))
                    return
                with self.lock:
                    self.received += 1
                    conn.received += 1
                self.grant(grant)
                self.context.wake()
        finally:
            if not next_note.done():
                next_note.cancel()

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

    async def _until_closed(self, conn):
        """After the goodbye the transmitter closes first: the listening
        port's side of the connection then leaves no TIME_WAIT behind, and
        the app can be started again at once."""
        try:
            await receive_note(conn.ep)
        except Exception:
            pass
        conn.closed.set()

    def _post_tensors(self, conn, entries):
        """The arrays a message's tensors go into, and their receives posted
        in the header's order (one task each, made here: each posts at its
        first step, before any receive made after it): of the connection's
        messages, or of its data route's tag (through the connection's
        endpoint all the same, so that its loss cancels them)."""
        tensors, device = {}, False
        for entry in entries:
            if entry["kind"] == "tensor":
                tensors[entry["name"]] = self.context.allocate(self.queue, entry)
                device = device or entry["storage"] == "device"
        if device:
            self.context.engine.use_device(self.queue.entity.device or 0)
            self.context.allocations_ready(self.queue)
        loop, tag = asyncio.get_running_loop(), conn.data_tag
        receive = conn.ep.recv if tag is None else (lambda buffer: DataRoute.receive(conn.ep, buffer, tag))
        receives = [loop.create_task(receive(tensors[entry["name"]])) for entry in entries
                    if entry["kind"] == "tensor" and entry["nbytes"]]
        return tensors, receives

    def _ended(self, conn, note):
        with self.lock:
            self.peer_ended = True
            expected = int(note.get("sent", -1))
            missing = expected - conn.received
        conn.said_bye.set()
        if missing:
            self._fail(UcxError(f"{self.where}: {conn.peer} sent {expected} message(s), {conn.received} arrived"))
        self.context.wake()

    async def _credit_loop(self, conn):
        box = conn.box
        try:
            while True:
                count = await box.get()
                if count is BYE:
                    await send_note(conn.ep, as_json({"bye": True}))
                    return
                while not box.empty():  # credits queued meanwhile go in one note
                    more = box.get_nowait()
                    if more is BYE:
                        box.put_nowait(BYE)
                        break
                    count += more
                await send_note(conn.ep, as_json({"credit": count}))
        except Exception:
            return  # the receive loop reports a lost connection

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
                await asyncio.wait_for(asyncio.shield(conn.tasks[0]), timeout)
                # Our goodbye is out; the transmitter's comes once its run ends, with its count: what
                # it sent meanwhile is received and counted, not lost with the connection.
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
            await close_endpoint(conn.ep, conn.tasks)
        if self.listener is not None:
            self.listener.close()
        if self.blocks is not None:
            self.blocks.close()
        if self.connected is not None and not self.connected.done():
            self.connected.cancel()
