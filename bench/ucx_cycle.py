#!/usr/bin/env python3
"""Where a message's credit goes round, two processes over UCX: both parts
of bench/graph_messages.py's two-process row run with the data path's
trace on (``CUBIND_UCX_TRACE``, cubind/graph/ucx/pump.pyx ``trace``), and
each message is followed through both traces (one host: one clock).

    python bench/ucx_cycle.py [--size BYTES] [--storage device|host] [--messages N] [--in-flight 4]
                              [--keep DIR] [--read PREFIX]

A message's steps, with ``in_flight`` credits going round (message i + in_flight
is posted on message i's credit):

    posted -A-> header at the receiver -B-> all parts there -C-> taken by Python
    -D-> credited (the codelet read it) -E-> credit note posted -F-> note at the
    transmitter's turn -G-> message i + in_flight posted

``cycle`` is message i's post to message i + in_flight's. ``queued_before_credit``
is how long message i + in_flight waited on the data path for that credit
(negative: the transmitter published it after the credit came). ``backlog``
counts the messages waiting for credits when each credit came. The turns of
each side's data path (whoever turned it) say how long each held the pump's
lock; a turn over ``HEAVY_US`` is counted apart, with the share of it
spent in ``ucp_worker_progress``. Prints one JSON object
(``--keep DIR`` keeps the raw traces; ``--read PREFIX`` reads kept ones)."""

import argparse
import array
import bisect
import json
import os
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graph_messages as gm  # noqa: E402
from two_parts import both_results, free_port  # noqa: E402

# The event codes of pump.pyx's trace (pump.TRACE_EVENTS), kept here so that kept traces read
# without cubind built.
(POSTED, SENT, CREDIT_IN, ARRIVED, CREDIT_OUT, TAKEN, CREDITED, TURN, POLL_START, POLL_END, OWNERS,
 PROGRESS) = range(1, 13)
NEWS = 2  # a poll's end: its value has TURN_NEWS (pump.pxd)
HEAVY_US = 5.0
SKIP = 0.1  # the first and last tenth of the messages: connection and goodbye


def run(size, storage, messages, in_flight, prefix, timeout=300, room=None):
    """Both parts, traced into ``prefix``_rx.bin and _tx.bin; the receiver's
    rate. ``room``: the events each part keeps (default 200 a message, at
    least a million); a part's turns that find nothing are traced too, and
    on a machine with fewer free cores than busy threads they are many."""
    args = [str(free_port()), str(messages), str(size), storage, str(in_flight)]
    room = max(1_000_000, 200 * messages) if room is None else room
    env = gm.part_env({"CUBIND_UCX_TRACE": str(room), "CUBIND_UCX_TRACE_OUT": prefix})
    received, _ = both_results([sys.executable, "-c", gm.PART, "rx", *args],
                               [sys.executable, "-c", gm.PART, "tx", *args], env, timeout, tx_result=True)
    return received["messages_per_s"]


def load(path):
    flat = array.array("Q")
    flat.frombytes(Path(path).read_bytes())
    return [tuple(flat[i:i + 3]) for i in range(0, len(flat), 3)]


def per_message(events, code):
    """The time of each message's ``code`` event, in order: an event that
    covers n messages (its value) counts for each."""
    times = []
    for _, t, n in sorted(e for e in events if e[0] == code):
        times += [t] * n
    return times


def spread(values_ns):
    v = sorted(values_ns)
    if not v:
        return None
    return {"median_us": round(v[len(v) // 2] / 1e3, 2), "mean_us": round(statistics.fmean(v) / 1e3, 2),
            "p10_us": round(v[len(v) // 10] / 1e3, 2), "p90_us": round(v[9 * len(v) // 10] / 1e3, 2)}


def turns(events):
    """A side's turns in the middle of its run: how long each held the lock,
    and of the long ones the share in UCX's progress (the rest: the
    channels served, the posts among them)."""
    found = sorted((t, v >> 4) for code, t, v in events if code == TURN)
    progress = {t: v for code, t, v in events if code == PROGRESS}
    if len(found) < 10:
        return None
    middle = found[int(len(found) * SKIP):int(len(found) * (1 - SKIP))]
    span = middle[-1][0] + middle[-1][1] - middle[0][0]
    heavy = [d for _, d in middle if d > HEAVY_US * 1e3]
    lengths = [d for _, d in middle]
    heavy_progress = sum(progress.get(t, 0) for t, d in middle if d > HEAVY_US * 1e3)
    return {"turns": len(middle), "turning": round(sum(lengths) / span, 3), "length": spread(lengths),
            "heavy": len(heavy), "heavy_share": round(sum(heavy) / span, 3),
            "heavy_in_progress": round(heavy_progress / sum(heavy), 3) if heavy else None}


def producer(events):
    """Where the transmitting scheduler's time goes between two messages it
    hands over (each message's ``queued``, from its POSTED event): waiting
    in the pump's ``poll`` or out of it (ticking: the codelet, publish, the
    delivery, the owners called). Of the polls that ended with news: from
    the last credit note in it to its end (the scheduler's wake), and from
    its end to the next message queued (what a credit costs it to act on)."""
    queued = sorted(v for code, _, v in events if code == POSTED)
    starts = sorted(t for code, t, _ in events if code == POLL_START)
    ends = sorted((t, v) for code, t, v in events if code == POLL_END)
    credits = sorted(t for code, t, _ in events if code == CREDIT_IN)
    if len(queued) < 20 or not ends:
        return None
    polls = []  # (start, end, news)
    for t, v in ends:
        k = bisect.bisect_right(starts, t) - 1
        if k >= 0:
            polls.append((starts[k], t, bool(v & NEWS)))
    middle = queued[int(len(queued) * SKIP):int(len(queued) * (1 - SKIP))]
    lo, hi = middle[0], middle[-1]
    polled = sum(max(0, min(e, hi) - max(s, lo)) for s, e, _ in polls)
    span = hi - lo
    woke, acted = [], []
    for s, e, news in polls:
        if not news or not lo <= e <= hi:
            continue
        k = bisect.bisect_right(credits, e) - 1
        if k >= 0 and credits[k] >= s:
            woke.append(e - credits[k])
        j = bisect.bisect_right(queued, e)
        if j < len(queued):
            acted.append(queued[j] - e)
    inside = [p for p in polls if lo <= p[1] <= hi]
    return {"per_message_us": round(span / (len(middle) - 1) / 1e3, 2),
            "in_poll_us": round(polled / (len(middle) - 1) / 1e3, 2),
            "out_of_poll_us": round((span - polled) / (len(middle) - 1) / 1e3, 2),
            "polls_per_message": round(len(inside) / (len(middle) - 1), 3),
            "news_share": round(sum(1 for p in inside if p[2]) / max(1, len(inside)), 3),
            "credit_to_poll_end": spread(woke), "poll_end_to_queued": spread(acted),
            "poll_length": spread([e - s for s, e, _ in inside])}


def cycle(rx_events, tx_events, in_flight):
    """Each message's steps (the module's docstring), over the messages
    between the first and last tenth."""
    posted = sorted((t, queued) for code, t, queued in tx_events if code == POSTED)
    arrived = sorted((t, header) for code, t, header in rx_events if code == ARRIVED)
    taken, credited = per_message(rx_events, TAKEN), per_message(rx_events, CREDITED)
    out, came = per_message(rx_events, CREDIT_OUT), per_message(tx_events, CREDIT_IN)
    n = min(len(posted) - in_flight, len(arrived), len(taken), len(credited), len(out), len(came))
    if n < 20:
        raise ValueError(f"{n} messages traced whole on both sides: too few (is CUBIND_UCX_TRACE's room enough?)")
    steps = {k: [] for k in ("A", "B", "C", "D", "E", "F", "G", "cycle", "queued_before_credit")}
    for i in range(int(n * SKIP), int(n * (1 - SKIP))):
        (t_post, _), (t_arrived, t_header) = posted[i], arrived[i]
        steps["A"].append(t_header - t_post)
        steps["B"].append(t_arrived - t_header)
        steps["C"].append(taken[i] - t_arrived)
        steps["D"].append(credited[i] - taken[i])
        steps["E"].append(out[i] - credited[i])
        steps["F"].append(came[i] - out[i])
        steps["G"].append(posted[i + in_flight][0] - came[i])
        steps["cycle"].append(posted[i + in_flight][0] - t_post)
        steps["queued_before_credit"].append(came[i] - posted[i + in_flight][1])
    queued, sent = sorted(q for _, q in posted), [t for t, _ in posted]
    backlog = Counter(bisect.bisect_left(queued, t) - bisect.bisect_left(sent, t)
                      for t in came[int(n * SKIP):int(n * (1 - SKIP))])
    return {"messages": n, "steps": {k: spread(v) for k, v in steps.items()},
            "backlog_at_credit": dict(sorted(backlog.items())), "tx_turns": turns(tx_events),
            "rx_turns": turns(rx_events), "producer": producer(tx_events)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16 << 20, help="bytes of the tensor")
    parser.add_argument("--storage", default="device", choices=["device", "host"])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--in-flight", type=int, default=4)
    parser.add_argument("--keep", metavar="DIR", help="keep the traces here")
    parser.add_argument("--read", metavar="PREFIX", help="read kept traces (PREFIX_rx.bin, PREFIX_tx.bin); run none")
    a = parser.parse_args()
    if a.messages < 100:
        parser.error("--messages: at least 100")
    row = {"size": a.size, "storage": a.storage, "in_flight": a.in_flight}
    with tempfile.TemporaryDirectory() as scratch:
        prefix = a.read
        if prefix is None:
            directory = a.keep or scratch
            os.makedirs(directory, exist_ok=True)
            prefix = os.path.join(directory, f"cycle_{a.storage}_{a.size}")
            row["messages_per_s"] = round(run(a.size, a.storage, a.messages, a.in_flight, prefix))
        row.update(cycle(load(f"{prefix}_rx.bin"), load(f"{prefix}_tx.bin"), a.in_flight))
    print(json.dumps(row))


if __name__ == "__main__":
    main()
