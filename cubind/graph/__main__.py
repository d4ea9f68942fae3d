"""``python -m cubind.graph app.yaml [--param entity/component/key=value ...]``:
runs a YAML app, as GXF's ``gxe.py --app`` does.

Exit status: 0 when the graph ran to its end (or the app needs a GPU and
there is none: it says so and skips, as cubind's examples do), 1 when a
codelet raised (the error names entity, codelet and phase) or a UCX
connection failed or was lost (the error names the queue and the peer), 2
for a bad app or argument. A part of an app split across processes (UCX
queues) prints the messages each of its queues sent and received.
SIGINT and SIGTERM stop the graph cleanly (every started codelet's stop()
runs), also while it waits for its peers to connect."""

import argparse
import logging
import signal
import sys
import traceback

import cubind

from .apps.loader import gpu_needs, load
from .model.errors import CodeletError, GraphError
from .scheduling.scheduler import GreedyScheduler, MultiThreadScheduler
from .ucx.transport import UcxError
from .ucx.wire import WireError


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m cubind.graph", description="Run a cubind.graph YAML app.")
    parser.add_argument("app", help="the YAML app")
    parser.add_argument("--param", action="append", default=[], metavar="ENTITY/COMPONENT/KEY=VALUE",
                        help="override a component parameter (the value is read as YAML); repeatable")
    parser.add_argument("--threads", type=int, default=None,
                        help="run on a multi-thread scheduler with this many workers (default: the app's scheduler)")
    parser.add_argument("--max-duration-ms", type=int, default=None, help="stop after this long")
    parser.add_argument("--log-level", default="WARNING", help="logging level (DEBUG, INFO, ...)")
    return parser.parse_args(argv)


def _no_gpu(needs):
    """Why there is no GPU to run on, or None."""
    try:
        if cubind.Device.count() > 0:
            return None
        return f"no CUDA device found ({needs})"
    except OSError as exc:
        return f"{str(exc).removeprefix('cubind: ')} ({needs})"


def _scheduler(args):
    if args.threads is None and args.max_duration_ms is None:
        return None
    params = {} if args.max_duration_ms is None else {"max_duration_ms": args.max_duration_ms}
    if args.threads is not None and args.threads > 1:
        return MultiThreadScheduler(worker_thread_number=args.threads, **params)
    return GreedyScheduler(**params)


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(name)s: %(message)s")
    try:
        graph = load(args.app, args.param)
        scheduler = _scheduler(args)
    except (GraphError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    needs = gpu_needs(graph)
    reason = _no_gpu(needs) if needs else None
    if reason is not None:
        print(f"No GPU available: {reason}; skipping.")
        return 0
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: graph.interrupt())
    try:
        result = graph.run(scheduler)
    except CodeletError as exc:
        traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (UcxError, WireError) as exc:  # a connection failed or was lost, a message undecodable
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except GraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.app}: {result.reason} after {result.ticks} ticks in {result.duration_s:.3f} s")
    for path, counts in result.messages.items():
        print(f"{args.app}: messages {path}: " + " ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
