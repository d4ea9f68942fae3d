#!/usr/bin/env python3
"""Thread block clusters with cuLaunchKernelEx (compute capability 9.0+).

Launches a kernel with a CUlaunchConfig carrying one CUlaunchAttribute,
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, so that the grid is split into
clusters of ``--cluster`` blocks. Each block writes its rank in its cluster
(%cluster_ctarank), the cluster's size (%cluster_nctarank) and its cluster's
index (%clusterid.x); the result must be rank = block % cluster,
size = cluster and cluster id = block // cluster.

    python examples/launch_ex_cluster.py --blocks 16 --cluster 2
"""

import argparse
import contextlib

import numpy as np
from _driver_common import Skip, call, compute_capability, device_arch, exit_with, gpu_context, load_kernel, open_gpu

KERNEL = """\
extern "C" __global__ void cluster_ids(unsigned int *rank, unsigned int *size, unsigned int *cluster)
{
    unsigned int r, n, c;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
    if (threadIdx.x == 0) {
        rank[blockIdx.x] = r;
        size[blockIdx.x] = n;
        cluster[blockIdx.x] = c;
    }
}
"""
THREADS = 128


def launch_config(cuda, blocks, cluster, stream):
    attr = cuda.CUlaunchAttribute()
    attr.id = cuda.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value.clusterDim.x = cluster
    attr.value.clusterDim.y = 1
    attr.value.clusterDim.z = 1
    config = cuda.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = blocks, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = THREADS, 1, 1
    config.sharedMemBytes = 0
    config.hStream = stream
    config.attrs = [attr]   # the config keeps its own copy of the array alive
    config.numAttrs = 1
    return config


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=16, help="grid size in blocks")
    parser.add_argument("--cluster", type=int, default=2, help="blocks per cluster (divides --blocks; at most 8)")
    args = parser.parse_args(argv)
    if args.blocks % args.cluster:
        parser.error("--cluster must divide --blocks")

    cuda, dev = open_gpu()
    major, minor = compute_capability(cuda, dev)
    if major < 9:
        raise Skip(f"thread block clusters need compute capability 9.0; this GPU is {major}.{minor}")
    arch = device_arch(cuda, dev)

    blocks = args.blocks
    rank, size, cluster = (np.full(blocks, 0xFFFFFFFF, dtype=np.uint32) for _ in range(3))
    with gpu_context(cuda, dev), contextlib.ExitStack() as cleanup:
        kernel = load_kernel(cuda, cleanup, KERNEL, "cluster_ids", arch)
        buffers = [call(cuda.cuMemAlloc, rank.nbytes) for _ in range(3)]
        for dptr in buffers:
            cleanup.callback(call, cuda.cuMemFree, dptr)
        stream = call(cuda.cuStreamCreate, 0)
        cleanup.callback(call, cuda.cuStreamDestroy, stream)

        config = launch_config(cuda, blocks, args.cluster, stream)
        max_cluster = call(cuda.cuOccupancyMaxPotentialClusterSize, kernel, config)
        if args.cluster > max_cluster:
            raise Skip(f"clusters of {args.cluster} blocks: this GPU allows at most {max_cluster} for the kernel")
        params = (tuple(buffers), (None, None, None))   # CUdeviceptr objects: their values are passed
        call(cuda.cuLaunchKernelEx, config, kernel, params, None)
        for host, dptr in zip((rank, size, cluster), buffers):
            call(cuda.cuMemcpyDtoHAsync, host, dptr, host.nbytes, stream)
        call(cuda.cuStreamSynchronize, stream)

    block = np.arange(blocks, dtype=np.uint32)
    want = {"rank": block % args.cluster, "size": np.full(blocks, args.cluster, np.uint32),
            "cluster": block // args.cluster}
    got = {"rank": rank, "size": size, "cluster": cluster}
    wrong = [name for name in want if not np.array_equal(got[name], want[name])]
    if wrong:
        for name in wrong:
            print(f"{name}: got {got[name].tolist()}, expected {want[name].tolist()}")
        return False
    print(f"{blocks} blocks in clusters of {args.cluster} (the device allows up to {max_cluster}): "
          f"ranks {rank.tolist()[:2 * args.cluster]}... as expected")
    return True


if __name__ == "__main__":
    exit_with(main)
