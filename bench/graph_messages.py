#!/usr/bin/env python3
"""cubind.graph's message rate, beside NVIDIA Holoscan's on the same apps.

Rows: a ping pair (empty messages, host only) and a 4-codelet pipeline
(generator -> saxpy -> saxpy -> sink) carrying 1 MiB float32 device tensors,
each codelet on its own pool stream, with the GPU's busy fraction (kernel
time from event pairs over the wall time). Holoscan's rows (``holoscan-cu13``,
Python operators, default scheduler, CuPy tensors) run where it is
installed, else say so. Prints one JSON object per row.

    python bench/graph_messages.py [--messages 20000] [--pipeline-messages 2000]
"""

import argparse
import json
import time

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


if __name__ == "__main__":
    main()
