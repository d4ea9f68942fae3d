"""A UcxTransmitter's connection (``OutLink``): it connects to the
receiver, sends the messages its transmitter publishes (a header, then
each tensor from its memory) and reads the receiver's credits and goodbye
(``transport.py`` says the protocol).

With the UcxContext's ``reconnect`` (GXF's), a connection lost mid-run is
made again, as GXF's UcxTransmitter does before its next send: attempts
every ``RETRY_PERIOD_S``, at most ``maximum_connection_retries`` of them
within ``connect_timeout_ms``, then the run fails naming both. Meanwhile
the remote queue has no room (a ``DownstreamReceptiveSchedulingTerm``
holds the producer, as GXF's blocking send does), and what cannot be
delivered is counted in ``lost``: any message published while there is no
connection, and of those handed to the lost one, the ones that did not
arrive (the receiver that comes back says how many did where it is the
one that had them; a restarted one cannot, and then the ones the lost
receiver had not confirmed, read or dropped, are counted). The loss and
the return are logged."""

import asyncio
import collections
import json
import time

from cubind.graph.model.queues import FAULT, REJECT, QueueFullError

from .sendpath import ENCODED_KEPT, Connection, SendPath
from .staging import DeviceStaging
from .transport import (
    HELLO_TIMEOUT_S,
    Link,
    UcxError,
    as_json,
    close_channel,
    close_endpoint,
    log,
    lost_connection,
    peer_checks,
    place,
    receive_note,
)
from .wire import LAYOUT

CONNECT_ATTEMPT_S = 2.0
RETRY_PERIOD_S = 0.1
# How often a closing transmitter looks whether its data path has sent everything.
DRAIN_POLL_S = 0.001


class OutLink(Link, SendPath):
    """A UcxTransmitter's connection; its per-message half (room, delivery,
    credits) is ``sendpath.SendPath``'s, compiled."""

    def reset(self):
        super().reset()
        self.credits = 0
        self.remote = None  # the receiver's answer: path, capacity, policy
        self.conn = None  # None while reconnecting
        self.sent = 0
        self.lost = 0
        self.unsettled = None  # of a lost connection: (messages handed to it, not confirmed, sent)
        self.carried = []  # of a lost connection: the messages it never sent, for the next one
        self.reconnects = 0
        self.reconnecting = False
        self.reconnector = None
        self.finished = False
        self.staging = DeviceStaging()
        self.encoded = collections.deque(maxlen=ENCODED_KEPT)
        self.ordinal = self.queue.entity.device or 0
        # Its own queue's capacity: as many published messages may wait here for the remote room.
        self.window = self.queue.capacity

    @property
    def peer(self):
        return f"{self.queue.receiver_address}:{self.queue.port}"

    # -- the scheduler's side (any thread)

    def active(self):
        """Credits still to come back (the receiver holds or is sent messages),
        or a connection being made again (room, or the goodbye to give, to come)."""
        with self.lock:
            if self.remote is None or self.peer_ended or self.failure is not None:
                return False
            return self.reconnecting or (not self.finished and self.credits < self.remote["capacity"] + self.window)

    def finish(self):
        """Its entity will not publish again: a goodbye follows what is queued,
        so that the receiver's run can end (in this process or another); while
        reconnecting, it is sent once connected."""
        with self.lock:
            if self.finished or self.remote is None:
                return
            self.finished = True
            if self.conn is not None:
                self._bye(self.conn)

    def _bye(self, conn):
        """The goodbye after what is queued (the lock held), with the count."""
        if not conn.bye_sent:
            conn.bye_sent = True
            conn.channel.bye(conn.queued)

    def _room_anyway(self):
        """Where a message finds a failure, no connection, an ended receiver
        or no room (the lock held): raises, counts it lost or dropped, or
        (policy 0 with no room) says it is sent anyway."""
        if self.failure is not None:
            raise self.failure
        if self.reconnecting:
            # No connection: not queued for a receiver that may not come back, counted instead.
            self.lost += 1
            return False
        if self.peer_ended:
            # The receiving entity ended: as a queue nobody reads, no room is left. A message decided
            # before its goodbye arrived is counted as dropped (the counts say so), not sent into a void.
            self.dropped += 1
            return False
        policy = self.remote["policy"]
        if policy == REJECT:
            self.dropped += 1
            return False
        if policy == FAULT:
            raise QueueFullError(f"{self.where}: the UcxReceiver {self.remote['path']} at {self.peer} is "
                                 f"full (capacity {self.remote['capacity']}, policy 2: fault), and {self.window} "
                                 f"more wait here for its room (this transmitter's capacity); add a "
                                 f"DownstreamReceptiveSchedulingTerm on {self.queue.name}")
        return True  # policy 0: sent anyway; the receiver drops its oldest and gives that credit back

    def counts(self):
        with self.lock:
            if self.conn is not None:
                self._settle_sent(self.conn)
            return {"sent": self.sent, "dropped": self.dropped, "lost": self.lost, "reconnects": self.reconnects,
                    "peer": self.peer, "remote": self.remote["path"] if self.remote else None}

    # -- on the engine's loop

    async def connect(self, ucxx, deadline):
        ep, reply, _ = await self._dial(ucxx, deadline)
        self._begin(ep, reply, await self._channel(ep, reply))

    async def _channel(self, ep, reply):
        """The data path to the receiver's pump, from its answer."""
        try:
            data = reply["data"]
            return self.context.engine.pump().open(bytes.fromhex(data["address"]), int(data["tag"]),
                                                   peer_checks(data["place"]), False, self)
        except Exception as exc:
            await close_endpoint(ep, ())
            raise UcxError(f"{self.where}: the UcxReceiver at {self.peer} answered, but its data path could not "
                           f"be reached ({type(exc).__name__}: {exc})") from None

    async def _dial(self, ucxx, deadline):
        """An endpoint to the receiver and its answer to the hello, within
        the attempts that ``reconnect``, ``maximum_connection_retries`` and
        ``deadline`` allow. A receiver not up, and one still holding an old
        connection of ours ("busy": it has not seen that one go yet), are
        tried again."""
        attempts, started = 0, time.monotonic()
        while True:
            attempts += 1
            ep, reply = await self._attempt(ucxx, deadline)
            if reply.get("ok"):
                return ep, reply, attempts
            retry = self.context.reconnect and attempts < self.queue.maximum_connection_retries
            if not retry or time.monotonic() + RETRY_PERIOD_S >= deadline:
                raise UcxError(f"{self.where}: {reply['why']} after {attempts} attempt{'s' if attempts > 1 else ''} "
                               f"in {time.monotonic() - started:.1f} s ({reply['error']}); {reply['hint']} "
                               f"(UcxContext reconnect: {self.context.reconnect}, UcxTransmitter "
                               f"maximum_connection_retries: {self.queue.maximum_connection_retries}, "
                               f"connect_timeout_ms: {self.context.connect_timeout_ms})")
            await asyncio.sleep(RETRY_PERIOD_S)

    async def _attempt(self, ucxx, deadline):
        """``(endpoint, the receiver's answer)``, or ``(None, why not)`` where
        another attempt may succeed; ``UcxError`` where none can."""
        queue = self.queue
        wait = max(0.1, min(CONNECT_ATTEMPT_S, deadline - time.monotonic()))
        try:
            ep = await ucxx.create_endpoint(queue.receiver_address, queue.port, connect_timeout=wait)
        except Exception as exc:  # ucxx raises its UCXXError kinds, asyncio its TimeoutError
            text = str(exc) or type(exc).__name__
            if "Invalid IP address or hostname" in text:
                raise UcxError(f"{self.where}: receiver_address {queue.receiver_address!r} is not an address "
                               f"UCX can reach ({text})") from None
            return None, {"why": f"no UcxReceiver answered at {self.peer}", "error": f"{type(exc).__name__}: {text}",
                          "hint": "is the receiving part started, and the address and port right?"}
        # The hello and its answer are send_obj pairs in every protocol version: a peer of another one is named.
        hello = {"hello": True, "layout": LAYOUT, "source": queue.path, "cpu_data_only": self.context.cpu_data_only,
                 "place": place(), "data": {"address": self.context.engine.pump().address.hex()}}
        try:
            await ep.send_obj(as_json(hello))
            reply = json.loads(bytes(await asyncio.wait_for(ep.recv_obj(), HELLO_TIMEOUT_S)).decode())
        except Exception as exc:
            await close_endpoint(ep, ())
            raise UcxError(f"{self.where}: the peer at {self.peer} did not answer the hello "
                           f"({type(exc).__name__}: {exc}); is it a cubind.graph UcxReceiver?") from None
        if reply.get("ok"):
            return ep, reply
        await close_endpoint(ep, ())
        if not reply.get("busy"):
            raise UcxError(f"{self.where}: the UcxReceiver at {self.peer} refused the connection: {reply.get('error')}")
        return None, {"why": f"the UcxReceiver at {self.peer} refused the connection", "error": reply.get("error"),
                      "hint": "is another UcxTransmitter sending to it?"}

    def _begin(self, ep, reply, channel):
        """``ep`` becomes the connection, ``channel`` its data path: the room
        is what the receiver grants (its capacity, less what its queue still
        holds of a lost connection), and the window: that many messages more
        wait on this side, and the data path posts them as credits arrive."""
        conn = Connection(ep, channel)
        channel.gate(int(reply["credits"]))
        with self.lock:
            self.remote = {"path": reply["path"], "capacity": int(reply["capacity"]), "policy": int(reply["policy"])}
            # With those the receiver gave back before this answer was read (``pump_ready`` leaves a
            # channel's credits while it is not the connection's): one told of no later note waited for.
            self.credits = int(reply["credits"]) + self.window + channel.take_credits()
            self.conn, self.reconnecting = conn, False
            carried, self.carried = self.carried, []
            self._resend(conn, carried)  # those the lost connection never sent, first
            if self.finished:  # the entity ended while there was no connection: the receiver still hears the goodbye
                self._bye(conn)
        conn.tasks = [asyncio.get_running_loop().create_task(self._control_loop(conn))]

    async def _control_loop(self, conn):
        """The receiver's notes on the connection: its goodbye (its entity
        ended: no room is left, and ours follows what is queued), then its
        "ended" once it has ours; a lost connection is seen here."""
        try:
            while True:
                note = json.loads(bytes(await receive_note(conn.ep)).decode())
                if note.get("ended"):
                    conn.ended.set()
                    return
                if note.get("bye"):
                    with self.lock:
                        self.peer_ended = True
                        self.credits = 0
                        # Those waiting for its credits will not get one: dropped, as one published now is.
                        self.dropped += self._discard_waiting(conn)
                        self.finished = True
                        self._bye(conn)  # the receiver's close waits for it
                    self.context.wake()
        except Exception as exc:
            if conn.ended.is_set():
                return
            if not lost_connection(exc):
                self._fail(UcxError(f"{self.where}: a note from the UcxReceiver at {self.peer} that cannot be read "
                                    f"({type(exc).__name__}: {exc})"))
                return
            self._lost(conn, f"{self.where}: the connection to the UcxReceiver at {self.peer} "
                             f"({self.remote['path']}) was lost ({type(exc).__name__}: {exc or 'peer gone'})")

    def _lost(self, conn, text):
        """``conn`` was lost (the receiver died, or the network between).
        Without ``reconnect`` (or after the receiver's goodbye) the run ends
        with ``text``; with it, what the receiver had not confirmed is
        counted as lost and the connection is made again."""
        with self.lock:
            if conn is not self.conn or self.failure is not None or self.closing:
                return
            again = self.context.reconnect and not self.peer_ended
            self._settle_sent(conn)
            if again:
                # Those still waiting on this side for its credits were never sent: they go on the next
                # connection. The receiver's queue is in order: its confirmations (credits) go first to
                # what it held before this connection, so what it had not confirmed of ours is the
                # lesser of the two.
                self.carried = self._take_waiting(conn)
                room = self.credits + len(self.carried) - self.window  # the receiver's, as it last said
                unconfirmed = max(0, min(conn.queued, self.remote["capacity"] - room))
                self.unsettled = (conn.queued, unconfirmed, conn.sent)
                self.credits, self.conn, self.reconnecting = 0, None, True
        if not again:
            self._fail(UcxError(text))
            return
        log.warning("%s; %d message(s) it had not confirmed may be lost; connecting again (UcxContext "
                    "reconnect: True, at most %d attempts in %d ms)", text, unconfirmed,
                    self.queue.maximum_connection_retries, self.context.connect_timeout_ms)
        self.reconnector = asyncio.get_running_loop().create_task(self._reconnect(conn, text))
        self.context.wake()

    async def _reconnect(self, old, text):
        await self._close(old, force=True)
        started = time.monotonic()
        try:
            ep, reply, attempts = await self._dial(self.context.engine.ucxx,
                                                   started + self.context.connect_timeout_ms / 1000)
        except UcxError as exc:
            self._settle(None, again=False)
            self._fail(UcxError(f"{text}, and was not made again: {str(exc).removeprefix(self.where + ': ')}"))
            return
        try:
            channel = await self._channel(ep, reply)
        except UcxError as exc:
            self._settle(None, again=False)
            self._fail(exc)
            return
        self._settle(reply.get("arrived"))
        with self.lock:
            self.reconnects += 1
            lost = self.lost
        self._begin(ep, reply, channel)
        log.warning("%s: connected again to the UcxReceiver at %s (%s) after %d attempt(s) in %.1f s; sending "
                    "resumes (%d message(s) lost in all)", self.where, self.peer, reply["path"], attempts,
                    time.monotonic() - started, lost)
        self.context.wake()

    def _settle(self, arrived, again=True):
        """Counts what the lost connection delivered and lost, so that every
        message handed to it is one of the two: delivered are the ``arrived``
        the receiver says it had of them or, where it cannot say (restarted,
        or none came back), those it had confirmed (read or dropped); the
        rest is lost. UCX's own completions cannot tell: the loss cancels
        sends that arrived, and an eager send completes before it does.
        Those it never sent go on the next connection, or (not ``again``)
        are lost too."""
        with self.lock:
            if not again:
                self.lost += len(self.carried)
                self.carried = []
            if self.unsettled is None:
                return
            queued, unconfirmed, sent = self.unsettled
            delivered = queued - unconfirmed if arrived is None else min(int(arrived), queued)
            self.lost += queued - delivered
            self.sent += delivered - sent
            self.unsettled = None

    async def close(self, failed, timeout):
        """Sends what is queued and a goodbye (unless the run failed, or ended
        while the connection was being made again), then closes."""
        if self.reconnector is not None and not self.reconnector.done():
            self.reconnector.cancel()
            await asyncio.gather(self.reconnector, return_exceptions=True)
            self._settle(None, again=False)
        conn = self.conn
        if conn is not None and not failed and self.failure is None:
            with self.lock:
                self.finished = True
                self._bye(conn)
            try:
                # Sent, then the receiver's "ended": it has every message and our goodbye.
                await asyncio.wait_for(self._drained(conn), timeout)
                await asyncio.wait_for(conn.ended.wait(), timeout)
            except asyncio.TimeoutError:
                with self.lock:
                    self._settle_sent(conn)
                self._fail(UcxError(f"{self.where}: {conn.queued - conn.sent} message(s) still unsent to {self.peer} "
                                    f"after {timeout:.0f} s at the end of the run"))
        with self.lock:
            self.closing = True
            if conn is not None:
                self._settle_sent(conn)
        if conn is not None:
            await self._close(conn, force=failed or self.failure is not None)

    async def _drained(self, conn):
        while not conn.channel.idle and conn.channel.failure is None:
            await asyncio.sleep(DRAIN_POLL_S)

    @staticmethod
    async def _close(conn, force):
        """Closes the data path (``force``: towards a peer that is gone, or
        a run that failed) and then the connection."""
        await close_channel(conn.channel, force)
        await close_endpoint(conn.ep, conn.tasks)
        conn.keep.clear()  # what the data path no longer reads
