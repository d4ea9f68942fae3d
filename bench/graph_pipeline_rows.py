"""graph_messages.py's pipeline rows, each run ``--runs`` times: medians and
every run, as one JSON line. The host's speed swings from run to run on the
GPU machines; run this in two trees one after the other (old, new, old, new)
to pair a change's before and after, as bench/HISTORY.md's second-session
section does.

    python bench/graph_pipeline_rows.py --runs 5 --messages 2000
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graph_messages as gm  # noqa: E402  (beside this file)

import cubind  # noqa: E402


def rows(name, runs, messages, **kw):
    got = [gm.pipeline(messages, 1, name, **kw) for _ in range(runs)]
    rates = [r["messages_per_s"] for r in got]
    row = {"median": round(statistics.median(rates)), "all": [round(r) for r in rates]}
    busy = [r.get("gpu_busy_fraction_calibrated") for r in got]
    if busy[0] is not None:
        row.update(busy_median=round(statistics.median(busy), 3), busy=[round(b, 3) for b in busy])
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    if cubind.Device.count() == 0:
        sys.exit("graph_pipeline_rows: no GPU")
    out = {}
    saxpy = cubind.Program(gm.SAXPY).compile().get_kernel("saxpy")
    gm.Stage.launch = staticmethod(lambda x: saxpy(gm.GRID, 256, 2.0, x, x, gm.N))
    gm.pipeline(300, 1, "warm-up")
    gm.pipeline(300, 1, "warm-up", resident=True)
    out["1 MiB"] = rows("1 MiB", args.runs, args.messages)
    out["1 MiB, GPU-resident"] = rows("1 MiB", args.runs, args.messages, resident=True)
    spin = cubind.Program(gm.SPIN).compile().get_kernel("spin")
    iters, kernel_us = gm.calibrate_spin(spin)
    in_graph_us = gm.kernel_us_in_a_graph(spin, iters)
    gm.Stage.launch = staticmethod(lambda x: spin(gm.GRID, 256, x, gm.N, iters))
    out["spin"] = rows("spin", args.runs, args.messages, kernel_us=kernel_us)
    out["spin, GPU-resident"] = rows("spin", args.runs, args.messages, resident=True, kernel_us=in_graph_us)
    out.update(kernel_us=kernel_us, kernel_us_in_a_graph=in_graph_us)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
