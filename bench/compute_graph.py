#!/usr/bin/env python3
"""Record once, evaluate many: cubind.compute's sequences against eager
launches, PyTorch's CUDA graph replay and a C loop of cuGraphLaunch.

    python bench/compute_graph.py [--kernels 100] [--iterations 200] [--rounds 7]

The workload is ``--kernels`` dependent launches of a tiny kernel
(``x = a * x + b`` on 1024 floats, 4 blocks of 256 threads), each iteration
one whole chain followed by a stream synchronisation (what ``seq.eval()``
does). Rows whose library is missing are skipped with a line on stderr; the
C row compiles bench/compute_graph_c.c with the system compiler against the
toolkit's libcuda stub (CUDA_HOME, CUDA_PATH, nvcc's toolkit or
/usr/local/cuda). Prints a markdown table of medians over ``--rounds``.
bench/README.md describes the rows and the targets.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolkit  # noqa: E402  (the toolkit the C loop builds against)

AXPB = r"""
extern "C" __global__ void axpb(float *x, float a, float b)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = a * x[i] + b;
}
"""
N, GRID, BLOCK = 1024, 4, 256


def timed(fn, iterations, rounds):
    """The median over ``rounds`` of the nanoseconds per call of ``fn``."""
    fn()  # warm-up: first-use costs (instantiation, module load) are not the row's
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter_ns() - start) / iterations)
    return statistics.median(samples)


# -- rows ----------------------------------------------------------------------------------


def compute_rows(args):
    from cubind import compute as kp

    rows = {}
    with kp.Manager() as mgr:
        x = mgr.tensor(np.zeros(N, np.float32))
        algo = mgr.algorithm([x], AXPB, workgroup=GRID, block=BLOCK, push_consts=[1.0, 0.0])
        seq = mgr.sequence()
        dispatches = [kp.OpAlgoDispatch(algo) for _ in range(args.kernels)]
        for op in dispatches:
            seq.record(op)
        rows["cubind.compute: seq.eval()"] = timed(seq.eval, args.iterations, args.rounds)

        first, flip = dispatches[0], [0.0]

        def update_and_eval():
            flip[0] = 1.0 - flip[0]
            first.set_push_constants([1.0, flip[0]])
            seq.eval()

        rows["cubind.compute: one dispatch's push constants changed + seq.eval()"] = timed(
            update_and_eval, args.iterations, args.rounds)
        rows["(instantiations of that sequence)"] = seq.graph_instantiations

        small = mgr.tensor(np.zeros(1024, np.float32))  # 4 KiB
        up, down = mgr.sequence().record(kp.OpTensorSyncDevice([small])), mgr.sequence().record(
            kp.OpTensorSyncLocal([small]))
        rows["cubind.compute: OpTensorSyncDevice 4 KiB, seq.eval()"] = timed(up.eval, args.iterations * 10,
                                                                             args.rounds)
        rows["cubind.compute: OpTensorSyncLocal 4 KiB, seq.eval()"] = timed(down.eval, args.iterations * 10,
                                                                            args.rounds)
    return rows


def eager_cubind_row(args):
    import cubind

    kernel = cubind.Program(AXPB).compile().get_kernel("axpb")
    x, stream = cubind.zeros(N, np.float32), cubind.Stream(non_blocking=True)

    def chain():
        for _ in range(args.kernels):
            kernel(GRID, BLOCK, x, 1.0, 0.0, stream=stream)
        stream.synchronize()

    return {"cubind eager: kernel(...) x kernels": timed(chain, args.iterations, args.rounds)}


def cupy_row(args):
    import cupy

    kernel = cupy.RawKernel(AXPB, "axpb")
    x, stream = cupy.zeros(N, cupy.float32), cupy.cuda.Stream(non_blocking=True)
    a, b = np.float32(1.0), np.float32(0.0)

    def chain():
        with stream:
            for _ in range(args.kernels):
                kernel((GRID,), (BLOCK,), (x, a, b))
        stream.synchronize()

    return {"CuPy eager: RawKernel x kernels": timed(chain, args.iterations, args.rounds)}


def torch_row(args):
    import torch

    if not torch.cuda.is_available():
        raise ImportError("torch has no CUDA device")
    x = torch.zeros(N, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # warm-up on a side stream, as PyTorch asks before a capture
        for _ in range(3):
            x.mul_(1.0)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(args.kernels):
            x.mul_(1.0)  # one elementwise kernel each: PyTorch's own, the nearest to axpb

    def replay():
        graph.replay()
        torch.cuda.current_stream().synchronize()

    return {"PyTorch: CUDAGraph.replay()": timed(replay, args.iterations, args.rounds)}


def c_rows(args):
    cuda = toolkit.cuda_root()
    if cuda is None:
        raise ImportError("no CUDA toolkit (set CUDA_HOME) to build the C loop")
    import cubind

    work = tempfile.mkdtemp(prefix="compute_graph_")
    exe, ptx = os.path.join(work, "compute_graph_c"), os.path.join(work, "axpb.ptx")
    with open(ptx, "wb") as f:
        f.write(cubind.Program(AXPB).compile().code)
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(os.path.dirname(__file__), "compute_graph_c.c"),
                    f"-I{cuda}/include", f"-L{cuda}/lib64/stubs", "-lcuda"], check=True)

    def run(mode, iterations):
        samples = [[float(v) for v in subprocess.run([exe, ptx, str(args.kernels), str(iterations), mode],
                                                     check=True, capture_output=True, text=True).stdout.split()]
                   for _ in range(args.rounds)]
        return [statistics.median(column) for column in zip(*samples)]

    (launch,), (update,) = run("launch", args.iterations), run("update", args.iterations)
    up, down = run("copy", args.iterations * 10)
    return {"C: cuGraphLaunch loop": launch, "C: cuGraphExecKernelNodeSetParams + cuGraphLaunch loop": update,
            "C: cuMemcpyHtoDAsync 4 KiB + sync": up, "C: cuMemcpyDtoHAsync 4 KiB + sync": down}




ROWS = [("cubind.compute", compute_rows), ("cubind eager", eager_cubind_row), ("CuPy", cupy_row),
        ("PyTorch", torch_row), ("C", c_rows)]


def table(rows, kernels):
    lines = ["| row | µs per evaluation | µs per kernel |", "|---|---:|---:|"]
    for name, ns in rows.items():
        if name.startswith("("):
            lines.append(f"| {name} | {ns} | |")
        elif "4 KiB" in name:
            lines.append(f"| {name} | {ns / 1000:.2f} | |")
        else:
            lines.append(f"| {name} | {ns / 1000:.2f} | {ns / 1000 / kernels:.3f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    import cubind

    try:
        devices = cubind.Device.count()
    except OSError as exc:  # the loader's error: no driver library
        devices, why = 0, str(exc).splitlines()[0]
    else:
        why = "cubind.Device.count() is 0"
    if devices == 0:
        print(f"bench: no GPU ({why}): this bench runs on the GPU machine", file=sys.stderr)
        return 1
    rows = {}
    for label, make in ROWS:
        try:
            rows.update(make(args))
        except ImportError as exc:
            print(f"bench: no {label} row: {exc}", file=sys.stderr)
    print(table(rows, args.kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
