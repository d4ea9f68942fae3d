#!/usr/bin/env python3
"""Two sequences in flight at once on cubind.compute, awaited under asyncio.

Two sequences on two streams of one manager each run 200 dependent kernels
(one CUDA graph each) on their own tensor; both are launched with
``eval_async()`` and awaited together with ``asyncio.gather`` while a third
coroutine keeps ticking: the event loop is never blocked. Then the push
constants change (the graphs' kernel nodes are updated in place, no
re-recording) and both run again. Results are checked against numpy.
Without a GPU it says so and exits 0.

    python examples/compute_async.py
"""

import asyncio

import numpy as np
from _driver_common import exit_with, open_gpu

from cubind import compute as kp

AXPB = r"""
extern "C" __global__ void axpb(float *x, float a, float b)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = a * x[i] + b;
}
"""
N, KERNELS = 1 << 16, 200


def build(mgr, queue_index, start, a, b):
    x = mgr.tensor(np.full(N, start, np.float32))
    algo = mgr.algorithm([x], AXPB, push_consts=[a, b])
    seq = mgr.sequence(queue_index).record(kp.OpTensorSyncDevice([x]))
    for _ in range(KERNELS):
        seq.record(kp.OpAlgoDispatch(algo))
    return x, algo, seq.record(kp.OpTensorSyncLocal([x]))


def expected(start, a, b):
    x = np.full(N, start, np.float32)
    for _ in range(KERNELS):
        x = np.float32(a) * x + np.float32(b)
    return x


async def both(first, second):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while first.is_running() or second.is_running():
            ticks += 1
            await asyncio.sleep(0)

    await asyncio.gather(ticker(), first.eval_async(), second.eval_async())
    return ticks


def main():
    open_gpu()
    with kp.Manager(streams=2) as mgr:
        x, algo_x, seq_x = build(mgr, 0, 1.0, 1.0, 0.5)
        y, algo_y, seq_y = build(mgr, 1, 0.0, 0.5, 1.0)
        ticks = asyncio.run(both(seq_x, seq_y))
        good = np.allclose(x.data(), expected(1.0, 1.0, 0.5)) and np.allclose(y.data(), expected(0.0, 0.5, 1.0))

        algo_x.set_push_constants([0.5, 0.25])
        algo_y.set_push_constants([1.0, -0.5])
        for t in (x, y):
            t.data()[:] = 2.0
        asyncio.run(both(seq_x, seq_y))
        good = good and np.allclose(x.data(), expected(2.0, 0.5, 0.25)) and np.allclose(y.data(),
                                                                                       expected(2.0, 1.0, -0.5))
        instantiations = seq_x.graph_instantiations + seq_y.graph_instantiations
        print(f"two sequences of {KERNELS} kernels in flight at once, awaited under asyncio ({ticks} loop ticks "
              f"meanwhile), then new push constants ({instantiations} instantiations in all): "
              f"{'match numpy' if good else 'WRONG'}")
    return good


if __name__ == "__main__":
    exit_with(main)
