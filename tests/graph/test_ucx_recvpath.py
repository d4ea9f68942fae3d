"""A UcxReceiver's per-message path (cubind/graph/ucx/recvpath.pyx), driven
as the data path drives it, on a stand-in channel: what arrived, into the
queue in order; the room given back; a header and buffers that disagree;
a lost connection's messages; the goodbye. No UCX needed; device arrays on
the emulated driver where there is no GPU."""

import types

import numpy as np
import pytest

import cubind
from cubind import graph as gx
from cubind.graph.model.queues import REJECT
from cubind.graph.ucx import recvpath, wire
from cubind.graph.ucx.inlink import InLink
from cubind.graph.ucx.wire import WireError


class Block(bytearray):
    """A received block's stand-in (``pump.Block``): host bytes (exported, as
    the block's), or a device array's address."""

    def __init__(self, data):
        self.device = isinstance(data, cubind.Array)
        super().__init__(b"" if self.device else data.tobytes())
        self.ptr, self.nbytes = (data.ptr if self.device else 0), data.nbytes


class Channel:
    """What the path asks of ``pump.Channel``: the batches it takes, the credits it gives back."""

    wants_cuda = False

    def __init__(self, *batches):
        self.batches, self.credits, self.failure = list(batches), [], None

    def take(self):
        return self.batches.pop(0) if self.batches else []

    def credit(self, count):
        self.credits.append(count)


class Context:
    def __init__(self):
        self.wakes = 0

    def wake(self):
        self.wakes += 1

    def receive_allocator(self):
        return None


class Queue:
    """A UcxReceiver's back stage, as the path uses it (``deliver_remote``)."""

    path, capacity, policy = "rx/in", 4, REJECT
    entity = types.SimpleNamespace(name="rx", device=None)

    def __init__(self, dropping=0):
        self.messages, self.dropping = [], dropping

    def deliver_remote(self, message):
        self.messages.append(message)
        return self.dropping


def link(channel, queue=None):
    link = InLink(queue or Queue(), Context())
    link.conn = types.SimpleNamespace(channel=channel, peer="tx/out", received=0)
    return link


def sent(*arrays, **values):
    m = gx.Message()
    for i, data in enumerate(arrays):
        m.add_tensor(f"t{i}", data)
    for name, value in values.items():
        m.add(name, value)
    header, buffers = wire.encode(m, "tx/out")
    return header, [Block(b if isinstance(b, cubind.Array) else np.ascontiguousarray(b)) for b in buffers]


def test_messages_arrive_in_the_queue_in_order_with_their_tensors_and_values():
    channel = Channel([sent(np.arange(6, dtype=np.int32).reshape(2, 3), n=1), sent(np.zeros(0), n=2)],
                      [sent(np.ones(2, np.float64), n=3)])
    rx = link(channel)
    rx.pump_ready(channel)
    rx.pump_ready(channel)
    got = rx.queue.messages
    assert [m.get("n") for m in got] == [1, 2, 3]
    assert got[0].tensor("t0").data.tolist() == [[0, 1, 2], [3, 4, 5]] and got[1].tensor("t0").data.shape == (0,)
    assert rx.received == rx.held == 3 and rx.conn.received == 3 and rx.context.wakes == 2
    assert rx.failure is None and channel.credits == []


def test_a_device_tensor_is_a_view_of_its_block_kept_alive_by_the_array(fake_driver):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    data = cubind.to_gpu(host, pool=False)
    header, blocks = sent(data)
    channel = Channel([(header, blocks)])
    rx = link(channel)
    rx.pump_ready(channel)
    array = rx.queue.messages[0].tensor("t0").data
    assert isinstance(array, cubind.Array) and array.ptr == data.ptr and array.memory.owner is blocks[0]
    assert rx.queue.messages[0].tensor("t0").storage == "device"
    # C order, its strides from the decoded header (wire.decode_header)
    assert array.shape == (2, 3, 4) and array.strides == host.strides and array.get().tolist() == host.tolist()


def test_what_left_the_queue_gives_its_room_back_to_the_connection():
    channel = Channel([sent(np.ones(1), n=1)])
    rx = link(channel, Queue(dropping=1))  # the queue's policy dropped one to make room
    rx.pump_ready(channel)
    assert channel.credits == [1] and rx.held == 0
    rx.held = 2
    rx.grant(2)  # the codelet read two
    rx.grant(0)
    assert channel.credits == [1, 2] and rx.held == 0


def test_a_read_while_a_connection_is_made_is_in_its_grant_or_credited_on_its_channel():
    rx = InLink(Queue(), Context())  # capacity 4
    rx.held = 3  # a lost connection's messages
    rx.conn = conn = types.SimpleNamespace(channel=None, credits=0)  # taken, no data path yet
    rx.grant(1)  # read meanwhile: no channel to credit
    channel = Channel()
    rx._attach(conn, channel)
    assert conn.credits == 2 and channel.credits == []  # in the grant
    rx.grant(1)  # read after: credited on the channel
    assert channel.credits == [1] and rx.held == 1


def test_buffers_that_disagree_with_the_header_end_the_run_naming_the_message():
    header, blocks = sent(np.ones(4, np.float32))
    wrong = Block(np.ones(2, np.float32))
    channel = Channel([sent(np.ones(1), n=1), (header, [wrong])])
    rx = link(channel)
    rx.pump_ready(channel)
    assert isinstance(rx.failure, WireError) and len(rx.queue.messages) == 1
    assert "entity 'rx', rx/in: message 2: 't0' (16 bytes, host) does not match the buffer" in str(rx.failure)
    channel = Channel([(header, blocks + [wrong])])
    rx = link(channel)
    rx.pump_ready(channel)
    assert "message 1: more buffers arrived than the header's tensors hold" in str(rx.failure)
    channel = Channel([(b"not json", [])])
    rx = link(channel)
    rx.pump_ready(channel)
    assert "entity 'rx', rx/in: message 1 from tx/out: a message that cannot be decoded" in str(rx.failure)


def test_a_lost_connections_channel_delivers_nothing():
    channel = Channel([sent(np.ones(1), n=1)])
    rx = link(channel)
    rx.pump_ready(Channel([sent(np.ones(1), n=2)]))
    assert rx.queue.messages == [] and rx.received == 0


def test_the_goodbye_with_the_count_sent_ends_the_receiving(monkeypatch):
    channel = Channel([sent(np.ones(1), n=1), 1])
    rx = link(channel)
    ended = []
    monkeypatch.setattr(InLink, "_ended", lambda self, conn, count: ended.append((conn, count)))
    rx.pump_ready(channel)
    assert ended == [(rx.conn, 1)] and len(rx.queue.messages) == 1


def test_assemble_keeps_the_order_of_the_header():
    m = gx.Message()
    m.add_timestamp(5, 6)
    m.add_tensor("x", np.ones(2, np.int8))
    m.add("v", [1, "a"])
    entries = wire.decode_header(wire.encode(m, "tx/out")[0], "rx/in")
    got = recvpath.assemble(entries, [np.zeros(2, np.int8)])
    assert [name for name, _ in got] == ["timestamp", "x", "v"]
    assert got.timestamp().acqtime == 5 and got.get("v") == [1, "a"] and got.tensor("x").storage == "host"
    with pytest.raises(ValueError, match="arrays: 0 given, fewer than the header's tensors"):
        recvpath.assemble(entries, [])


def test_a_received_message_has_every_field_a_made_one_has_and_an_id_of_its_own():
    # recvpath makes received messages without Message() (its call was a share of a message's cost).
    channel = Channel([sent(np.ones(2), n=1), sent(np.ones(2), n=2)])
    rx = link(channel)
    rx.pump_ready(channel)
    made = gx.Message()
    first, second = rx.queue.messages
    for field in (f for f in type(made).__slots__ if f != "__weakref__"):
        assert type(getattr(first, field)) is type(getattr(made, field)), field
    assert len({first.eid, second.eid, made.eid}) == 3 and first.ready_event is None
    assert first.names() == ["t0", "n"] and first.tensor("t0").data.tolist() == [1.0, 1.0]


def test_a_header_naming_one_component_twice_ends_the_run():
    entries = [{"name": "n", "kind": "value", "value": 1}, {"name": "n", "kind": "value", "value": 2}]
    channel = Channel([(wire._dumps(entries), [])])
    rx = link(channel)
    rx.pump_ready(channel)
    assert "message 1 from tx/out could not be received (ValueError: name: the message already has a " \
           "component 'n')" in str(rx.failure) and rx.queue.messages == []


def test_the_receive_allocator_is_asked_once_a_run():
    asked = []
    channel = Channel([sent(np.ones(1), n=1)], [sent(np.ones(1), n=2)], [sent(np.ones(1), n=3)])
    rx = link(channel)
    rx.context.receive_allocator = lambda: asked.append(1)  # None: the blocks' views are the tensors
    rx.pump_ready(channel)
    rx.pump_ready(channel)
    assert len(asked) == 1
    rx.reset()  # the next run's start: its serializer may name another allocator
    rx.conn = types.SimpleNamespace(channel=channel, peer="tx/out", received=0)
    rx.pump_ready(channel)
    assert len(asked) == 2 and [m.get("n") for m in rx.queue.messages] == [1, 2, 3]
