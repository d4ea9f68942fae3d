"""cubind against the bare call in one process: what cubind's own work costs.

    python bench/inprocess.py [--rounds N]     # on a GPU machine, after run.py built .bench/

run.py times each backend in its own process, and there a bare C call behind
a Python function (_bare.pyx) costs more than the same call in C's hot loop.
This diagnostic alternates cubind's function and the bare one within one
process, one short sample each, and prints per call the median of the paired
differences: the part of cubind's cost that is its conversions and checks,
apart from the process and the machine's drift. The copy rows (4 KiB, 1 MiB)
pair the Pythonic Array.set/get and to_gpu with the same C calls on the same
buffers, in the same process and so with the same device allocations live.
"""

import argparse
import gc
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, ".bench", "pyfloor"), HERE]
import worker  # noqa: E402

COPY_ITERATIONS = {"4KiB": 500, "1MiB": 40}   # as run.py's; 256 MiB is left to run.py


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--ptx", default=os.path.join(ROOT, ".bench", "kernels.ptx"))
    args = parser.parse_args()
    with open(args.ptx, "rb") as f:
        rows, keep = worker.rows_cubind_pythonic(f.read())
    bare = worker.bare_of(rows)
    bare.update(worker.bare_copies(rows))
    gc.disable()
    print("| call | cubind | bare call | cubind − bare (paired median) |\n|---|---|---|---|")
    copies = [call for call in worker.COPIES if not call.endswith("256MiB")]
    for call in list(worker.BARE_CALLS) + copies:
        iters = 2000 if call in worker.LAUNCHES else COPY_ITERATIONS[call[-4:]] if call in copies else 20000
        ours, theirs, diffs = [], [], []
        for r in range(args.rounds):
            pair = [(rows, ours), (bare, theirs)]
            for table, out in (pair if r % 2 == 0 else pair[::-1]):
                fn, fargs, after, *kwargs = table[call]
                out.append(worker._sample(fn, fargs, iters, after, kwargs[0] if kwargs else None))
            diffs.append(ours[-1] - theirs[-1])
        print(f"| {call} | {statistics.median(ours):.0f} ns | {statistics.median(theirs):.0f} ns "
              f"| {statistics.median(diffs):.1f} ns |", flush=True)
    del keep


if __name__ == "__main__":
    main()
