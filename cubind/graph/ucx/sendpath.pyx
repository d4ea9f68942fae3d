# cython: language_level=3
"""A UcxTransmitter's per-message path, compiled (issue 47): what its
scheduler runs for every message it sends. ``OutLink`` (outlink.py) is a
``SendPath``; connecting, reconnecting, goodbyes and counts stay there, in
Python, on the engine's loop.

Per message the scheduler asks the room (``free``), hands the message over
(``deliver``: its header from publish, its buffers queued on the data
path after its ready event) and takes the credits that came back
(``pump_ready``, from the pump). In Python these cost a 1 MiB device
message about 12 us of the transmitting scheduler's 40 on the H200.

The state they share with the rest of the link lives in typed fields, read
and written under the link's ``lock`` as before; Python code reads them as
attributes."""

import asyncio
import collections

import numpy as np

from cubind.graph.model.message import Message, Tensor

from .transport import UcxError
from .wire import DTYPE_TEXT, ENCODED, encode

# Encodings kept from publish to delivery: more than a tick publishes on one transmitter.
ENCODED_KEPT = 64


def encode_published(message, where, device_allowed=True, limit=None):
    """``wire.encode``'s answer for ``message`` at publish: a message of
    tensors only whose layout was encoded before (most of a stream's) takes
    its header from wire's cache here; any other is checked and encoded by
    ``wire.encode``. In Python the encoding cost a 4 KiB device message 2.7
    of the transmitting scheduler's 10 us here, a quarter of it the call."""
    found = _known_encoding(message, device_allowed, limit)
    return encode(message, where, device_allowed, limit) if found is None else found


cdef object _known_encoding(object message, bint device_allowed, object limit):
    # The checks wire.encode makes (a dtype it has seen passed them; a device tensor
    # contiguous and allowed), the same key; None hands the message to wire.encode.
    if type(message) is not Message:
        return None
    cdef list keys = [], buffers = []
    for name, value in (<dict?>message._components).items():
        if type(value) is not Tensor:
            return None
        data = value.data
        text = DTYPE_TEXT.get(data.dtype)
        if text is None:
            return None
        storage = value.storage
        if storage == "device":
            if not device_allowed or not data.c_contiguous:
                return None
        nbytes = int(data.nbytes)
        keys.append((name, storage, tuple(data.shape), text, nbytes))
        if nbytes:
            buffers.append(data if storage == "device" else np.ascontiguousarray(data))
    header = ENCODED.get(tuple(keys))
    if header is None or (limit is not None and len(<bytes?>header) > limit):
        return None
    return header, buffers


cdef object _Array = None  # cubind.Array, taken at the first device message: importing this loads no driver


cdef bint _may_be_pooled(list buffers) except -1:
    # Whether staging.stage may copy any of ``buffers``: numpy arrays and cubind arrays
    # of cuMemAlloc memory it never does, and asking it cost a message 0.9 us.
    global _Array
    if _Array is None:
        import cubind
        _Array = cubind.Array
    for data in buffers:
        if type(data) is np.ndarray:
            continue
        if type(data) is _Array and getattr(data.memory, "pooled", None) is False:
            continue
        return True
    return False


cdef class Connection:
    """One connection to the receiver (a reconnect makes another): its
    endpoint, its data path (``pump.Channel``), the messages handed to it
    (``queued``), how many of them were sent (their sends complete), and
    what the queued ones hold until then (their arrays, staging blocks and
    ready events: ``keep``)."""

    cdef public object ep, channel, tasks, keep, ended
    cdef public long long queued, sent
    cdef public bint bye_sent
    cdef public bint cuda  # the data path was given the device's context (at the first device tensor)

    def __init__(self, ep, channel):
        self.ep, self.channel = ep, channel
        self.tasks = []
        self.queued = 0
        self.sent = 0
        self.keep = collections.deque()
        self.bye_sent = False
        self.cuda = False
        self.ended = asyncio.Event()  # the receiver has our goodbye


cdef class SendPath:
    """The per-message half of ``OutLink``; it stands in its transmitter's
    ``targets`` for the remote receiver: ``free()`` is the room left there
    (credits), and the scheduler's ``deliver()`` hands it the messages."""

    cdef public object lock
    cdef public object failure  # set once, under the lock (transport.Link)
    cdef public bint peer_ended, reconnecting
    cdef public long long credits, sent
    cdef public Connection conn  # None while reconnecting
    # (message, its encoding) from the transmitter's publish, in order, until delivered: a
    # message's header is made once (json.dumps cost a ping a tenth of its rate, made twice).
    cdef public object encoded
    cdef public object staging  # staging.DeviceStaging
    cdef public int ordinal  # the transmitting entity's device
    # Messages that may wait on this side for the receiver's credits (the transmitter's capacity):
    # the room is the remote queue's plus these. The data path posts a waiting one as a credit
    # arrives (``pump.Channel.gate``), not after the producer's next tick.
    cdef public long long window

    def free(self):
        # One field read, as whole without the lock as with it (the scheduler asks before each tick).
        return self.credits

    def remember(self, message, encoded):
        """``encoded``, ``wire.encode``'s answer for ``message`` at publish: its delivery sends
        that (a snapshot, as its ready event is), not an encoding made again."""
        self.encoded.append((message, encoded))

    cdef tuple _encoding(self, message):
        # Delivered in publish order: entries before this message's are of messages the
        # transmitter's queue dropped. One not found (pushed past publish) is encoded here.
        encoded = self.encoded
        while encoded:
            try:
                kept, encoding = encoded.popleft()
            except IndexError:  # another thread took the last
                break
            if kept is message:
                return encoding
        return encode(message, self.queue.path, not self.context.cpu_data_only)

    def deliver(self, message):
        cdef Connection conn
        cdef object taken = None, copied
        cdef bint forced = False
        header, buffers = self._encoding(message)
        ready = message.ready_event
        lock = self.lock
        lock.acquire()  # in try/finally, not ``with``: its __enter__/__exit__ cost twice as much (185 ns)
        try:
            # The usual case (connected, room left) in one test: every message takes this path.
            if self.failure is not None or self.reconnecting or self.peer_ended or self.credits <= 0:
                if not self._room_anyway():
                    return
                forced = True  # policy 0 past the room: sent now, the receiver drops its oldest
            conn = self.conn
            if conn.channel.sent != conn.sent:
                self._settle_sent(conn)
            if ready is not None and _may_be_pooled(buffers):
                buffers, taken, copied = self.staging.stage(buffers, self.ordinal, ready)
                if taken:  # sent once the copies are done (they follow the producer's work)
                    ready = copied
            self._hand_over(conn, (message, header, buffers, taken, ready), forced)
        finally:
            lock.release()

    cdef _hand_over(self, Connection conn, tuple kept, bint forced):
        """``kept`` (a message, its header, buffers, staging blocks and ready
        event) to ``conn``'s data path, which holds it until sent (the lock
        held); device buffers go from the device's primary context."""
        ready = kept[4]
        if ready is None:
            conn.channel.send(kept[1], kept[2], 0, forced)
        else:
            if not conn.cuda:
                conn.channel.use_cuda(self.context.engine.cuda_context(self.ordinal))
                conn.cuda = True
            conn.channel.send(kept[1], kept[2], int(ready.handle), forced)
        self.credits -= 1
        conn.queued += 1
        conn.keep.append(kept)

    cpdef _settle_sent(self, Connection conn):
        """Counts the messages the data path sent since the last look, and
        lets go of what they held (the lock held)."""
        cdef long long done = min(<long long>conn.channel.sent, conn.queued) - conn.sent
        cdef long long i
        for i in range(done):
            kept = conn.keep.popleft()
            if (<tuple>kept)[3]:
                self.staging.give_back((<tuple>kept)[3])
        conn.sent += done
        self.sent += done

    cpdef list _take_waiting(self, Connection conn):
        """The messages still waiting on ``conn`` for credits, taken from its
        data path (never sent), in order, with what they hold (the lock held)."""
        cdef long long n = conn.channel.discard(), i
        cdef list taken = [conn.keep.pop() for i in range(n)]  # the newest: posts go in order
        taken.reverse()
        conn.queued -= n
        return taken

    cpdef long long _discard_waiting(self, Connection conn) except -1:
        """The messages still waiting for credits on ``conn`` dropped (the
        receiver ended: none come again), and what they held let go (the
        lock held); their count."""
        cdef list taken = self._take_waiting(conn)
        for kept in taken:
            if (<tuple>kept)[3]:
                self.staging.give_back((<tuple>kept)[3])
        return len(taken)

    cpdef _resend(self, Connection conn, list carried):
        """Messages taken from a lost connection before they were sent
        (``_take_waiting``), handed to ``conn``, the new one, in order (the
        lock held): they spend its credits as they would have the old one's."""
        for kept in carried:
            self._hand_over(conn, <tuple>kept, False)

    def pump_ready(self, channel):
        """On the pump's thread: credits arrived, or the data path failed."""
        cdef Connection conn
        lock = self.lock
        lock.acquire()  # not ``with`` (``deliver``)
        try:
            conn = self.conn
            if conn is None or conn.channel is not channel:
                return
            self.credits += channel.take_credits()
            failure = channel.failure
        finally:
            lock.release()
        if failure is not None:
            self._fail(UcxError(f"{self.where}: message {conn.sent + 1} to {self.peer} could not be sent "
                                f"({failure})"))
        self.context.wake()
