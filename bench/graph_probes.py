"""The probes behind graph_messages.py's rows (bench/README.md, tenth session):
each answers one question the rows raised, on the GPU machine.

    python bench/graph_probes.py workers [--messages 2000] [--rounds 5]
    python bench/graph_probes.py addresses [--messages 3000]
    python bench/graph_probes.py holoscan-after [--messages 20000]   # holoscan importable
    python bench/graph_probes.py trees BEFORE AFTER [--messages 3000] [--rounds 8]

- ``workers``: the 1 MiB pipeline on one worker, four, and four whose idle
  workers look only every 20 ms (``handoff_ms=1000``), in turn; every tick
  traced (thread, CPU, start, end). Per run, one JSON line: the rate, tick
  times, how often consecutive ticks changed thread (``switches``) or
  overlapped (``overlaps``), the CPUs they ran on. Where four workers are
  slower with no switch and no overlap, the ticks' own cost is what moved.
- ``addresses``: how many distinct (input, output) address pairs a
  GPU-resident chain's replays see over a run (with and without the
  generator in the chain): what the replay graphs kept by address rely on.
- ``holoscan-after``: our greedy ping before and after one Holoscan ping run
  in the same process, and which threads are busy meanwhile: why the rows
  run Holoscan in a process of its own.
- ``trees``: the pipeline's chain, ticked and four-worker rows from two
  built trees (the one before a change and the one after), in child
  processes taken in turn: what a change gained on one machine (eleventh
  session).
"""

import argparse
import collections
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graph_messages as gm  # noqa: E402  (beside this file)

import cubind  # noqa: E402
from cubind import graph as gx  # noqa: E402


def _saxpy_stages():
    saxpy = cubind.Program(gm.SAXPY).compile().get_kernel("saxpy")
    gm.Stage.launch = staticmethod(lambda x: saxpy(gm.GRID, 256, 2.0, x, x, gm.N))


# -- workers


def _traced(trace):
    """Wraps the pipeline's codelets' ticks to note (thread, start, end, CPU)."""
    cpu = ctypes.CDLL(None).sched_getcpu
    for cls in (gm.Generate, gm.Stage, gm.Rx):
        def tick(self, inner=cls.tick):
            begin = time.perf_counter()
            inner(self)
            trace.append((threading.get_ident(), begin, time.perf_counter(), cpu()))
        cls.tick = tick


def _workers_run(messages, threads, handoff_ms, trace):
    trace.clear()
    scheduler = gm.scheduler
    if handoff_ms is not None:
        gm.scheduler = lambda t: gx.MultiThreadScheduler(worker_thread_number=t, handoff_ms=handoff_ms)
    try:
        rate = gm.pipeline(messages, threads, "p")["messages_per_s"]
    finally:
        gm.scheduler = scheduler
    ticks = sorted(trace, key=lambda t: t[1])
    spans = [(end - begin) * 1e6 for _, begin, end, _ in ticks]
    pairs = list(zip(ticks, ticks[1:]))
    return {"workers": threads, "handoff_ms": handoff_ms, "messages_per_s": round(rate),
            "tick_us_median": round(statistics.median(spans), 1), "ticks_over_1ms": sum(s > 1000 for s in spans),
            "switches": sum(a[0] != b[0] for a, b in pairs), "overlaps": sum(b[1] < a[2] for a, b in pairs),
            "cpus": sorted({t[3] for t in ticks})}


def workers(args):
    _saxpy_stages()
    trace = []
    _traced(trace)
    gm.pipeline(300, 1, "p")  # warm-up
    for _ in range(args.rounds):
        for threads, handoff_ms in ((1, None), (4, None), (4, 1000.0)):
            print(json.dumps(_workers_run(args.messages, threads, handoff_ms, trace)), flush=True)


# -- addresses


def addresses(args):
    from cubind.graph.scheduling import resident

    _saxpy_stages()
    seen = collections.Counter()
    replay = resident.ResidentChain._replay

    def noted(self, message):
        sources = self._sources(message)
        out = replay(self, message)
        seen[resident._addresses(sources, out)] += 1
        return out

    resident.ResidentChain._replay = noted
    for mode in (True, "from the generator"):
        seen.clear()
        gm.pipeline(args.messages, 1, "p", resident=mode)
        print(json.dumps({"chain": "from the generator" if mode is not True else "the two stages",
                          "replays": sum(seen.values()), "distinct_address_pairs": len(seen),
                          "most_used": [n for _, n in seen.most_common(4)]}), flush=True)


# -- holoscan-after


def _busy_threads(seconds=1.0):
    """Threads of this process that used CPU time within ``seconds`` (ticks of 10 ms)."""
    def times():
        out = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
                out[tid] = int(fields[11]) + int(fields[12])
            except OSError:
                pass
        return out

    before = times()
    time.sleep(seconds)
    after = times()
    return {tid: after[tid] - before[tid] for tid in after if tid in before and after[tid] > before[tid]}


def holoscan_after(args):
    def pings():
        return [round(gm.ping(args.messages, 1)["messages_per_s"]) for _ in range(5)]

    print(json.dumps({"our_ping_before": pings()}), flush=True)
    runs = gm.holoscan_runs(args.messages, 2000, False)
    if not callable(runs["ping"]):
        print(json.dumps(runs["ping"]))
        return
    runs["ping"]()
    print(json.dumps({"threads_busy_after_holoscan": _busy_threads(), "our_ping_after": pings()}), flush=True)


# -- trees

_TREE_CHILD = r"""
import json, sys
sys.path.insert(0, "bench")
import graph_messages as gm, cubind
saxpy = cubind.Program(gm.SAXPY).compile().get_kernel("saxpy")
gm.Stage.launch = staticmethod(lambda x: saxpy(gm.GRID, 256, 2.0, x, x, gm.N))
gm.pipeline(500, 1, "p", resident=True)
gm.pipeline(500, 1, "p")
rows = {"chain": [], "ticked": [], "ticked, 4 workers": []}
for _ in range(2):
    rows["chain"].append(gm.pipeline(MESSAGES, 1, "p", resident=True)["messages_per_s"])
    rows["ticked"].append(gm.pipeline(MESSAGES, 1, "p")["messages_per_s"])
    rows["ticked, 4 workers"].append(gm.pipeline(MESSAGES, 4, "p")["messages_per_s"])
print("rows " + json.dumps(rows))
"""


def trees(args):
    """The 1 MiB pipeline's rows (chain, ticked, ticked on four workers)
    from two built trees, in child processes taken in turn (the order
    swapped each round), each with its own tree first on the path: a change
    measured against the tree before it on one machine, whose speed swings
    between instances more than the change."""
    got = {tree: {} for tree in args.tree}
    child = _TREE_CHILD.replace("MESSAGES", str(args.messages))
    for r in range(args.rounds):
        for tree in (args.tree if r % 2 == 0 else args.tree[::-1]):
            done = subprocess.run([sys.executable, "-c", child], cwd=tree, capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=tree))
            line = [ln for ln in done.stdout.splitlines() if ln.startswith("rows ")]
            if not line:
                sys.exit(f"graph_probes.py trees: {tree} failed:\n{done.stderr[-2000:]}")
            for row, rates in json.loads(line[0][len("rows "):]).items():
                got[tree].setdefault(row, []).extend(rates)
            print(json.dumps({"round": r, "tree": tree, "rows": got[tree]}), flush=True)
    before, after = args.tree
    for row in got[after]:
        b, a = statistics.median(got[before][row]), statistics.median(got[after][row])
        print(json.dumps({"row": row, "before": round(b), "after": round(a), "after/before": round(a / b, 3)}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("probe", choices=("workers", "addresses", "holoscan-after", "trees"))
    parser.add_argument("tree", nargs="*", help="trees: the tree before and the tree after (built, each a root)")
    parser.add_argument("--messages", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    args.messages = args.messages or {"workers": 2000, "addresses": 3000, "holoscan-after": 20000,
                                      "trees": 3000}[args.probe]
    if args.probe == "trees":
        if len(args.tree) != 2:
            parser.error("trees takes two trees: the one before and the one after")
        trees(args)  # the children need the GPU, not this process
        return
    if args.probe != "holoscan-after" and cubind.Device.count() == 0:
        sys.exit(f"graph_probes.py {args.probe}: needs a GPU")
    {"workers": workers, "addresses": addresses, "holoscan-after": holoscan_after}[args.probe](args)


if __name__ == "__main__":
    main()
