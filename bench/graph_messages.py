#!/usr/bin/env python3
"""cubind.graph's message rate, beside NVIDIA Holoscan's on the same apps, in
one process run.

Rows (``bench/README.md`` says what each measures):

- a ping pair (empty messages, host only): cubind.graph on the greedy and the
  4-worker scheduler; Holoscan's Python operators on its default scheduler;
- lines of 3 and 4 codelets passing empty messages: the engine's own cost
  per message at the pipeline's number of ticks (GPU-resident, ticked);
- a 4-codelet pipeline (generator -> saxpy -> saxpy -> sink) carrying 1 MiB
  float32 device tensors, one saxpy kernel per stage: cubind.graph ticked
  (greedy, 4 workers), with the two stages a GPU-resident chain
  (captured into a CUDA graph, replayed per message) and with the chain
  beginning at the generator (declared GPU-resident: its tick only asks
  its allocator for the tensor, as Holoscan's cp.empty does); Holoscan's operators
  doing the same with CuPy arrays and the same kernel (a CuPy RawKernel);
- the same pipeline with kernels of >= 50 us each (a spin kernel, its
  iterations calibrated here), ticked and GPU-resident, for the GPU's busy
  fraction;
- the ratios the issue's targets are about, from the rows above (the ping
  pairs and the 1 MiB pipeline rows, ours and Holoscan's, are medians of 9
  runs taken in turn: the host's speed swings within a run).

Holoscan's rows run where ``holoscan`` imports (and, for the pipeline, CuPy),
else a line says why. Prints one JSON object per row, then a table.

Across processes (UCX, RAPIDS' ucxx): the ping pair with both ends in one
process over UCX and split in two processes (its time per message: the
floor of every row below; again with ucxx's Python futures instead of its
polling wait), host tensors (numpy) and device tensors of 1, 16 and 256 MiB
sent from one process to another (device rows' bytes/s beside the GPU's
device-to-device copy bandwidth at the same size, measured in the same run),
where ucxx is installed; Holoscan's two-fragment ping beside them; with
``--ucx-floor`` (bench/ucx_floor.c built), UCX's own rate at the same sizes
and memory from C, the floor any binding of UCX is read against, and each
row's ratio to it; with ``--remote-rounds N`` the device rows and their
floors N times in turn, each the median of its runs. The rates
across processes are the receiver's, from its first message to its last
(the connection's setup is not counted). A row whose library or GPU is
missing says so (``skipped``, and a line on stderr); one whose parts fail
says so (``failed``) and the others still run.

    python bench/graph_messages.py [--messages 20000] [--pipeline-messages 2000] [--remote-messages 5000]
                                   [--remote-only | --local-only] [--ucx-floor .bench/ucx_floor]
                                   [--in-flight 4] [--remote-rounds 1]
"""

import argparse
import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from two_parts import both_results, free_port, receiver_result

import cubind
from cubind import graph as gx

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + out[i];
}"""
# A kernel whose time is set by its iterations: each element goes through
# `iters` dependent multiply-adds.
SPIN = r"""
extern "C" __global__ void spin(float *x, size_t n, int iters)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int k = 0; k < iters; ++k) v = v * 0.9999f + 0.0001f;
        x[i] = v;
    }
}"""
N = (1 << 20) // 4  # 1 MiB of float32
GRID = (N + 255) // 256
LONG_KERNEL_US = 60.0  # what the spin kernel is calibrated to (the row needs >= 50 us)


class Span:
    """A run's first source tick and last sink tick: its rows' wall time
    runs from the first to the last (after the GPU's work where it has
    some), as Holoscan's rows below time theirs (Clock), leaving each
    engine's start-up and graph building out."""

    first = last = None

    @classmethod
    def reset(cls):
        cls.first = cls.last = None


class Tx(gx.Codelet):
    def tick(self):
        if Span.first is None:
            Span.first = time.perf_counter()
        self.transmitters[0].publish(gx.Message())


class Rx(gx.Codelet):
    def tick(self):
        self.receivers[0].receive()
        Span.last = time.perf_counter()


class Relay(gx.Codelet):
    def tick(self):
        self.transmitters[0].publish(self.receivers[0].receive())


class Generate(gx.Codelet):
    def tick(self):
        if Span.first is None:
            Span.first = time.perf_counter()
        m = gx.Message()
        m.add_tensor("x", self.allocator.allocate((N,), np.float32))
        self.transmitters[0].publish(m)


class ResidentGenerate(Generate):
    """The same source, declared GPU-resident (its tick only asks its
    allocator for a tensor), so that a chain may begin with it: Holoscan's
    GPU-resident graphs take every device-only operator of the fragment."""

    gpu_resident = True


class Stage(gx.Codelet):
    """One kernel in place on the message's tensor, timed by a pair of events."""

    launch = None  # set per row: a function (x) -> None launching the row's kernel
    spans: list = []

    def tick(self):
        x = self.receivers[0].receive().tensor("x").data
        begin, end = cubind.Event(), cubind.Event()
        begin.record(self.stream)
        Stage.launch(x)
        end.record(self.stream)
        self.spans.append((begin, end))
        m = gx.Message()
        m.add_tensor("x", x)
        self.transmitters[0].publish(m)


class ResidentStage(gx.Codelet):
    """The same kernel, no events (a capture cannot time its own nodes): its
    tick only queues work on its stream."""

    gpu_resident = True

    def tick(self):
        x = self.receivers[0].receive().tensor("x").data
        Stage.launch(x)
        m = gx.Message()
        m.add_tensor("x", x)
        self.transmitters[0].publish(m)


def chain(g, names, count, codelets, device=False):
    for i, (name, cls) in enumerate(zip(names, codelets)):
        e = g.entity(name)
        if i:
            e.add(gx.DoubleBufferReceiver(capacity=2), "in")
            e.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
            g.connect(f"{names[i - 1]}/out", f"{name}/in")
        else:
            e.add(gx.CountSchedulingTerm(count=count))
        if i < len(names) - 1:
            e.add(gx.DoubleBufferTransmitter(capacity=2), "out")
            e.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
        if device:
            e.add(gx.UnboundedAllocator(), "alloc")
            e.add(gx.CudaStreamPool(stream_flags=1), "pool")
        e.add(cls(), name)


def scheduler(threads):
    return gx.MultiThreadScheduler(worker_thread_number=threads) if threads > 1 else gx.GreedyScheduler()


def ping(count, threads):
    g = gx.Graph()
    chain(g, ["tx", "rx"], count, [Tx, Rx])
    Span.reset()
    g.run(scheduler(threads))
    rate = count / (Span.last - Span.first)
    return {"row": f"cubind.graph ping pair ({threads} thread(s))", "messages_per_s": rate}


def empty_chain(count, length):
    """``length`` codelets in a line passing empty messages (greedy): the
    engine's own cost per message of a pipeline of that many ticks, no CUDA."""
    g = gx.Graph()
    names = [f"c{i}" for i in range(length)]
    chain(g, names, count, [Tx, *[Relay] * (length - 2), Rx])
    Span.reset()
    g.run(scheduler(1))
    rate = count / (Span.last - Span.first)
    return {"row": f"cubind.graph {length}-codelet line of empty messages (1 thread(s))", "messages_per_s": rate,
            "us_per_message": 1e6 / rate}


def pipeline(count, threads, label, resident=False, kernel_us=None):
    """The 4-codelet pipeline. ``resident``: False (ticked), True (the two
    stages a GPU-resident chain) or "from the generator" (the generator
    too: the chain begins with it). The GPU's busy fraction: the stages'
    kernel time over the wall time, the kernel time from each launch's event
    pair (ticked) or, where given, ``kernel_us`` per launch (the calibrated
    kernel: a captured graph's kernels cannot be timed by events)."""
    g = gx.Graph()
    stage = ResidentStage if resident else Stage
    source = ResidentGenerate if resident == "from the generator" else Generate
    chain(g, ["gen", "saxpy1", "saxpy2", "sink"], count, [source, stage, stage, Rx], device=True)
    if resident == "from the generator":
        g.gpu_resident("gen", "saxpy1", "saxpy2")
    elif resident:
        g.gpu_resident("saxpy1", "saxpy2")
    Stage.spans = []
    cubind.Device(0).synchronize()
    Span.reset()
    g.run(scheduler(threads))
    cubind.Device(0).synchronize()
    wall = time.perf_counter() - Span.first
    mode = "" if not resident else ", GPU-resident from the generator" if source is ResidentGenerate else \
        ", GPU-resident"
    row = {"row": f"cubind.graph {label}{mode} ({threads} thread(s))",
           "messages_per_s": count / wall}
    if Stage.spans:
        row["gpu_busy_fraction"] = sum(end - begin for begin, end in Stage.spans) / 1000 / wall
        row["kernel_us"] = sum(end - begin for begin, end in Stage.spans) * 1000 / len(Stage.spans)
    if kernel_us is not None:
        row["gpu_busy_fraction_calibrated"] = 2 * count * kernel_us / 1e6 / wall
    Stage.spans = []
    return row


def calibrate_spin(spin):
    """Iterations for which one spin launch takes ~LONG_KERNEL_US, and the
    launch's time (us, median of 20) at those."""
    x = cubind.zeros(N, np.float32)
    stream = cubind.Stream(non_blocking=True)

    def timed(iters):
        times = []
        for _ in range(20):
            begin, end = cubind.Event(), cubind.Event()
            begin.record(stream)
            spin(GRID, 256, x, N, iters, stream=stream)
            end.record(stream)
            end.synchronize()
            times.append((end - begin) * 1000)
        return float(np.median(times))

    iters = 1024
    for _ in range(4):
        iters = max(1, int(iters * LONG_KERNEL_US / timed(iters)))
    return iters, timed(iters)


def kernel_us_in_a_graph(spin, iters, launches=40):
    """One spin launch's time inside a CUDA graph (us, median of 10): a
    captured chain's kernels run back to back, without the gap an event pair
    around one launch also measures, so the resident row's busy fraction is
    taken against this time, not the events' (which put it above 100 %)."""
    x = cubind.zeros(N, np.float32)
    cubind.Device(0).synchronize()
    stream = cubind.Stream(non_blocking=True)
    graph = cubind.CUDAGraph()
    with graph.capture(stream):
        for _ in range(launches):
            spin(GRID, 256, x, N, iters, stream=stream)
    times = []
    for _ in range(10):
        begin, end = cubind.Event(), cubind.Event()
        begin.record(stream)
        graph.launch(stream)
        end.record(stream)
        end.synchronize()
        times.append((end - begin) * 1000 / launches)
    graph.close()
    return float(np.median(times))


# -- across processes (UCX)


# One part of a two-process row: "rx" prints its rate as JSON, "tx" sends
# ``count`` messages (empty, or one tensor of ``size`` bytes in ``storage``:
# "device" (cuMemAlloc), "device-pool" (the device's stream-ordered pool, as a
# graph allocator's tensors), or "host", a numpy array).
PART = r"""
import json, os, sys, time
import numpy as np
from cubind import graph as gx
role, port, count, size, storage = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
# Both queues' capacity: the receiving queue's is the messages on the wire (credits); as many more
# may wait, produced, on the transmitter's side for them.
capacity = int(sys.argv[6]) if len(sys.argv) > 6 else 4
device = bool(size) and storage.startswith("device")

class Tx(gx.Codelet):
    def start(self):
        self.payload = None
        if size:
            self.payload = np.ones(size // 4, np.float32)
        if device:
            import cubind
            if storage == "device-pool":  # a graph allocator's memory: the device's stream-ordered pool
                stream = cubind.Stream(non_blocking=True)
                self.payload = cubind.to_gpu(self.payload, stream=stream)
                stream.synchronize()
            else:  # cuMemAlloc (to_gpu takes the device's pool unless told: that is "device-pool")
                self.payload = cubind.to_gpu(self.payload, pool=False)
    def tick(self):
        m = gx.Message()
        if self.payload is not None:
            m.add_tensor("x", self.payload)
        self.transmitters[0].publish(m)

class Rx(gx.Codelet):
    def start(self):
        self.times = []
    def tick(self):
        self.receivers[0].receive()
        self.times.append(time.perf_counter())

g = gx.Graph()
g.entity("ucx").add(gx.UcxContext(cpu_data_only=not device), "context")
e = g.entity(role)
if role == "tx":
    e.add(gx.UcxTransmitter(receiver_address="127.0.0.1", port=port, capacity=capacity), "out")
    e.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    e.add(gx.CountSchedulingTerm(count=count))
    e.add(Tx(), "tx")
    g.run()
    from cubind.graph.ucx.transport import Engine
    pump = Engine.shared().started_pump  # the transmitting side's data path: its counters
    print(json.dumps({"pump": None if pump is None else pump.stats()}))
else:
    e.add(gx.UcxReceiver(port=port, capacity=capacity), "in")
    e.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    rx = e.add(Rx(), "rx")
    result = g.run()
    span = rx.times[-1] - rx.times[0]
    from cubind.graph.ucx.transport import Engine
    pump = Engine.shared().started_pump  # the receiving side's data path: its counters (docs/graph.md)
    print(json.dumps({"messages": len(rx.times), "messages_per_s": (len(rx.times) - 1) / span,
                      "received": result.messages["rx/in"]["received"], "in_flight": capacity,
                      "pump": None if pump is None else pump.stats()}))
if os.environ.get("CUBIND_UCX_TRACE_OUT"):  # the data path's trace (bench/ucx_cycle.py), this part's file
    from cubind.graph.ucx import pump as traced
    with open(f"{os.environ['CUBIND_UCX_TRACE_OUT']}_{role}.bin", "wb") as f:
        f.write(traced.trace().tobytes())
"""


def two_processes(count, size, storage="device", timeout=600, environ=None, capacity=4):
    """The receiver's rate, ``count`` messages (of ``size`` bytes in
    ``storage``, "device", "device-pool" or "host") from another process, both parts with
    ``environ`` added to this one's, the receiving queue's ``capacity`` the
    messages in flight; the transmitter's data path counters beside the
    receiver's (``transmitter_pump``). A part that fails or outlives
    ``timeout`` seconds (both are then ended) is a ``RuntimeError``."""
    args = [str(free_port()), str(count), str(size), storage, str(capacity)]
    received, sent = both_results([sys.executable, "-c", PART, "rx", *args],
                                  [sys.executable, "-c", PART, "tx", *args], part_env(environ), timeout,
                                  tx_result=True)
    received["transmitter_pump"] = sent["pump"]
    return received


def part_env(environ=None):
    """The parts' environment: this one's, the tree on PYTHONPATH, ``environ`` added."""
    root = str(Path(__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
                UCX_WARN_UNUSED_ENV_VARS="n", **(environ or {}))


def child_row(function, *args):
    """``function(*args)``'s row (a function of this file), measured in a
    process of its own: Holoscan and ucxx each load their own UCX (1.1x and
    1.21), and the second one loaded in a process binds to the first's
    libraries (``libuct.so: undefined symbol``)."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import graph_messages as gm; print(json.dumps(gm.{function}(*{args!r})))")
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=ROW_TIMEOUT_S)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        why = f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}"
        print(f"graph_messages.py: {function} failed: {why}", file=sys.stderr)
        return {"row": function, "failed": why}


def ping_over_ucx_in_one_process(count):
    port = free_port()
    g = gx.Graph()
    g.entity("ucx").add(gx.UcxContext(cpu_data_only=True), "context")
    tx = g.entity("tx")
    tx.add(gx.UcxTransmitter(receiver_address="127.0.0.1", port=port, capacity=4), "out")
    tx.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    tx.add(gx.CountSchedulingTerm(count=count))
    tx.add(Tx(), "tx")
    rx = g.entity("rx")
    rx.add(gx.UcxReceiver(port=port, capacity=4), "in")
    rx.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    rx.add(Rx(), "rx")
    start = time.perf_counter()
    g.run(gx.MultiThreadScheduler(worker_thread_number=2))
    return {"row": "cubind.graph ping pair, both ends in one process over UCX (2 threads)",
            "messages_per_s": count / (time.perf_counter() - start), "note": "includes the connection's setup"}


def device_copy_bandwidth(size, repeats=200):
    """Bytes/s of device-to-device copies of ``size`` bytes run back to back
    on the GPU: ``repeats`` copies in one CUDA graph, launched once, timed by
    events around the launch. Copies asked for one by one from Python time
    the host instead at small sizes: 1 MiB measured 51 to 104 GB/s that way,
    as fast as the host asked."""
    a, b = cubind.empty((size // 4,), np.float32), cubind.empty((size // 4,), np.float32)
    graph = cubind.CUDAGraph()
    node = None
    for _ in range(repeats):
        node = graph.add_copy(b.ptr, a.ptr, size, after=() if node is None else node)
    stream = cubind.Device().default_stream
    graph.launch(stream)  # instantiated here, and the copies' first run
    stream.synchronize()
    begin, end = cubind.Event(), cubind.Event()
    begin.record(stream)
    graph.launch(stream)
    end.record(stream)
    end.synchronize()
    graph.close()
    return size * repeats / ((end - begin) / 1000)


# Device tensor sizes of the two-process sweep: the per-message floor shows at
# 1 MiB, the bandwidth as the size grows. Each row moves about ROW_BYTES (at
# least SWEEP_MIN_MESSAGES messages), so that a large size takes seconds.
SWEEP_SIZES = (1 << 20, 16 << 20, 256 << 20)
ROW_BYTES = 4 << 30
SWEEP_MIN_MESSAGES = 24
# Device rows (ours and UCX's floor alike) move about DEVICE_ROW_BYTES, ``--remote-messages`` at most:
# CUDA IPC moves ROW_BYTES in a few milliseconds (256 messages at 16 MiB: about 10 ms from the first
# received to the last), and short 16 MiB rows swung from 20 546 messages/s to 33 788 (bench/README.md).
DEVICE_ROW_BYTES = 256 << 30
ROW_TIMEOUT_S = 120


def _skipped(row, why):
    print(f"graph_messages.py: skipped {row}: {why}", file=sys.stderr)
    return {"row": row, "skipped": why}


def sweep_count(size, count, row_bytes=ROW_BYTES):
    """Messages of a sweep row: ``count`` at most, about ``row_bytes`` in all."""
    return min(count, max(SWEEP_MIN_MESSAGES, row_bytes // size))


def device_count(size, count):
    """Messages of a device row: ``count`` at most, about ``DEVICE_ROW_BYTES`` in all."""
    return sweep_count(size, count, DEVICE_ROW_BYTES)


# The data path's turns (pump.Pump.stats): by its own thread, parked beside a poller, and by pollers.
PUMP_TURNS = ("turns_thread", "turns_parked", "turns_poll")


def two_process_row(name, count, size=0, storage="host", environ=None, in_flight=4):
    """A two-process row (``size`` 0: empty messages; ``in_flight`` both
    queues' capacity, the messages on the wire); where its parts fail, a row
    saying so (the other rows still run)."""
    try:
        r = two_processes(count, size, storage, timeout=ROW_TIMEOUT_S, environ=environ, capacity=in_flight)
    except (RuntimeError, ValueError, IndexError) as exc:  # a part failed, or printed no result
        print(f"graph_messages.py: {name} failed: {exc}", file=sys.stderr)
        return {"row": name, "failed": str(exc)}
    rate = r["messages_per_s"]
    row = {"row": name, "messages_per_s": rate, "us_per_message": 1e6 / rate, "messages": count,
           "received": r["received"], "in_flight": r["in_flight"]}
    # Each side's data path, per message: where its time went, and how often each thread turned it.
    for side, stats, done in (("receiver", r.get("pump"), "rx_taken"), ("transmitter", r.get("transmitter_pump"),
                                                                        "tx_sent")):
        if stats:
            n = max(1, stats[done])
            row[f"{side}_pump_us_per_message"] = {k[:-3]: round(v / n / 1000, 2) for k, v in stats.items()
                                                  if k.endswith("_ns")}
            row[f"{side}_pump_turns_per_message"] = {k: round(stats[k] / n, 2) for k in PUMP_TURNS}
    if size:
        row.update(bytes_per_s=rate * size, tensor_bytes=size)
    if size and storage.startswith("device"):
        copy = device_copy_bandwidth(size)
        row.update(device_copy_bytes_per_s=copy, fraction_of_device_copy=rate * size / copy)
    return row


def device_row_name(size):
    return f"{size >> 20} MiB device tensors, two processes over UCX (CUDA IPC)"


def host_row_name(size):
    return f"{size >> 20} MiB host tensors (numpy), two processes over UCX"


def floor_row_name(size, storage):
    return f"UCX's tag API in C (bench/ucx_floor.c), {size >> 20} MiB {storage} messages"


def ucx_floor_row(binary, size, count, storage="device", window=4):
    """UCX's own rate for ``size``-byte messages of ``storage`` ("device":
    cuMemAlloc, "host": malloc) between two processes (bench/ucx_floor.c:
    the tag API in C, ``window`` sends in flight, nothing else per message):
    the floor any binding of UCX is read against."""
    port = free_port()
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n", **({"FLOOR_HOST_MEMORY": "1"} if storage == "host" else {}))
    args = [str(count), str(size), str(window)]
    name = f"{floor_row_name(size, storage)}, two processes, {window} in flight"
    try:
        r = receiver_result([binary, "recv", str(port), *args], [binary, "send", "127.0.0.1", str(port), *args], env,
                             ROW_TIMEOUT_S)
    except (RuntimeError, ValueError, IndexError) as exc:
        return {"row": name, "failed": str(exc)}
    row = {"row": name, "messages_per_s": r["messages_per_s"], "bytes_per_s": r["bytes_per_s"],
           "us_per_message": 1e6 / r["messages_per_s"]}
    if storage == "device":
        copy = device_copy_bandwidth(size)
        row.update(device_copy_bytes_per_s=copy, fraction_of_device_copy=r["bytes_per_s"] / copy)
    return row


def remote_rows(count, pipeline_count, floor_binary=None, in_flight=4, rounds=1):
    if importlib.util.find_spec("ucxx") is None:
        return [_skipped("across processes (UCX)", "ucxx not installed (pip install 'cubind[ucx]')")]
    rows = [child_row("ping_over_ucx_in_one_process", count)]
    rows.append(two_process_row("cubind.graph ping pair, two processes over UCX", count))
    # ucxx's own default wait polls each pending request once per loop turn, keeping each part's loop thread
    # on the GIL; cubind.graph's transport sets its Python futures (a notifier thread) unless told otherwise.
    rows.append(two_process_row("cubind.graph ping pair, two processes over UCX (UCXPY_ENABLE_PYTHON_FUTURE=0)",
                                count, environ={"UCXPY_ENABLE_PYTHON_FUTURE": "0"}))
    # Host tensors: UCX's shared memory and CMA on the data route (docs/graph.md, "One host: the data route").
    for size in SWEEP_SIZES:
        rows.append(two_process_row(host_row_name(size), sweep_count(size, pipeline_count), size, in_flight=in_flight))
    if floor_binary:
        rows += [ucx_floor_row(floor_binary, size, sweep_count(size, 5000), "host", in_flight) for size in SWEEP_SIZES]
    if cubind.Device.count() == 0:
        return rows + [_skipped(device_row_name(size), "no GPU") for size in SWEEP_SIZES]
    # The device rows and UCX's floor beside them, ``rounds`` times in turn (each the median, its runs
    # beside it): between runs of one call the 16 MiB row at 4 in flight read 33 000 to 47 000 messages/s.
    device = [functools.partial(two_process_row, device_row_name(size), device_count(size, count), size, "device",
                                in_flight=in_flight) for size in SWEEP_SIZES]
    floors = [functools.partial(ucx_floor_row, floor_binary, size, device_count(size, count), "device", in_flight)
              for size in SWEEP_SIZES] if floor_binary else []
    measured = take_turns(rounds, *device, *floors)
    rows += measured[:len(device)]
    for size in SWEEP_SIZES[:2]:  # UCX cannot export pool memory: the transmitter copies it on the device first
        rows.append(two_process_row(device_row_name(size).replace("tensors", "tensors from the stream-ordered pool"),
                                    sweep_count(size, pipeline_count), size, "device-pool", in_flight=in_flight))
    return rows + measured[len(device):]


def holoscan_distributed_ping(count):
    """Holoscan's ping as two fragments (its distributed app: UCX between the
    fragments), all fragments in this process as ``app.run()`` without
    ``--driver``/``--worker`` starts them."""
    try:
        from holoscan.conditions import CountCondition
        from holoscan.core import Application, Fragment, Operator, OperatorSpec
    except ImportError as exc:
        return {"row": "Holoscan two-fragment ping", "skipped": f"holoscan not installed ({exc})"}

    class HTx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.output("out")

        def compute(self, op_input, op_output, context):
            op_output.emit(1, "out")

    class HRx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.input("in")

        times = []

        def compute(self, op_input, op_output, context):
            op_input.receive("in")
            HRx.times.append(time.perf_counter())

    class TxFragment(Fragment):
        def compose(self):
            self.add_operator(HTx(self, CountCondition(self, count), name="tx"))

    class RxFragment(Fragment):
        def compose(self):
            self.add_operator(HRx(self, name="rx"))

    class DistributedPing(Application):
        def compose(self):
            self.add_flow(TxFragment(self, name="tx_fragment"), RxFragment(self, name="rx_fragment"),
                          {("tx.out", "rx.in")})

    DistributedPing().run()
    # The receiver's rate from its first message to its last, as the two-process rows above measure ours.
    times = HRx.times
    return {"row": "Holoscan two-fragment ping (UCX, one host)", "messages_per_s": (len(times) - 1) /
            (times[-1] - times[0]), "received": len(times)}


# -- Holoscan


def holoscan_runs(count, pipeline_count, gpu):
    """Holoscan's rows, one run per call, so that they take turns with
    ours: {"ping": run, "pipeline": run}, each a function returning one run's
    row, or a row saying why it is skipped."""
    try:
        from holoscan.conditions import CountCondition
        from holoscan.core import Application, Operator, OperatorSpec
    except ImportError as exc:
        skipped = {"row": "Holoscan", "skipped": f"holoscan not importable ({exc})"}
        return {"ping": skipped, "pipeline": skipped}

    class Clock:
        """Wall time from the first operator call to the last (Holoscan's
        start-up and graph building left out, in its favour)."""

        first = last = None

        @classmethod
        def tick(cls):
            now = time.perf_counter()
            cls.first = cls.first or now
            cls.last = now

    class HTx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.output("out")

        def compute(self, op_input, op_output, context):
            Clock.tick()
            op_output.emit(1, "out")

    class HRx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.input("in")

        def compute(self, op_input, op_output, context):
            op_input.receive("in")
            Clock.tick()

    class Ping(Application):
        def compose(self):
            tx = HTx(self, CountCondition(self, count), name="tx")
            self.add_flow(tx, HRx(self, name="rx"), {("out", "in")})

    def ping():
        Clock.first = Clock.last = None
        Ping().run()
        return {"row": "Holoscan ping pair (Python operators)", "messages_per_s": count / (Clock.last - Clock.first)}

    runs = {"ping": ping}
    if not gpu:
        return dict(runs, pipeline={"row": "Holoscan 4-operator pipeline", "skipped": "no GPU"})
    try:
        import cupy as cp
    except ImportError as exc:
        return dict(runs, pipeline={"row": "Holoscan 4-operator pipeline", "skipped": f"CuPy not importable ({exc})"})
    saxpy = cp.RawKernel(SAXPY, "saxpy")
    spans = []

    class HGen(Operator):
        def setup(self, spec: OperatorSpec):
            spec.output("out")

        def compute(self, op_input, op_output, context):
            Clock.tick()
            op_output.emit(cp.empty(N, cp.float32), "out")

    class HSaxpy(Operator):
        def setup(self, spec: OperatorSpec):
            spec.input("in")
            spec.output("out")

        def compute(self, op_input, op_output, context):
            x = cp.asarray(op_input.receive("in"))
            begin, end = cp.cuda.Event(), cp.cuda.Event()
            begin.record()
            saxpy((GRID,), (256,), (np.float32(2.0), x, x, np.uint64(N)))
            end.record()
            spans.append((begin, end))
            op_output.emit(x, "out")

    class HSink(Operator):
        def setup(self, spec: OperatorSpec):
            spec.input("in")

        def compute(self, op_input, op_output, context):
            op_input.receive("in")
            Clock.tick()

    class Pipeline(Application):
        def compose(self):
            gen = HGen(self, CountCondition(self, pipeline_count), name="gen")
            s1, s2, sink = HSaxpy(self, name="saxpy1"), HSaxpy(self, name="saxpy2"), HSink(self, name="sink")
            self.add_flow(gen, s1, {("out", "in")})
            self.add_flow(s1, s2, {("out", "in")})
            self.add_flow(s2, sink, {("out", "in")})

    def pipeline():
        Clock.first = Clock.last = None
        spans.clear()
        Pipeline().run()
        cp.cuda.Device().synchronize()
        wall = time.perf_counter() - Clock.first
        busy = sum(cp.cuda.get_elapsed_time(b, e) for b, e in spans) / 1000
        return {"row": "Holoscan 4-operator pipeline, 1 MiB device tensors (CuPy saxpy operators)",
                "messages_per_s": pipeline_count / wall, "gpu_busy_fraction": busy / wall}

    return dict(runs, pipeline=pipeline)


ROW_MARK = "graph_messages row: "


def holoscan_child(count, pipeline_count, gpu):
    """The child's side of HoloscanRuns: says which rows it can run, then
    runs one per line read ("ping" or "pipeline"), each answered on a line
    of its own (Holoscan's own output may share stdout)."""
    runs = holoscan_runs(count, pipeline_count, gpu)
    print(ROW_MARK + json.dumps({k: None if callable(v) else v for k, v in runs.items()}), flush=True)
    for line in sys.stdin:
        print(ROW_MARK + json.dumps(runs[line.strip()]()), flush=True)


class HoloscanRuns:
    """Holoscan's runs in a process of their own, one per call, taking turns
    with ours: in this process, a Holoscan run slowed the ping rows after it
    by 40 % on the H200 (225k against 135k msgs/s, recovering over seconds),
    with none of its threads busy. ``self.ping``/``self.pipeline``: a
    function returning one run's row, or the row saying why it is skipped."""

    def __init__(self, count, pipeline_count, gpu):
        code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
                f"import graph_messages as gm; gm.holoscan_child({count}, {pipeline_count}, {gpu})")
        root = str(Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        kinds = self._answer() or {"ping": {"row": "Holoscan", "failed": "its process ended"}}
        kinds.setdefault("pipeline", kinds["ping"])
        for kind, skipped in kinds.items():
            setattr(self, kind, skipped if skipped is not None else (lambda kind=kind: self._run(kind)))

    def _answer(self):
        for line in self.proc.stdout:
            if line.startswith(ROW_MARK):
                return json.loads(line[len(ROW_MARK):])
        return None

    def _run(self, kind):
        try:
            self.proc.stdin.write(kind + "\n")
            self.proc.stdin.flush()
        except OSError:  # the child ended (a crash in Holoscan): the row says so, ours go on
            return {"row": f"Holoscan {kind}", "failed": f"its process ended (exit {self.proc.poll()})"}
        return self._answer() or {"row": f"Holoscan {kind}", "failed": f"its process ended (exit {self.proc.poll()})"}

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(timeout=60)


def take_turns(rounds, *runs):
    """``rounds`` rounds of ``runs`` (functions returning a row) in turn,
    then each one's median row: the host's speed swings by up to 2x over
    seconds on the GPU machine, so rows compared in a ratio are measured
    side by side, not one set after the other. A row instead of a function
    (a skipped one) is passed through."""
    calls = [r for r in runs if callable(r)]
    results = {id(r): [] for r in calls}
    for _ in range(rounds):
        for run in calls:
            results[id(run)].append(run())
    return [median_row(results[id(r)]) if callable(r) else r for r in runs]


# -- the run


RUNS = 9  # of each row compared in a ratio, ours and Holoscan's in turn


def median_row(rows):
    """The run of median rate, with every run's rate beside it; a run that
    failed is the row (a failure is not averaged away)."""
    failed = next((r for r in rows if "messages_per_s" not in r), None)
    if failed is not None:
        return failed
    ranked = sorted(rows, key=lambda r: r["messages_per_s"])
    return dict(ranked[len(ranked) // 2], runs=[round(r["messages_per_s"]) for r in rows])


def ratio(rows, mine, theirs, target):
    a = next((r for r in rows if r["row"] == mine and "messages_per_s" in r), None)
    b = next((r for r in rows if r["row"].startswith(theirs) and "messages_per_s" in r), None)
    if a is None or b is None:
        return {"row": f"ratio: {mine} / {theirs}", "skipped": "a row is missing"}
    value = a["messages_per_s"] / b["messages_per_s"]
    return {"row": f"ratio: {mine} / {theirs}", "ratio": value, "target": target,
            "met": None if target is None else value >= target}


def local_rows(args):
    """The rows in one process (each printed as it is measured), with their ratios."""
    gpu = cubind.Device.count() > 0
    holoscan = HoloscanRuns(args.messages, args.pipeline_messages, gpu)
    rows = take_turns(RUNS, lambda: ping(args.messages, 1), lambda: ping(args.messages, 4), holoscan.ping)
    # The engine alone at the pipeline's lengths: 3 ticks a message GPU-resident, 4 ticked.
    rows += [median_row([empty_chain(args.messages, length) for _ in range(RUNS)]) for length in (3, 4)]
    if not gpu:
        rows.append({"row": "cubind.graph pipelines", "skipped": "no GPU"})
        rows.append(holoscan.pipeline)
    else:
        saxpy = cubind.Program(SAXPY).compile().get_kernel("saxpy")
        Stage.launch = staticmethod(lambda x: saxpy(GRID, 256, 2.0, x, x, N))
        label = "4-codelet pipeline, 1 MiB device tensors"
        pipeline(200, 1, label)  # warm-up: compile caches, the memory pool
        count = args.pipeline_messages
        rows += take_turns(RUNS, lambda: pipeline(count, 1, label), lambda: pipeline(count, 4, label),
                           lambda: pipeline(count, 1, label, resident=True),
                           lambda: pipeline(count, 1, label, resident="from the generator"), holoscan.pipeline)
        spin = cubind.Program(SPIN).compile().get_kernel("spin")
        iters, kernel_us = calibrate_spin(spin)
        Stage.launch = staticmethod(lambda x: spin(GRID, 256, x, N, iters))
        label = f"4-codelet pipeline, {kernel_us:.0f} us kernels"
        rows.append(pipeline(args.pipeline_messages, 1, label, kernel_us=kernel_us))
        in_graph_us = kernel_us_in_a_graph(spin, iters)
        for resident in (True, "from the generator"):
            rows.append(pipeline(args.pipeline_messages, 1, label, resident=resident, kernel_us=in_graph_us))
            rows[-1]["kernel_us_in_a_graph"] = in_graph_us
    holoscan.close()
    rows.append(ratio(rows, "cubind.graph ping pair (1 thread(s))", "Holoscan ping pair", 4.0))
    pipe = "cubind.graph 4-codelet pipeline, 1 MiB device tensors"
    rows.append(ratio(rows, f"{pipe} (1 thread(s))", "Holoscan 4-operator pipeline", 2.5))
    rows.append(ratio(rows, f"{pipe}, GPU-resident (1 thread(s))", "Holoscan 4-operator pipeline", 4.0))
    rows.append(ratio(rows, f"{pipe}, GPU-resident from the generator (1 thread(s))", "Holoscan 4-operator pipeline",
                      None))  # no target of its own: the chain above is the GPU-resident row
    rows.append(ratio(rows, f"{pipe} (4 thread(s))", f"{pipe} (1 thread(s))", 1.0))  # 4 workers not slower
    for mode in ("GPU-resident", "GPU-resident from the generator"):
        spin_row = next((r for r in rows if r["row"].endswith(f"us kernels, {mode} (1 thread(s))")), None)
        if spin_row is not None:
            busy = spin_row["gpu_busy_fraction_calibrated"]
            rows.append({"row": f"target: GPU busy on the pipeline of >= 50 us kernels, {mode}",
                         "busy": busy, "busy_target": 0.9, "met": busy >= 0.9})
    for row in rows:
        print(json.dumps(row))
    return rows


def _verdict(r):
    if "ratio" in r:
        if r["target"] is None:
            return f"{r['ratio']:.2f}x"
        return f"{r['ratio']:.2f}x (>= {r['target']}x: {'met' if r['met'] else 'NOT met'})"
    if "busy_target" in r:
        return f"{r['busy']:.0%} (>= {r['busy_target']:.0%}: {'met' if r['met'] else 'NOT met'})"
    return ""


def _bandwidth_cell(row):
    if "bytes_per_s" not in row:
        return ""
    cell = f"{row['bytes_per_s'] / 1e9:.2f} GB/s"
    if "fraction_of_device_copy" in row:
        cell += f" ({row['fraction_of_device_copy']:.3f}x of {row['device_copy_bytes_per_s'] / 1e9:.0f} GB/s)"
    return cell


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--pipeline-messages", type=int, default=2000)
    parser.add_argument("--remote-messages", type=int, default=5000, help="messages of the rows across processes")
    parser.add_argument("--remote-only", action="store_true", help="only the rows across processes (UCX)")
    parser.add_argument("--local-only", action="store_true", help="only the rows in one process (issue 46's)")
    parser.add_argument("--ucx-floor", metavar="BINARY",
                        help="bench/ucx_floor.c built (see its header): UCX's own rows in C beside ours")
    parser.add_argument("--in-flight", type=int, default=4, metavar="N",
                        help="messages in flight across processes: both UCX queues' capacity (on the wire: the "
                             "receiving queue's; as many more may wait at the transmitter) and the floor's sends "
                             "(4, the issue's)")
    parser.add_argument("--remote-rounds", type=int, default=1, metavar="N",
                        help="the device rows across processes and UCX's floor beside them, N times in turn: "
                             "each row the median, every run's rate beside it")
    args = parser.parse_args()
    if args.remote_rounds < 1:
        parser.error("--remote-rounds: at least 1")
    if args.remote_only and args.local_only:
        parser.error("--remote-only and --local-only: choose one")
    rows = [] if args.remote_only else local_rows(args)
    if args.local_only:
        _table(rows)
        return
    if args.in_flight < 1:
        parser.error("--in-flight: at least 1")
    remote = [*remote_rows(args.remote_messages, args.pipeline_messages, args.ucx_floor, args.in_flight,
                           args.remote_rounds),
              child_row("holoscan_distributed_ping", args.remote_messages)]
    remote.append(ratio(remote, "cubind.graph ping pair, two processes over UCX", "Holoscan two-fragment ping", 10.0))
    # Issue 47: messages between two processes against UCX's own floor from C, same size, same run (the
    # targets are the device rows'; the host rows and 256 MiB are read against the floor without one).
    for size, target in ((1 << 20, 0.25), (16 << 20, 0.5), (256 << 20, None)):
        remote.append(ratio(remote, device_row_name(size), floor_row_name(size, "device"), target))
        remote.append(ratio(remote, host_row_name(size), floor_row_name(size, "host"), None))
    for row in remote:
        print(json.dumps(row))
    _table(rows + remote)


def _table(rows):
    print("\n| row | messages/s | GPU busy | ratio (target) | bytes/s (of the device copy's) |\n|---|---|---|---|---|")
    for r in rows:
        busy = r.get("gpu_busy_fraction", r.get("gpu_busy_fraction_calibrated"))
        cells = [f"{r['messages_per_s']:.0f}" if "messages_per_s" in r else r.get("skipped", r.get("failed", "")),
                 f"{busy:.0%}" if busy is not None else "",
                 _verdict(r),
                 _bandwidth_cell(r)]
        print(f"| {r['row']} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
