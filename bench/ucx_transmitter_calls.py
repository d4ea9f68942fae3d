#!/usr/bin/env python3
"""Where a UCX transmitter's scheduler spends a message: each call of the
publishing path timed in the transmitting process (``graph_messages.py``'s
two parts, the transmitter's calls wrapped), beside the receiver's rate.

    python bench/ucx_transmitter_calls.py [--size BYTES] [--storage device|host] [--messages N]

Prints one JSON object: the receiver's messages/s and, per wrapped call,
its count and mean microseconds (the first call of each left out); a
message's whole cycle on the scheduler's thread beside them (wall and
CPU time from the first publish to the last), so that what the wrapped
calls leave out (the scheduler's own loop, the codelet's call) shows. The wrappers cost about 0.2 us a call
each (a clock read either side), small beside what they time; py-spy
sampling the same process slowed it a hundredfold on the H200, which is
why this exists. ``bench/README.md`` (the fourteenth session) has what it
read there."""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_messages import PART, part_env  # noqa: E402
from two_parts import both_results, free_port  # noqa: E402

# Before the part's graph runs: its publishing path's calls wrapped with clocks.
WRAP = r"""
import time as _time
_CALLS = {}

def _timed(owner, name, label):
    call = getattr(owner, name)
    def timed(*args, **kwargs):
        begun = _time.perf_counter_ns()
        try:
            return call(*args, **kwargs)
        finally:
            took = _time.perf_counter_ns() - begun
            entry = _CALLS.get(label)
            if entry is None:  # the first call left out: a lazy import, a first allocation
                _CALLS[label] = [0, 0]
            else:
                entry[0] += 1
                entry[1] += took
    setattr(owner, name, timed)

from cubind.graph import Message as _Message
from cubind.graph.model import ordering as _ordering, queues as _queues
from cubind.graph.ucx import components as _components, outlink as _outlink, sendpath as _sendpath
_timed(_Message, "add_tensor", "message add_tensor")
# A UcxTransmitter takes it from sendpath when it is resolved (after this).
_timed(_sendpath, "encode_published", "publish: the header (sendpath.encode_published)")
_timed(_ordering, "publish_order", "publish: the ready event (ordering.publish_order)")
_timed(_queues.Transmitter, "_publish", "publish: the queue, ready event included")
_timed(_components.UcxTransmitter, "publish", "publish, all of it")
_timed(_outlink.OutLink, "deliver", "delivery (OutLink.deliver)")
_timed(_outlink.DeviceStaging, "stage", "delivery: staging (DeviceStaging.stage)")
_timed(_outlink.OutLink, "_settle_sent", "delivery: the sent settled (OutLink._settle_sent)")
# The scheduler's other calls: its waits for room (the data path's poll) and its checks.
_timed(_components.UcxContext, "external_wait", "loop: the wait for news (UcxContext.external_wait)")
_timed(_components.UcxContext, "external_active", "loop: UcxContext.external_active")
_timed(_components.UcxContext, "external_failure", "loop: UcxContext.external_failure")
_timed(_outlink.OutLink, "free", "loop: the room (OutLink.free)")
_timed(_outlink.OutLink, "pump_ready", "loop: credits taken (OutLink.pump_ready)")
"""

# A message's whole cycle on the scheduler's thread, from the first publish to the last (the
# connection's setup left out): its wall time and the thread's CPU time.
SPAN = r"""
_SPAN = []
_publish = _components.UcxTransmitter.publish
def _spanned(self, message):
    now = [_time.perf_counter_ns(), _time.thread_time_ns()]
    if not _SPAN:
        _SPAN.extend(now)  # the first publish's
    _SPAN[2:] = now  # the latest's
    return _publish(self, message)
_components.UcxTransmitter.publish = _spanned
"""
AFTER_RUN = ("    g.run()", """    g.run()
    if len(_SPAN) == 4:
        _n = _CALLS["publish, all of it"][0]
        _CALLS["a message's cycle, wall"] = [_n, _SPAN[2] - _SPAN[0]]
        _CALLS["a message's cycle, the scheduler thread's CPU"] = [_n, _SPAN[3] - _SPAN[1]]""")

# After it: the times, on stdout.
REPORT = r"""
print(json.dumps({label: {"calls": n, "us": round(ns / max(n, 1) / 1000, 2)} for label, (n, ns) in _CALLS.items()}))
"""


def run(size, storage, count, timeout=300):
    args = [str(free_port()), str(count), str(size), storage]
    # The part reads its role from argv before anything runs: the wrappers go right after its imports.
    head, sep, rest = PART.partition("\nclass Tx(")
    assert rest.count(AFTER_RUN[0] + "\n") == 1, "the part's transmitter runs its graph once"
    tx_code = head + WRAP + SPAN + sep + rest.replace(AFTER_RUN[0] + "\n", AFTER_RUN[1] + "\n", 1) + REPORT
    received, calls = both_results([sys.executable, "-c", PART, "rx", *args],
                                   [sys.executable, "-c", tx_code, "tx", *args], part_env(), timeout, tx_result=True)
    return {"size": size, "storage": storage, "messages": count, "messages_per_s": received["messages_per_s"],
            "transmitter_calls": calls}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes of the tensor (0: empty messages)")
    parser.add_argument("--storage", default="device", choices=["device", "device-pool", "host"])
    parser.add_argument("--messages", type=int, default=5000)
    a = parser.parse_args()
    print(json.dumps(run(a.size, a.storage, a.messages), indent=1))


if __name__ == "__main__":
    main()
