# cython: language_level=3
"""A UcxReceiver's per-message path, compiled (issue 47): what runs for every
message that arrives whole, on the pump's thread or a polling scheduler's.
``InLink`` (inlink.py) is a ``ReceivePath``; listening, accepting,
reconnecting, goodbyes and counts stay there, in Python, on the engine's
loop.

Per message it takes the header and blocks from the data path
(``pump.Channel.take``), decodes the header (wire's cache: a stream repeats
one), views each block as the tensor's array, builds the ``Message`` and
puts it into the queue's back stage, then gives back the room of what left
the queue. In Python this cost a 4 KiB device message 6.7 us on the
emulated driver here, time each message's round trip waited for.

The state it shares with the rest of the link lives in typed fields, read
and written under the link's ``lock`` as before; Python code reads them as
attributes."""

import numpy as np

import cubind
from cubind.graph.model.message import Message, Tensor, Timestamp
from cubind.graph.model.queues import QueueFullError

from .transport import UcxError
from .wire import DECODED, WireError, decode_header


cpdef object assemble(list entries, list arrays):
    """The ``Message`` of decoded header ``entries``, with ``arrays`` (the
    data of each tensor entry, in order) for its tensors."""
    cdef Py_ssize_t k = 0, n = len(arrays)
    cdef dict components = {}
    for entry in entries:
        name, kind = (<dict?>entry)["name"], (<dict>entry)["kind"]
        if name in components:  # Message.add's check
            raise ValueError(f"name: the message already has a component {name!r}")
        if kind == "tensor":
            if k >= n:  # the build checks no bounds: asked here
                raise ValueError(f"arrays: {n} given, fewer than the header's tensors")
            # Received host memory is ordinary (not page-locked) memory: pinned arrives as host.
            # The arrays are the receiver's own (``_arrays``): a tensor of each without Tensor's checks.
            value = Tensor._of(name, arrays[k], "device" if (<dict>entry)["storage"] == "device" else "host")
            k += 1
        elif kind == "timestamp":
            value = Timestamp((<dict>entry)["acqtime"], (<dict>entry)["pubtime"])
        else:
            value = (<dict>entry)["value"]
        components[name] = value
    return Message._of(components)


# Taken at the first device message: importing this loads no driver.
cdef object _Array = None, _ForeignMemory = None


cdef object _device_view(block, tuple shape, tuple strides, dtype, ordinal):
    """A ``cubind.Array`` over a device ``block`` (kept alive by it), C-ordered
    (``strides``: the decoded entry's): made as ``Array.from_ptr`` makes one
    (``Array._make``), without its checks of arguments that come from a
    decoded header (``decode_header`` checked the shape and dtype; the
    block's size matches). Its checks were 0.7 of ``from_ptr``'s 1.1 us a
    received message here (emulated driver)."""
    global _Array, _ForeignMemory
    if _Array is None:
        from cubind._arrays.array import Array
        from cubind._memory.memory import ForeignMemory
        _Array, _ForeignMemory = Array, ForeignMemory
    return _Array._make(_ForeignMemory(block.ptr, block, ordinal), 0, shape, strides, dtype, None, 0, False)


cdef class ReceivePath:
    """The per-message half of ``InLink``: ``pump_ready`` (the pump's
    notification) takes what arrived into the queue."""

    cdef public object lock, delivering
    cdef public object failure  # set once, under the lock (transport.Link)
    cdef public bint peer_ended
    cdef public object conn  # the connection now (inlink._Connection), None while none
    # The context's receive_allocator(), asked at a run's first message (InLink.reset forgets it):
    # asked per batch it cost 0.5 us on the H200.
    cdef public object allocator
    cdef public bint allocator_asked
    # Messages in the queue that came over UCX (less those read or dropped), and all received.
    cdef public long long held, received

    def pump_ready(self, channel):
        """On the pump's thread or a polling scheduler's: the messages that
        arrived whole go into the queue, in order, and their room is
        confirmed as they leave it; the goodbye ends the receiving; a failure
        of the data path ends the run."""
        # Messages are taken from the data path and put in the queue by one thread at a time: two
        # batches taken in order but put in the queue by two threads could pass each other (a GPU
        # host's stress run read message 122 before 121).
        delivering = self.delivering
        delivering.acquire()  # in try/finally, not ``with``: twice as costly in Cython (``grant``)
        try:
            self._deliver(channel)
        finally:
            delivering.release()
        self.context.wake()

    cpdef grant(self, long long count):
        """``count`` messages left the queue (read or dropped): their room goes
        back to the transmitter connected now (or to the next one's credits)."""
        if not count:
            return
        lock = self.lock
        lock.acquire()  # not ``with``: its __enter__/__exit__ cost twice as much (185 ns here)
        self.held -= count
        conn = self.conn
        # Under the lock, as InLink._accept gives a connection its channel and grant: this room is
        # in that grant or credited on that channel, never neither.
        channel = None if conn is None else conn.channel
        lock.release()
        if channel is not None:
            channel.credit(count)

    cdef int _deliver(self, channel) except -1:
        cdef object grant
        lock = self.lock  # taken for counts only, by acquire and release (``grant`` says why)
        lock.acquire()
        conn = self.conn
        lock.release()
        if conn is None or conn.channel is not channel:
            return 0  # a lost connection's: counted as not arrived
        if channel.wants_cuda:
            try:
                channel.use_cuda(self.context.engine.cuda_context(self.queue.entity.device or 0))
            except Exception as exc:
                self._fail(UcxError(f"{self.where}: a device tensor arrived from {conn.peer}, but this process "
                                    f"cannot receive it on the GPU ({type(exc).__name__}: {exc})"))
                return 0
        if not self.allocator_asked:
            self.allocator, self.allocator_asked = self.context.receive_allocator(), True
        allocator = self.allocator
        for item in channel.take():
            if type(item) is int:
                self._ended(conn, item)
                continue
            header, blocks = <tuple?>item
            try:
                entries = DECODED.get(header)
                if entries is None:
                    entries = decode_header(header, f"{self._where_received(conn)} from {conn.peer}")
                message = assemble(entries, self._arrays(entries, blocks, allocator, conn))
                lock.acquire()
                self.held += 1  # before the push: a read on another worker gives the room back at once
                lock.release()
                grant = self.queue.deliver_remote(message)
            except (WireError, QueueFullError) as exc:
                self._fail(exc)
                return 0
            except Exception as exc:
                self._fail(UcxError(f"{self.where}: message {conn.received + 1} from {conn.peer} could not be "
                                    f"received ({type(exc).__name__}: {exc})"))
                return 0
            lock.acquire()
            self.received += 1
            conn.received += 1
            lock.release()
            if grant:
                self.grant(grant)
        failure = channel.failure
        if failure is not None:
            self._fail(UcxError(f"{self.where}: message {conn.received + 1} from {conn.peer} was lost ({failure})"))
        return 0

    cdef str _where_received(self, conn):
        # Errors only: the text named each message's place, built for every message, cost a share.
        return f"entity {self.queue.entity.name!r}, {self.queue.path}: message {conn.received + 1}"

    cdef list _arrays(self, list entries, list blocks, allocator, conn):
        """The arrays of a message's tensor entries, in order: views of the
        blocks the data path received them into (one per tensor with bytes,
        in order), or, where the component serializer names an allocator,
        copies into its tensors."""
        cdef list arrays = []
        cdef Py_ssize_t k = 0, nblocks = len(blocks)
        cdef bint device
        ordinal = self.queue.entity.device or 0
        for entry in entries:
            if (<dict?>entry)["kind"] != "tensor":
                continue
            shape, dtype = (<dict>entry)["shape"], (<dict>entry)["dtype"]
            device = (<dict>entry)["storage"] == "device"
            nbytes = (<dict>entry)["nbytes"]
            block = None
            if nbytes:
                if k < nblocks:
                    block = blocks[k]
                k += 1
                if block is None or block.nbytes != nbytes or block.device != device:
                    # The header's prefix (what the data path received) and its JSON disagree: not a view
                    # past a block.
                    raise WireError(f"{self._where_received(conn)}: {entry['name']!r} ({nbytes} bytes, "
                                    f"{entry['storage']}) does not match the buffer that arrived for it")
            if block is None:
                data = cubind.empty(shape, dtype, device=ordinal, pool=False) if device else np.empty(shape, dtype)
            elif device:
                data = _device_view(block, shape, (<dict>entry)["strides"], dtype, ordinal)
            else:
                data = np.frombuffer(block, dtype).reshape(shape)
            if allocator is not None:
                data = self.context.copy_into(allocator, self.queue, entry, data)
            arrays.append(data)
        if k < nblocks:
            raise WireError(f"{self._where_received(conn)}: more buffers arrived than the header's tensors hold")
        return arrays
