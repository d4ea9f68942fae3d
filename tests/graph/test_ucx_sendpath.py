"""A UcxTransmitter's per-message path (cubind/graph/ucx/sendpath.pyx),
driven as the scheduler drives it, on a stand-in data path: the room, the
delivery of publish's encoding, what the queued messages hold until sent,
and the credits coming back. No UCX or GPU needed."""

import types

import numpy as np
import pytest

from cubind import graph as gx
from cubind.graph.model.queues import FAULT, REJECT, QueueFullError
from cubind.graph.ucx import wire
from cubind.graph.ucx.outlink import OutLink
from cubind.graph.ucx.sendpath import Connection


class Channel:
    """What the path asks of ``pump.Channel``: it records the sends."""

    def __init__(self):
        self.sends, self.sent, self.credits_in, self.failure = [], 0, 0, None

    def send(self, header, buffers, ready=0):
        self.sends.append((header, buffers, ready))

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
    queue = types.SimpleNamespace(path="tx/out", name="out", receiver_address="127.0.0.1", port=1,
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
