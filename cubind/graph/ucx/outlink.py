"""A UcxTransmitter's connection (``OutLink``): it connects to the
receiver, sends the messages its transmitter publishes (a header, then
each tensor from its memory) and reads the receiver's credits and goodbye
(``transport.py`` says the protocol)."""

import asyncio
import collections
import json
import time

from cubind.graph.model.queues import FAULT, REJECT, QueueFullError

from .staging import DeviceStaging
from .transport import (
    BYE,
    HELLO_TIMEOUT_S,
    Handoff,
    Link,
    UcxError,
    after_producer,
    as_json,
    close_endpoint,
    note_frames,
    receive_note,
    send_note,
)
from .wire import LAYOUT, encode

CONNECT_ATTEMPT_S = 2.0
RETRY_PERIOD_S = 0.1
# Messages a transmitter has in flight on its connection (their sends posted, not yet complete).
SEND_WINDOW = 4


class OutLink(Link):
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
        self.to_send.put(BYE)

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
            await ep.send_obj(as_json(hello))
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
                if item is BYE:
                    while in_flight:
                        await self._sent(*in_flight.popleft())
                    with self.lock:
                        sent = self.sent
                    await send_note(self.ep, as_json({"bye": True, "sent": sent}))
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
                    self.to_send.put(BYE)  # after the messages handed before it
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
                self.to_send.put(BYE)
            try:
                await asyncio.wait_for(asyncio.shield(self.tasks[0]), timeout)
            except asyncio.TimeoutError:
                self._fail(UcxError(f"{self.where}: {self.queued - self.sent} message(s) still unsent to {self.peer} "
                                    f"after {timeout:.0f} s at the end of the run"))
        with self.lock:
            self.closing = True
        await close_endpoint(self.ep, self.tasks)

