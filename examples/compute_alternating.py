#!/usr/bin/env python3
"""Several sequences evaluated alternately in a loop (seed 001's "operation
capabilities" example) on cubind.compute.

Three sequences share three tensors: one multiplies, one adds, one copies
the results back. Each is recorded once (one CUDA graph each) and evaluated
ten times in turn; the result is checked against the same loop in numpy.
Without a GPU it says so and exits 0.

    python examples/compute_alternating.py
"""

import numpy as np
from _driver_common import exit_with, open_gpu

from cubind import compute as kp

KERNELS = r"""
extern "C" __global__ void mult(const float *x, const float *y, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = x[i] * y[i];
}
extern "C" __global__ void sum(const float *x, const float *y, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = x[i] + y[i];
}
"""
ROUNDS = 10


def main():
    open_gpu()
    with kp.Manager() as mgr:
        t1, t2, t3 = mgr.tensor([2, 2, 2]), mgr.tensor([1, 2, 3]), mgr.tensor([1, 2, 3])
        mgr.sequence().eval(kp.OpTensorSyncDevice([t1, t2, t3]))

        sq_mult = mgr.sequence().record(kp.OpAlgoDispatch(mgr.algorithm([t1, t2, t3], KERNELS, entry="mult")))
        sq_sum = mgr.sequence().record(kp.OpAlgoDispatch(mgr.algorithm([t3, t2, t1], KERNELS, entry="sum")))
        sq_sync = mgr.sequence().record(kp.OpTensorSyncLocal([t1, t3]))

        for _ in range(ROUNDS):
            sq_mult.eval()
            sq_sum.eval()
        sq_sync.eval()

        x1, x2, x3 = (np.array(v, np.float32) for v in ([2, 2, 2], [1, 2, 3], [1, 2, 3]))
        for _ in range(ROUNDS):
            x3 = x1 * x2
            x1 = x3 + x2
        good = np.allclose(t1.data(), x1) and np.allclose(t3.data(), x3)
        print(f"{ROUNDS} rounds of two sequences in turn: t1 = {t1.data().tolist()}, t3 = {t3.data().tolist()}: "
              f"{'match numpy' if good else 'WRONG'}")
    return good


if __name__ == "__main__":
    exit_with(main)
