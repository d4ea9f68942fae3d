"""Reproducer (GPU): a process that instantiates CUDA graphs while other
Python threads exist dies with SIGSEGV inside cuGraphInstantiate, at times.

    python scripts/repro/graph_instantiate_threads.py --layer pythonic --threads 3
    python scripts/repro/graph_instantiate_threads.py --layer raw --threads 3      # cubind's 1:1 module
    python scripts/repro/graph_instantiate_threads.py --layer nvidia --threads 3   # NVIDIA's cuda.bindings

Each round makes a graph holding a child graph (a memset over 256 KiB),
instantiates, launches and destroys it; the other threads only sleep (they
never call CUDA). Exit 0 and "ok" when every round ran; a crash is exit 139.

Seen on an H100 (driver 580.159.04, Python 3.12.3), 2026-11-26, and
explained the same day: the generated loader asked cuGetProcAddress for
"cuGraphInstantiate", which is the driver's 11.0 ABI (error node, log buffer,
its size); the binding called it with (exec, graph, flags), so the log buffer
and its size were whatever the registers held. Fixed in the generator
(name_proc_symbols: asked as cuGraphInstantiateWithFlags). Before the fix,
alternating builds on one H100: 5 of 12 runs crashed; after it, 0 of 6.
tests/bindings/test_driver_execution.py runs this script on the GPU.
"""

import argparse
import threading
import time


def driver(layer):
    if layer == "nvidia":
        from cuda.bindings import driver as cu
    else:
        import cuda as cu
    return cu


def ok(result):
    if int(result[0]) != 0:
        raise RuntimeError(f"a driver call failed: {result[0]!r}")
    return result[1] if len(result) == 2 else result[1:]


def raw_rounds(cu, rounds, nbytes):
    ok((cu.cuInit(0)[0], None))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
    ok((cu.cuCtxSetCurrent(ctx)[0], None))
    stream = ok(cu.cuStreamCreate(1))
    memory = ok(cu.cuMemAllocAsync(nbytes, stream))
    inner = ok(cu.cuGraphCreate(0))
    p = cu.CUDA_MEMSET_NODE_PARAMS()
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = memory, 0, 1, nbytes, 1, 0
    ok(cu.cuGraphAddMemsetNode(inner, None, 0, p, ctx))
    for _ in range(rounds):
        graph = ok(cu.cuGraphCreate(0))
        ok(cu.cuGraphAddChildGraphNode(graph, None, 0, inner))
        exe = ok(cu.cuGraphInstantiate(graph, 0))
        ok((cu.cuGraphLaunch(exe, stream)[0], None))
        cu.cuGraphExecDestroy(exe)
        cu.cuGraphDestroy(graph)
    ok((cu.cuStreamSynchronize(stream)[0], None))
    # Everything released, so that compute-sanitizer's leak check (the GPU test runs this under it) finds nothing.
    ok((cu.cuGraphDestroy(inner)[0], None))
    ok((cu.cuMemFreeAsync(memory, stream)[0], None))
    ok((cu.cuStreamSynchronize(stream)[0], None))
    ok((cu.cuStreamDestroy(stream)[0], None))
    ok((cu.cuDevicePrimaryCtxRelease(ok(cu.cuDeviceGet(0)))[0], None))


def pythonic_rounds(rounds, nbytes):
    import numpy as np

    import cubind

    stream = cubind.Stream(non_blocking=True)
    memory = cubind.empty(nbytes, np.uint8, stream=stream)
    inner = cubind.CUDAGraph()
    inner.add_memset(memory, 0, nbytes)
    for _ in range(rounds):
        graph = cubind.CUDAGraph()
        graph.add_graph(inner)
        graph.instantiate()
        graph.launch(stream)
        graph.close()
    stream.synchronize()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layer", choices=["pythonic", "raw", "nvidia"], default="pythonic")
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    stop = threading.Event()
    sleepers = [threading.Thread(target=lambda: [time.sleep(0.001) for _ in iter(stop.is_set, True)])
                for _ in range(args.threads)]
    for t in sleepers:
        t.start()
    try:
        if args.layer == "pythonic":
            pythonic_rounds(args.rounds, 1 << 18)
        else:
            raw_rounds(driver(args.layer), args.rounds, 1 << 18)
    finally:
        stop.set()
        for t in sleepers:
            t.join()
    print("ok", args.layer, args.threads, args.rounds)


if __name__ == "__main__":
    main()
