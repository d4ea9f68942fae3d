"""A UcxTransmitter's per-message path (cubind/graph/ucx/sendpath.pyx),
driven as the scheduler drives it, on a stand-in data path: publish's
encoding, the room, its delivery, what the queued messages hold until sent,
and the credits coming back. No UCX needed; device arrays on the emulated
driver where there is no GPU."""

import asyncio
import collections
import types

import numpy as np
import pytest

from cubind import graph as gx
from cubind.graph.model.queues import FAULT, POP, REJECT, QueueFullError
from cubind.graph.ucx import sendpath, wire
from cubind.graph.ucx.outlink import OutLink
from cubind.graph.ucx.sendpath import Connection, encode_published


class Channel:
    """What the path asks of ``pump.Channel``: it records the sends."""

    def __init__(self):
        self.sends, self.sent, self.credits_in, self.failure = [], 0, 0, None
        self.forced = []
        self.waiting = 0  # the newest sends that wait for credits (the real one posts as they come)

    def send(self, header, buffers, ready=0, forced=False):
        self.sends.append((header, buffers, ready))
        self.forced.append(forced)

    def discard(self):
        n, self.waiting = self.waiting, 0
        del self.sends[len(self.sends) - n:]
        return n

    def take_credits(self):
        taken, self.credits_in = self.credits_in, 0
        return taken


class Context:
    cpu_data_only = False

    def __init__(self):
        self.wakes = 0

    def wake(self):
        self.wakes += 1


def link(credits=2, policy=REJECT):
    queue = types.SimpleNamespace(path="tx/out", name="out", receiver_address="127.0.0.1", port=1, capacity=1,
                                  entity=types.SimpleNamespace(name="tx", device=None))
    out = OutLink(queue, Context())
    out.remote = {"path": "rx/in", "capacity": 4, "policy": policy}
    out.credits = credits
    out.conn = Connection(None, Channel())
    return out


def published(out, n):
    m = gx.Message()
    m.add_tensor("x", np.full(3, n, np.float32))
    m.add("n", n)
    out.remember(m, wire.encode(m, "tx/out"))
    return m


def test_a_delivery_sends_publishs_encoding_and_holds_the_message_until_it_is_sent(monkeypatch):
    out = link()
    monkeypatch.setattr("cubind.graph.ucx.sendpath.encode", lambda *a: pytest.fail("encoded again"))
    first, second = published(out, 1), published(out, 2)
    out.deliver(first)
    out.deliver(second)
    channel = out.conn.channel
    assert [header for header, _, _ in channel.sends] == [wire.encode(m, "tx/out")[0] for m in (first, second)]
    assert channel.sends[0][1][0] is first.tensor("x").data  # the array itself: its address is read in C
    assert out.free() == 0 and out.conn.queued == 2 and len(out.conn.keep) == 2
    channel.sent = 1  # the data path sent the first: the next look lets it go
    out._settle_sent(out.conn)
    assert out.sent == 1 and out.conn.sent == 1 and out.conn.keep[0][0] is second


def test_a_message_dropped_by_the_transmitters_queue_leaves_its_encoding_behind():
    out = link()
    dropped, kept = published(out, 1), published(out, 2)
    out.deliver(kept)
    assert out.conn.channel.sends[0][0] == wire.encode(kept, "tx/out")[0]
    assert len(out.encoded) == 0 and dropped is not kept


def test_a_message_never_published_is_encoded_at_delivery():
    out = link()
    m = gx.Message()
    m.add("n", 7)
    out.deliver(m)
    assert out.conn.channel.sends[0][0] == wire.encode(m, "tx/out")[0]


def test_without_room_the_receivers_policy_decides():
    out = link(credits=0, policy=REJECT)
    out.deliver(published(out, 1))
    assert out.dropped == 1 and out.conn.channel.sends == []
    out = link(credits=0, policy=FAULT)
    with pytest.raises(QueueFullError, match="rx/in"):
        out.deliver(published(out, 1))


def test_past_the_room_policy_0_sends_anyway_past_the_credits():
    out = link(credits=1, policy=POP)
    out.deliver(published(out, 1))
    out.deliver(published(out, 2))  # no room: sent now, and the receiver drops its oldest
    assert out.conn.channel.forced == [False, True] and out.free() == -1


def test_messages_waiting_for_credits_go_on_the_next_connection_in_order():
    out = link(credits=3)
    messages = [published(out, n) for n in range(3)]
    for m in messages:
        out.deliver(m)
    old = out.conn
    old.channel.waiting = 2  # the first was posted; two wait for the receiver's credits
    carried = out._take_waiting(old)
    assert [kept[0] for kept in carried] == messages[1:] and old.queued == 1 and len(old.keep) == 1
    new = Connection(None, Channel())
    out.credits = 4
    out._resend(new, carried)
    assert [header for header, _, _ in new.channel.sends] == [wire.encode(m, "tx/out")[0] for m in messages[1:]]
    assert new.queued == 2 and list(new.keep) == carried and out.free() == 2


def test_messages_waiting_for_a_receiver_that_ended_let_go_of_their_staging():
    out = link(credits=3)
    out.staging = Staging()
    for n in range(3):
        out.deliver(published(out, n))
    out.conn.keep = collections.deque((m, h, b, ["block"] if i else None, None) for i, (m, h, b, _, _)
                                      in enumerate(out.conn.keep))
    out.conn.channel.waiting = 2
    assert out._discard_waiting(out.conn) == 2
    assert out.staging.given_back == [["block"], ["block"]] and out.conn.queued == 1


def test_credits_come_back_from_the_connections_channel_only():
    out = link(credits=0)
    channel = out.conn.channel
    channel.credits_in = 3
    out.pump_ready(Channel())  # a lost connection's channel: ignored
    assert out.free() == 0 and out.context.wakes == 0
    out.pump_ready(channel)
    assert out.free() == 3 and channel.credits_in == 0 and out.context.wakes == 1


def test_the_typed_fields_refuse_what_they_cannot_hold():
    out = link()
    with pytest.raises(TypeError):
        out.conn = object()
    with pytest.raises(TypeError):
        out.credits = "3"


def tensors(*arrays):
    m = gx.Message()
    for i, array in enumerate(arrays):
        m.add_tensor(f"t{i}", array)
    return m


@pytest.fixture
def wire_calls(monkeypatch):
    """The messages publish left to wire.encode (it still encodes them)."""
    calls, real = [], wire.encode
    monkeypatch.setattr(sendpath, "encode", lambda m, *args: calls.append(m) or real(m, *args))
    return calls


def test_publish_takes_a_repeated_layouts_header_from_wires_cache(wire_calls):
    wire.ENCODED.clear()
    first = tensors(np.ones(3, np.float32), np.zeros((2, 2), np.int64))
    second = tensors(np.full(3, 7, np.float32), np.ones((2, 2), np.int64))
    assert encode_published(first, "tx/out") == wire.encode(first, "tx/out")  # its layout's first: wire's
    header, buffers = encode_published(second, "tx/out")
    assert wire_calls == [first]  # the second from the cache
    assert header == wire.encode(second, "tx/out")[0]
    assert [b is t.data for b, t in zip(buffers, second.tensors().values())] == [True, True]


def test_publish_leaves_to_wire_what_its_cache_cannot_answer(wire_calls):
    wire.ENCODED.clear()
    encode_published(tensors(np.ones(3, np.float32)), "tx/out")
    with_value = tensors(np.ones(3, np.float32))
    with_value.add("n", 1)
    with_stamp = tensors(np.ones(3, np.float32))
    with_stamp.add_timestamp(1, 2)
    for m in (with_value, with_stamp):
        assert encode_published(m, "tx/out") == wire.encode(m, "tx/out")
    with pytest.raises(wire.WireError, match="tx/out.*buffer_size"):  # its header known, longer than this limit
        encode_published(tensors(np.ones(3, np.float32)), "tx/out", True, 8)
    with pytest.raises(wire.WireError, match="not a Message"):
        encode_published("text", "tx/out")
    with pytest.raises(wire.WireError, match="does not cross"):
        encode_published(tensors(np.array(["a"])), "tx/out")
    strided = np.arange(8, dtype=np.float32)[::2]  # host memory: made contiguous, as wire does
    assert encode_published(tensors(strided), "tx/out")[0] == wire.encode(tensors(strided), "tx/out")[0]
    assert len(wire_calls) == 7 and wire_calls[1:3] == [with_value, with_stamp]


def test_publish_of_a_known_device_layout_is_still_checked(array_gpu, wire_calls):
    import cubind

    wire.ENCODED.clear()
    data = cubind.to_gpu(np.ones((4, 4), np.float32), pool=False)
    encode_published(tensors(data), "tx/out")
    assert encode_published(tensors(data), "tx/out")[1] == [data] and len(wire_calls) == 1
    with pytest.raises(wire.WireError, match="cpu_data_only"):  # the same layout, a host-only context
        encode_published(tensors(data), "tx/out", False)
    with pytest.raises(wire.WireError, match="strided device tensor"):
        encode_published(tensors(data[:, ::2]), "tx/out")


class Staging:
    """Records what a delivery asked to stage; copies nothing."""

    def __init__(self):
        self.asked, self.given_back = [], []

    def stage(self, buffers, ordinal, ready=None):
        self.asked.append(list(buffers))
        return buffers, [], None

    def give_back(self, taken):
        self.given_back.append(taken)


def test_only_memory_that_may_be_a_pools_is_offered_for_staging(array_gpu):
    # cubind's cuMemAlloc memory is sent as it is: staging never copies it, and asking cost a message.
    import cubind
    from cubind.graph.ucx.staging import from_a_pool

    out = link(credits=4)
    out.staging, out.conn.cuda = Staging(), True
    plain = cubind.to_gpu(np.ones(8, np.float32), pool=False)
    pooled = cubind.to_gpu(np.ones(8, np.float32), stream=cubind.Stream(non_blocking=True))
    assert (from_a_pool(plain), from_a_pool(pooled)) == (False, True)
    for arrays in ((plain,), (plain, pooled), (plain, np.ones(2, np.float32))):
        m = tensors(*arrays)
        m.ready_event = types.SimpleNamespace(handle=5)
        out.deliver(m)
    assert out.staging.asked == [[plain, pooled]]
    assert [ready for _, _, ready in out.conn.channel.sends] == [5, 5, 5]
    out.conn.channel.sent = 3
    out._settle_sent(out.conn)
    assert out.staging.given_back == [] and out.sent == 3  # nothing was taken: nothing to give back


def test_credits_given_back_before_the_answer_was_read_count_in_the_room():
    """A read on the receiver just after its grant may credit the channel
    before this side reads the answer; ``pump_ready`` leaves those while the
    channel is not the connection's, so the connection takes them."""
    out = link()
    out.conn = out.remote = None
    channel = Channel()
    channel.gate = lambda credits: None
    channel.credits_in = 1

    async def begin():
        out._begin(None, {"path": "rx/in", "capacity": 4, "policy": REJECT, "credits": 3}, channel)
        for task in out.conn.tasks:
            task.cancel()

    asyncio.run(begin())
    assert out.credits == 3 + out.window + 1 and channel.credits_in == 0


def test_a_device_message_ready_at_publish_is_sent_without_an_event_in_the_devices_context(array_gpu, monkeypatch):
    # Published while the default stream had nothing left to run, a device message carries
    # ordering.READY: the data path is given no event to wait for (handle 0), and still the
    # device's context, in which UCX reads the tensor.
    import cubind
    from cubind.graph.model import ordering

    monkeypatch.setenv("FAKE_DEVICE_COUNT", "1")  # the emulated driver's device 0 (a GPU ignores it)
    out = link(credits=4)
    out.staging = Staging()
    contexts = []
    out.conn.channel.use_cuda = contexts.append
    out.context.engine = types.SimpleNamespace(cuda_context=lambda ordinal: 1000 + ordinal)
    m = tensors(cubind.to_gpu(np.ones(8, np.float32), pool=False))
    ordering.publish_order(m)
    assert m.ready_event is ordering.READY and m.ready_event.query() and m.ready_event.handle == 0
    out.remember(m, encode_published(m, "tx/out"))
    out.deliver(m)
    assert [ready for _, _, ready in out.conn.channel.sends] == [0]
    assert contexts == [1000 + out.ordinal] and out.conn.cuda
