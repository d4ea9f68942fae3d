#!/usr/bin/env python3
"""cubind.graph's two-process rate against UCX's own C floor at each count
of messages in flight, in turn: where the gap between them comes from.

    python bench/ucx_in_flight.py --ucx-floor BINARY [--size BYTES] [--storage device|host]
                                  [--in-flight 1,2,4] [--rounds 2] [--messages N]

At 1 in flight each side's rate is one message's whole cycle: UCX's
(bench/ucx_floor.c: post, complete, post the next) against ours (publish,
the data path's send, the receiver's delivery and read, the credit back).
More in flight overlap cycles: UCX's floor overlaps its transfers, ours is
bound where one side's per-message work (Python) is longer than a cycle
over the count. Each row's counters (the data path's, microseconds a
message, ``graph_messages.two_process_row``) say where ours went:
``rx_parts`` a header to its buffers complete at the receiver, ``tx_done``
posted to the send complete at the transmitter, ``tx_ready`` queued to
posted (waiting for a credit). Prints a JSON line per run, then one per
count: the medians and their ratio."""

import argparse
import functools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graph_messages as gm  # noqa: E402

COUNTERS = (("receiver_pump_us_per_message", "rx_parts"), ("transmitter_pump_us_per_message", "tx_done"),
            ("transmitter_pump_us_per_message", "tx_ready"))


def counters(row):
    """The data path's steps of a row of ours (``COUNTERS``), microseconds a message."""
    return {name: row.get(side, {}).get(name) for side, name in COUNTERS}


def traced(run, window, what, report):
    """``run()``'s row, reported as one JSON line as it ends."""
    row = run()
    report(json.dumps({"in_flight": window, "what": what, "messages_per_s": row.get("messages_per_s"),
                       **({"failed": row["failed"]} if "failed" in row else {}),
                       **(counters(row) if what == "cubind.graph" else {})}))
    return row


def at_count(floor, size, storage, window, rounds, messages, report):
    """UCX's floor and ours at ``window`` in flight, ``rounds`` times in
    turn: the medians, their ratio and where ours went."""
    ucx = functools.partial(traced, functools.partial(gm.ucx_floor_row, floor, size, messages, storage, window),
                            window, "UCX in C", report)
    ours = functools.partial(traced, functools.partial(gm.two_process_row, f"cubind.graph, {window} in flight",
                                                       messages, size, storage, in_flight=window),
                             window, "cubind.graph", report)
    ucx_row, our_row = gm.take_turns(rounds, ucx, ours)
    line = {"in_flight": window, "size": size, "storage": storage,
            "ucx_messages_per_s": ucx_row.get("messages_per_s"), "ucx_runs": ucx_row.get("runs"),
            "messages_per_s": our_row.get("messages_per_s"), "runs": our_row.get("runs"), **counters(our_row)}
    if line["ucx_messages_per_s"] and line["messages_per_s"]:
        line["ratio"] = line["messages_per_s"] / line["ucx_messages_per_s"]
    report(json.dumps(line))
    return line


def measure(floor, size, storage, counts, rounds, messages, report=print):
    """Per count in flight (``at_count``), each run reported as it ends."""
    return [at_count(floor, size, storage, window, rounds, messages, report) for window in counts]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ucx-floor", required=True, metavar="BINARY", help="bench/ucx_floor.c, built")
    parser.add_argument("--size", type=int, default=16 << 20, help="bytes of each message's tensor")
    parser.add_argument("--storage", default="device", choices=["device", "host"])
    parser.add_argument("--in-flight", default="1,2,4", help="counts of messages in flight, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--messages", type=int, default=20000)
    a = parser.parse_args()
    measure(a.ucx_floor, a.size, a.storage, [int(n) for n in a.in_flight.split(",")], a.rounds, a.messages)


if __name__ == "__main__":
    main()
