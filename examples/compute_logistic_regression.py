#!/usr/bin/env python3
"""Seed 001's logistic-regression training loop on cubind.compute, its
shader written as a CUDA C++ kernel.

One sequence (sync the weights to the device, compute every sample's
gradient and loss, sync them back) is recorded once and evaluated for each
of 100 iterations; the host updates the weights between evaluations. The
weights are checked against the same loop in numpy and against the seed's
own assertions. Without a GPU it says so and exits 0.

    python examples/compute_logistic_regression.py
"""

import numpy as np
from _driver_common import exit_with, open_gpu

from cubind import compute as kp

LOGISTIC = r"""
extern "C" __global__ void logistic(const float *x_i, const float *x_j, const float *y, const float *w_in,
                                    float *w_out_i, float *w_out_j, const float *b_in, float *b_out,
                                    float *l_out, const float *M)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = M[0];
    float z = w_in[0] * x_i[i] + w_in[1] * x_j[i] + b_in[0];
    float y_hat = 1.0f / (1.0f + expf(-z));
    float d_z = y_hat - y[i];
    w_out_i[i] = (1.0f / m) * x_i[i] * d_z;
    w_out_j[i] = (1.0f / m) * x_j[i] * d_z;
    b_out[i] = (1.0f / m) * d_z;
    l_out[i] = -((y[i] * logf(y_hat)) + ((1.0f - y[i]) * logf(1.0f - y_hat)));
}
"""
ITERATIONS = 100
LEARNING_RATE = 0.1
X_I, X_J, Y = [0.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0, 1.0]


def train(mgr):
    """The seed's loop on ``mgr``; True when the weights match numpy's."""
    tensor_x_i, tensor_x_j, tensor_y = mgr.tensor(X_I), mgr.tensor(X_J), mgr.tensor(Y)
    tensor_w_in = mgr.tensor([0.001, 0.001])
    tensor_w_out_i, tensor_w_out_j = mgr.tensor([0.0] * 5), mgr.tensor([0.0] * 5)
    tensor_b_in, tensor_b_out = mgr.tensor([0.0]), mgr.tensor([0.0] * 5)
    tensor_l_out, tensor_m = mgr.tensor([0.0] * 5), mgr.tensor([5.0])
    params = [tensor_x_i, tensor_x_j, tensor_y, tensor_w_in, tensor_w_out_i,
              tensor_w_out_j, tensor_b_in, tensor_b_out, tensor_l_out, tensor_m]

    mgr.sequence().eval(kp.OpTensorSyncDevice(params))
    algo = mgr.algorithm(params, LOGISTIC)   # workgroup: 5 threads, one per sample
    sq = (mgr.sequence()
          .record(kp.OpTensorSyncDevice([tensor_w_in, tensor_b_in]))
          .record(kp.OpAlgoDispatch(algo))
          .record(kp.OpTensorSyncLocal([tensor_w_out_i, tensor_w_out_j, tensor_b_out, tensor_l_out])))

    for _ in range(ITERATIONS):
        sq.eval()
        w_in_i_val, w_in_j_val = tensor_w_in.data()
        b_in_val = tensor_b_in.data()[0]
        for j_iter in range(tensor_b_out.size()):
            w_in_i_val -= LEARNING_RATE * tensor_w_out_i.data()[j_iter]
            w_in_j_val -= LEARNING_RATE * tensor_w_out_j.data()[j_iter]
            b_in_val -= LEARNING_RATE * tensor_b_out.data()[j_iter]
        tensor_w_in.set_data([w_in_i_val, w_in_j_val])
        tensor_b_in.set_data([b_in_val])

    w, b = tensor_w_in.data(), tensor_b_in.data()[0]
    want_w, want_b = numpy_training()
    seeds_asserts = 0.0 < w[0] < 0.01 and w[1] > 1.5 and b < 0.7
    good = bool(np.allclose(w, want_w, rtol=1e-4, atol=1e-6) and np.isclose(b, want_b, rtol=1e-4) and seeds_asserts)
    print(f"logistic regression, {ITERATIONS} evaluations of one graph ({sq.graph_instantiations} instantiation): "
          f"w = {w.tolist()}, b = {b:.6f}; numpy: w = {want_w.tolist()}, b = {want_b:.6f}: "
          f"{'match' if good else 'WRONG'}")
    return good


def numpy_training():
    f = np.float32
    x_i, x_j, y = np.array(X_I, f), np.array(X_J, f), np.array(Y, f)
    w, b, m = np.array([0.001, 0.001], f), f(0.0), f(5.0)
    for _ in range(ITERATIONS):
        y_hat = f(1) / (f(1) + np.exp(-(w[0] * x_i + w[1] * x_j + b)))
        d_z = y_hat - y
        d_wi, d_wj, d_b = (f(1) / m) * x_i * d_z, (f(1) / m) * x_j * d_z, (f(1) / m) * d_z
        w_i, w_j = w
        for j in range(5):  # the seed's order of updates
            w_i -= f(LEARNING_RATE) * d_wi[j]
            w_j -= f(LEARNING_RATE) * d_wj[j]
            b -= f(LEARNING_RATE) * d_b[j]
        w = np.array([w_i, w_j], f)
    return w, b


def main():
    open_gpu()
    with kp.Manager() as mgr:
        return train(mgr)


if __name__ == "__main__":
    exit_with(main)
