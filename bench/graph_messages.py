#!/usr/bin/env python3
"""cubind.graph's message rate, beside NVIDIA Holoscan's on the same apps.

Rows: a ping pair (empty messages, host only) and a 4-codelet pipeline
(generator -> saxpy -> saxpy -> sink) carrying 1 MiB float32 device tensors,
each codelet on its own pool stream, with the GPU's busy fraction (kernel
time from event pairs over the wall time). Holoscan's rows (``holoscan-cu13``,
Python operators, default scheduler, CuPy tensors) run where it is
installed, else say so. Prints one JSON object per row.

Across processes (UCX, RAPIDS' ucxx): the ping pair with both ends in one
process over UCX and split in two processes, and 1 MiB device tensors sent
from one process to another (bytes/s beside the GPU's device-to-device copy
bandwidth), where ucxx is installed; Holoscan's two-fragment ping beside them.
The rates across processes are the receiver's, from its first message to its
last (the connection's setup is not counted).

    python bench/graph_messages.py [--messages 20000] [--pipeline-messages 2000] [--remote-messages 5000]
"""

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import cubind
from cubind import graph as gx

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + out[i];
}"""
N = (1 << 20) // 4  # 1 MiB of float32


class Tx(gx.Codelet):
    def tick(self):
        self.transmitters[0].publish(gx.Message())


class Rx(gx.Codelet):
    def tick(self):
        self.receivers[0].receive()


class Generate(gx.Codelet):
    def tick(self):
        m = gx.Message()
        m.add_tensor("x", self.allocator.allocate((N,), np.float32))
        self.transmitters[0].publish(m)


class Stage(gx.Codelet):
    kernel = None
    spans: list = []

    def tick(self):
        x = self.receivers[0].receive().tensor("x").data
        if Stage.kernel is None:
            Stage.kernel = cubind.Program(SAXPY).compile().get_kernel("saxpy")
        begin, end = cubind.Event(), cubind.Event()
        begin.record(self.stream)
        Stage.kernel((N + 255) // 256, 256, 2.0, x, x, N)
        end.record(self.stream)
        self.spans.append((begin, end))
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


def ping(count, threads):
    g = gx.Graph()
    chain(g, ["tx", "rx"], count, [Tx, Rx])
    start = time.perf_counter()
    g.run(gx.MultiThreadScheduler(worker_thread_number=threads) if threads > 1 else gx.GreedyScheduler())
    rate = count / (time.perf_counter() - start)
    return {"row": f"cubind.graph ping pair ({threads} thread(s))", "messages_per_s": rate}


def pipeline(count, threads):
    g = gx.Graph()
    chain(g, ["gen", "saxpy1", "saxpy2", "sink"], count, [Generate, Stage, Stage, Rx], device=True)
    Stage.spans = []
    start = time.perf_counter()
    g.run(gx.MultiThreadScheduler(worker_thread_number=threads) if threads > 1 else gx.GreedyScheduler())
    cubind.Device(0).synchronize()
    wall = time.perf_counter() - start
    busy = sum(end - begin for begin, end in Stage.spans) / 1000
    return {"row": f"cubind.graph 4-codelet pipeline, 1 MiB device tensors ({threads} thread(s))",
            "messages_per_s": count / wall, "gpu_busy_fraction": busy / wall}


# One part of a two-process row: "rx" prints its rate as JSON, "tx" sends
# ``count`` messages (empty, or one tensor of ``size`` bytes: device memory).
PART = r"""
import json, sys, time
import numpy as np
from cubind import graph as gx
role, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

class Tx(gx.Codelet):
    def start(self):
        self.payload = None
        if size:
            import cubind
            self.payload = cubind.to_gpu(np.ones(size // 4, np.float32))
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
g.entity("ucx").add(gx.UcxContext(cpu_data_only=not size), "context")
e = g.entity(role)
if role == "tx":
    e.add(gx.UcxTransmitter(receiver_address="127.0.0.1", port=port, capacity=4), "out")
    e.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    e.add(gx.CountSchedulingTerm(count=count))
    e.add(Tx(), "tx")
    g.run()
else:
    e.add(gx.UcxReceiver(port=port, capacity=4), "in")
    e.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    rx = e.add(Rx(), "rx")
    result = g.run()
    span = rx.times[-1] - rx.times[0]
    print(json.dumps({"messages": len(rx.times), "messages_per_s": (len(rx.times) - 1) / span,
                      "received": result.messages["rx/in"]["received"]}))
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


def two_processes(count, size):
    """The receiver's rate, ``count`` messages (of ``size`` device bytes) from another process."""
    port = _free_port()
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
               UCX_WARN_UNUSED_ENV_VARS="n")
    args = [str(port), str(count), str(size)]
    rx = subprocess.Popen([sys.executable, "-c", PART, "rx", *args], stdout=subprocess.PIPE, text=True, env=env)
    tx = subprocess.Popen([sys.executable, "-c", PART, "tx", *args], env=env)
    out, _ = rx.communicate(timeout=600)
    tx.wait(60)
    if rx.returncode or tx.returncode:
        raise RuntimeError(f"a part failed: rx {rx.returncode}, tx {tx.returncode}")
    return json.loads(out.splitlines()[-1])


def ping_over_ucx_in_one_process(count):
    port = _free_port()
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
    """Bytes/s of a device-to-device copy of ``size`` bytes (cubind's copy, timed by events)."""
    a, b = cubind.empty((size // 4,), np.float32), cubind.empty((size // 4,), np.float32)
    stream = cubind.Device().default_stream
    b.copy_from(a, stream=stream)
    begin, end = cubind.Event(), cubind.Event()
    begin.record(stream)
    for _ in range(repeats):
        b.copy_from(a, stream=stream)
    end.record(stream)
    end.synchronize()
    return size * repeats / ((end - begin) / 1000)


def remote_rows(count, pipeline_count):
    if importlib.util.find_spec("ucxx") is None:
        return [{"row": "across processes (UCX)", "skipped": "ucxx not installed (pip install 'cubind[ucx]')"}]
    rows = [ping_over_ucx_in_one_process(count)]
    r = two_processes(count, 0)
    rows.append({"row": "cubind.graph ping pair, two processes over UCX", "messages_per_s": r["messages_per_s"],
                 "received": r["received"]})
    if cubind.Device.count() == 0:
        rows.append({"row": "1 MiB device tensors, two processes over UCX", "skipped": "no GPU"})
        return rows
    size = 1 << 20
    r = two_processes(pipeline_count, size)
    copy = device_copy_bandwidth(size)
    rows.append({"row": "1 MiB device tensors, two processes over UCX (CUDA IPC)",
                 "messages_per_s": r["messages_per_s"], "bytes_per_s": r["messages_per_s"] * size,
                 "device_copy_bytes_per_s": copy,
                 "fraction_of_device_copy": r["messages_per_s"] * size / copy, "received": r["received"]})
    return rows


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

        def compute(self, op_input, op_output, context):
            op_input.receive("in")

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

    start = time.perf_counter()
    DistributedPing().run()
    return {"row": "Holoscan two-fragment ping (UCX, one host)",
            "messages_per_s": count / (time.perf_counter() - start), "note": "includes the fragments' connection"}


def holoscan_rows(count, pipeline_count):
    try:
        from holoscan.conditions import CountCondition
        from holoscan.core import Application, Operator, OperatorSpec
    except ImportError as exc:
        return [{"row": "Holoscan", "skipped": f"holoscan not installed ({exc})"}]

    class HTx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.output("out")

        def compute(self, op_input, op_output, context):
            op_output.emit(1, "out")

    class HRx(Operator):
        def setup(self, spec: OperatorSpec):
            spec.input("in")

        def compute(self, op_input, op_output, context):
            op_input.receive("in")

    class Ping(Application):
        def compose(self):
            tx = HTx(self, CountCondition(self, count), name="tx")
            self.add_flow(tx, HRx(self, name="rx"), {("out", "in")})

    start = time.perf_counter()
    Ping().run()
    rows = [{"row": "Holoscan ping pair (Python operators)", "messages_per_s": count / (time.perf_counter() - start)}]
    rows.append({"row": "Holoscan 4-operator pipeline", "skipped": "not yet written (CuPy saxpy operators)"})
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--pipeline-messages", type=int, default=2000)
    parser.add_argument("--remote-messages", type=int, default=5000, help="messages of the rows across processes")
    args = parser.parse_args()
    for threads in (1, 4):
        print(json.dumps(ping(args.messages, threads)))
    if cubind.Device.count() == 0:
        print(json.dumps({"row": "pipeline", "skipped": "no GPU"}))
    else:
        for threads in (1, 4):
            print(json.dumps(pipeline(args.pipeline_messages, threads)))
    for row in holoscan_rows(args.messages, args.pipeline_messages):
        print(json.dumps(row))
    for row in remote_rows(args.remote_messages, args.pipeline_messages):
        print(json.dumps(row))
    print(json.dumps(holoscan_distributed_ping(args.remote_messages)))


if __name__ == "__main__":
    main()
