#!/usr/bin/env python3
"""The Python functions a UCX message runs on one side: ``graph_messages.py``'s
two parts, one of them (``--side``) under cProfile, and per message each
function's calls and its time (cProfile's, which inflates a call several
times: read the times as shares, the counts as they are).

    python bench/ucx_python_calls.py [--side tx|rx] [--size BYTES] [--storage device|host] [--messages N]

Prints one JSON object: the receiver's messages/s and, for each function
called at least ``--min-calls`` times a message (0.3 by default), its
calls, own time and cumulative time per message (us), own time first.
It says where roadmap item 4 (the codelet engine's hot loop compiled)
would take Python out of a message's path: on the 2-core development
machine (emulated driver, 4 KiB device tensors) a transmitted message ran
46 Python calls (the codelet's `Message` and `Tensor`, both publishes,
`cubind.Array`'s properties, the loop's checks) and a received one 42,
`cubind.Array.from_ptr` with its checks and strides the largest share."""

import argparse
import json
import os
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_messages import PART, part_env  # noqa: E402
from two_parts import both_results, free_port  # noqa: E402

# Before the part's code: its graph's run profiled (not the imports before it), written as it ends.
PROFILED = """import cProfile as _cProfile
from cubind import graph as _graph
_run = _graph.Graph.run
def _profiled_run(self, *args, **kwargs):
    profile = _cProfile.Profile()
    profile.enable()
    try:
        return _run(self, *args, **kwargs)
    finally:
        profile.disable()
        profile.dump_stats({path!r})
_graph.Graph.run = _profiled_run
"""


def per_message(path, messages, min_calls):
    """Each function called at least ``min_calls`` times a message: its
    calls, own and cumulative us per message, most own time first."""
    stats = pstats.Stats(path).stats
    rows = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.items():
        if calls >= messages * min_calls:
            where = f"{os.path.basename(file)}:{line} {name}" if file != "~" else name
            rows.append({"function": where, "calls": round(calls / messages, 2),
                         "own_us": round(own / messages * 1e6, 2),
                         "cumulative_us": round(cumulative / messages * 1e6, 2)})
    return sorted(rows, key=lambda row: -row["own_us"])


def run(side, size, storage, count, min_calls, timeout=300):
    args = [str(free_port()), str(count), str(size), storage]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "part.prof")
        code = {role: (PROFILED.format(path=path) + PART) if role == side else PART for role in ("rx", "tx")}
        received, _ = both_results([sys.executable, "-c", code["rx"], "rx", *args],
                                   [sys.executable, "-c", code["tx"], "tx", *args], part_env(), timeout,
                                   tx_result=True)  # its line read, not printed
        functions = per_message(path, count, min_calls)
    return {"side": side, "size": size, "storage": storage, "messages": count,
            "messages_per_s": received["messages_per_s"], "functions": functions}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", default="tx", choices=["tx", "rx"], help="the part to profile")
    parser.add_argument("--size", type=int, default=4096, help="bytes of the tensor (0: empty messages)")
    parser.add_argument("--storage", default="device", choices=["device", "device-pool", "host"])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--min-calls", type=float, default=0.3, help="calls a message, at least, to be listed")
    a = parser.parse_args()
    print(json.dumps(run(a.side, a.size, a.storage, a.messages, a.min_calls), indent=1))


if __name__ == "__main__":
    main()
