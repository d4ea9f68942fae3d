"""Stream capture and graph update with the runtime: a scale-then-add
sequence is captured from a stream into a graph (cudaStreamBeginCapture /
cudaStreamEndCapture), instantiated and launched; then the same sequence is
captured again with other arguments and the executable graph is updated in
place (cudaGraphExecUpdate, which returns its result info) and launched again.
Both results are checked. Without a GPU it says so and exits 0."""

import ctypes
import sys

import numpy as np
from _runtime_common import check, load_kernel, open_device

from cuda import cudart

SOURCE = b"""
extern "C" __global__ void axpb(float *x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
"""
N = 1 << 14


def capture(kernel, stream, ptr, a, b):
    """The sequence x = a*x + b; x = x + 1, captured into a new graph."""
    check(cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    grid, block = cudart.dim3(x=N // 256, y=1, z=1), cudart.dim3(x=256, y=1, z=1)
    types = (ctypes.c_void_p, ctypes.c_float, ctypes.c_float, ctypes.c_int)
    check(cudart.cudaLaunchKernel(kernel, grid, block, ((ptr, a, b, N), types), 0, stream))
    check(cudart.cudaLaunchKernel(kernel, grid, block, ((ptr, 1.0, 1.0, N), types), 0, stream))
    return check(cudart.cudaStreamEndCapture(stream))


def run_once(graph_exec, stream, ptr, start):
    host = np.array(start, dtype=np.float32)
    kind = cudart.cudaMemcpyKind
    check(cudart.cudaMemcpyAsync(ptr, host, host.nbytes, kind.cudaMemcpyHostToDevice, stream))
    check(cudart.cudaGraphLaunch(graph_exec, stream))
    check(cudart.cudaMemcpyAsync(host, ptr, host.nbytes, kind.cudaMemcpyDeviceToHost, stream))
    check(cudart.cudaStreamSynchronize(stream))
    return host


def main():
    arch = open_device()
    if arch is None:
        return 0
    library, kernel = load_kernel(SOURCE, "axpb", arch)
    stream = check(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking))
    ptr = check(cudart.cudaMalloc(N * 4))
    start = np.arange(N, dtype=np.float32)

    graph = capture(kernel, stream, ptr, 2.0, 3.0)
    nodes, count = check(cudart.cudaGraphGetNodes(graph, 8))
    assert count == 2, f"expected 2 kernel nodes, got {count}"
    graph_exec = check(cudart.cudaGraphInstantiate(graph, 0))
    got = run_once(graph_exec, stream, ptr, start)
    assert np.allclose(got, 2 * start + 3 + 1), "first graph launch gave a wrong result"

    updated = capture(kernel, stream, ptr, -1.0, 0.5)
    info = check(cudart.cudaGraphExecUpdate(graph_exec, updated))
    assert info.result == cudart.cudaGraphExecUpdateResult.cudaGraphExecUpdateSuccess, info.result
    got = run_once(graph_exec, stream, ptr, start)
    assert np.allclose(got, -start + 0.5 + 1), "updated graph launch gave a wrong result"

    for g in (graph, updated):
        check(cudart.cudaGraphDestroy(g))
    check(cudart.cudaGraphExecDestroy(graph_exec))
    check(cudart.cudaFree(ptr))
    check(cudart.cudaStreamDestroy(stream))
    check(cudart.cudaLibraryUnload(library))
    print(f"graph of {count} captured kernels launched, updated in place ({info.result.name}) and relaunched: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
