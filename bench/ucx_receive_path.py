#!/usr/bin/env python3
"""A UcxReceiver's per-message path in one process, without UCX: what
``recvpath.pyx`` does for each message the data path took whole (the
header looked up, the message built over its block, put in the queue),
then the codelet's read (the room given back) and the message dropped,
timed per message on a stand-in channel that hands over one message per
take, as the data path's turn does at 4 in flight.

    python bench/ucx_receive_path.py [--size BYTES] [--storage device|host] [--messages N] [--repeat R]

Prints one JSON object: the best of ``--repeat`` runs, in microseconds a
message, for the delivery alone and for the delivery, read and drop; and
the stand-in block's own making, which both include (a real data path's
``pump.Block`` is made in C). Device tensors need a driver: a GPU, or the
emulated one (``CUBIND_CUDA_LIBRARY``, tests/fake_driver). On the 2-core
development machine (3.12, emulated driver, 4 KiB device tensors) the
whole cycle read 6.2 us before the build reused Message._of and
Array._make without their checks (CHANGELOG 0.5.9), 5.2 after, 4.5 with
the locks taken without Cython's `with` (0.5.10), the
stand-in block 0.8 of each."""

import argparse
import json
import sys
import timeit
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import cubind  # noqa: E402
from cubind import graph as gx  # noqa: E402
from cubind.graph.model.buffer import MessageBuffer  # noqa: E402
from cubind.graph.model.queues import POP  # noqa: E402
from cubind.graph.ucx import wire  # noqa: E402
from cubind.graph.ucx.inlink import InLink  # noqa: E402


class Block(bytearray):
    """``pump.Block``'s stand-in: host bytes, or a device array's address."""

    def __init__(self, data):
        self.device = isinstance(data, cubind.Array)
        super().__init__(b"" if self.device else data.tobytes())
        self.ptr, self.nbytes = (data.ptr if self.device else 0), data.nbytes


class Channel:
    """``pump.Channel``'s stand-in: one message a take, the credits dropped."""

    wants_cuda, failure = False, None

    def __init__(self, header, data):
        self.header, self.data = header, data

    def take(self):
        return [(self.header, [Block(self.data)])]

    def credit(self, count):
        pass


class Context:
    def wake(self):
        pass

    def receive_allocator(self):
        return None


class Queue:
    """A UcxReceiver's stages (``MessageBuffer``), as recvpath and the codelet use them."""

    path, capacity = "rx/in", 8
    entity = types.SimpleNamespace(name="rx", device=None)

    def __init__(self):
        self.stages = MessageBuffer(self.capacity, POP)

    def deliver_remote(self, message):
        return self.stages.push(message)


def run(size, storage, messages, repeat):
    data = np.ones(max(size // 4, 1), np.float32)
    if storage == "device":
        data = cubind.to_gpu(data, pool=False)
    m = gx.Message()
    m.add_tensor("x", data)
    header, _ = wire.encode(m, "tx/out")
    channel, queue = Channel(header, data), Queue()
    link = InLink(queue, Context())
    link.conn = types.SimpleNamespace(channel=channel, peer="tx/out", received=0)

    def deliver():
        link.pump_ready(channel)
        queue.stages.sync_in()
        queue.stages.pop()  # dropped outside the delivery's time: read below

    def cycle():
        link.pump_ready(channel)
        queue.stages.sync_in()
        message = queue.stages.pop()
        link.grant(1)  # the codelet's read gives its room back
        del message

    def best(fn):
        return round(min(timeit.repeat(fn, number=messages, repeat=repeat)) / messages * 1e6, 3)

    return {"size": size, "storage": storage, "messages": messages, "us_delivery_read_and_drop": best(cycle),
            "us_delivery_and_drop": best(deliver), "us_stand_in_block": best(lambda: Block(data))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096, help="bytes of the tensor")
    parser.add_argument("--storage", default="device", choices=["device", "host"])
    parser.add_argument("--messages", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=7)
    a = parser.parse_args()
    print(json.dumps(run(a.size, a.storage, a.messages, a.repeat)))


if __name__ == "__main__":
    main()
