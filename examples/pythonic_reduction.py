#!/usr/bin/env python3
"""A sum reduction with one templated kernel, in cubind's Pythonic layer.

``block_sum<T, BLOCK>`` adds 2 * BLOCK elements per block in shared memory
and writes one partial sum per block; launched again on the partial sums
until one value is left. The template is instantiated for float, double and
int through ``name_expressions``, and each instance is fetched by the C++
name it was asked for (``module.get_kernel("block_sum<float, 256>")``). The
result is checked against numpy. Without a GPU it still compiles (NVRTC
needs none), says what it would launch and exits 0.

    python examples/pythonic_reduction.py --n 3000000
"""

import argparse

import numpy as np
from _driver_common import NoGPU, describe_launch, exit_with, open_gpu

import cubind

BLOCK = 256
SOURCE = r"""
template <typename T, int BLOCK>
__global__ void block_sum(const T *in, T *out, size_t n)
{
    __shared__ T partial[BLOCK];
    size_t i = blockIdx.x * (size_t)(2 * BLOCK) + threadIdx.x;
    T v = 0;
    if (i < n) v += in[i];
    if (i + BLOCK < n) v += in[i + BLOCK];
    partial[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
"""
TYPES = {np.float32: "float", np.float64: "double", np.int32: "int"}


def device_sum(kernel, data):
    """The sum of device array ``data``, by block sums of block sums."""
    while data.size > 1:
        blocks = (data.size + 2 * BLOCK - 1) // (2 * BLOCK)
        partial = cubind.empty(blocks, data.dtype)
        kernel(blocks, BLOCK, data, partial, data.size)
        data = partial
    return data.get()[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3_000_000, help="element count")
    args = parser.parse_args(argv)
    names = {dtype: f"block_sum<{ctype}, {BLOCK}>" for dtype, ctype in TYPES.items()}
    module = cubind.Program(SOURCE, name_expressions=list(names.values())).compile()  # NVRTC: no GPU needed
    try:
        open_gpu()
    except NoGPU as exc:
        blocks = (args.n + 2 * BLOCK - 1) // (2 * BLOCK)
        first = describe_launch(module, names[np.float32], blocks, BLOCK,
                                (np.empty(args.n, np.float32), np.empty(blocks, np.float32), args.n))
        print(f"No GPU available: {exc}; compiled {', '.join(names.values())} to {len(module.code)} bytes of PTX "
              f"for compute_{cubind.default_arch()}; with a GPU it would launch {first}, then again on the "
              f"partial sums until one is left, for each type.")
        return True
    rng = np.random.default_rng(0)
    good = True
    for dtype, name in names.items():
        host = (rng.random(args.n) if dtype != np.int32 else rng.integers(-1000, 1000, args.n)).astype(dtype)
        got = device_sum(module.get_kernel(name), cubind.to_gpu(host))
        want = host.sum(dtype=np.float64 if dtype != np.int32 else np.int64)
        ok = got == want if dtype == np.int32 else np.isclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12)
        print(f"{name}: {got} (numpy: {want}) {'ok' if ok else 'WRONG'}")
        good = good and bool(ok)
    return good


if __name__ == "__main__":
    exit_with(main)
