"""A UcxReceiver's listener and connection (``InLink``): it accepts its
transmitter, receives each message into the queue's back stage and sends
the credits of the messages that left the queue (``transport.py`` says
the protocol)."""

import asyncio
import json
import time

from cubind.graph.model.queues import QueueFullError

from .transport import (
    BYE,
    HELLO_TIMEOUT_S,
    Handoff,
    Link,
    UcxError,
    answer,
    as_json,
    close_endpoint,
    receive_note,
    send_note,
)
from .wire import LAYOUT, WireError, assemble, decode_header

PEER_CLOSE_S = 2.0


class InLink(Link):
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
        self.to_grant.put(BYE)

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
            await answer(ep, {"ok": False, "error": f"{self.queue.path} is already connected to {self.peer} "
                                                     f"(one UcxTransmitter per UcxReceiver)"})
            return
        problem = self._mismatch(hello)
        if problem is not None:
            await answer(ep, {"ok": False, "error": problem})
            self._refused(f"refused {hello.get('source')!r}: {problem}")
            return
        await answer(ep, {"ok": True, "path": self.queue.path, "capacity": self.queue.capacity,
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
                if count is BYE:
                    await send_note(self.ep, as_json({"bye": True}))
                    return
                while not self.credit_box.empty():  # credits queued meanwhile go in one note
                    more = self.credit_box.get_nowait()
                    if more is BYE:
                        self.credit_box.put_nowait(BYE)
                        break
                    count += more
                await send_note(self.ep, as_json({"credit": count}))
        except Exception:
            return  # the receive loop reports a lost connection

    async def close(self, failed, timeout):
        if self.tasks and not self.peer_ended and not failed:
            if not self.finished:
                self.finished = True
                self.to_grant.put(BYE)
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
        await close_endpoint(self.ep, self.tasks)
        if self.listener is not None:
            self.listener.close()
        if self.connected is not None and not self.connected.done():
            self.connected.cancel()

