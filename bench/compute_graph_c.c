/* The C floor of bench/compute_graph.py: the same graph of dependent
 * kernels built with the driver API and launched from a C loop.
 *
 *   compute_graph_c <kernel.ptx> <kernels> <iterations> <mode>
 *
 * mode "launch": cuGraphLaunch + cuStreamSynchronize per iteration;
 * "update": cuGraphExecKernelNodeSetParams on one node with a new argument,
 * then the same; "copy": a 4 KiB cuMemcpyHtoDAsync + sync, then a 4 KiB
 * cuMemcpyDtoHAsync + sync (two numbers). Prints nanoseconds per iteration,
 * one number per line. The kernel is axpb(float *x, float a, float b) on
 * 1024 floats in 4 blocks of 256 threads, as compute_graph.py launches it. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_NAME "compute_graph_c"
#include "floor.h"

#define N 1024

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc(1, size + 1);
    if (fread(text, 1, size, f) != (size_t)size) { perror(path); exit(1); }
    fclose(f);
    return text;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s kernel.ptx kernels iterations launch|update|copy\n", argv[0]); return 2; }
    int kernels = atoi(argv[2]), iterations = atoi(argv[3]);
    const char *mode = argv[4];
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction axpb;
    CUstream stream;
    CUdeviceptr x;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, read_file(argv[1])));
    CHECK(cuModuleGetFunction(&axpb, module, "axpb"));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&x, N * sizeof(float)));

    if (strcmp(mode, "copy") == 0) {
        float *host;
        CHECK(cuMemHostAlloc((void **)&host, 4096, CU_MEMHOSTALLOC_PORTABLE));
        for (int pass = 0; pass < 2; pass++) {
            double start = now_ns();
            for (int i = 0; i < iterations; i++) {
                if (pass == 0) CHECK(cuMemcpyHtoDAsync(x, host, 4096, stream));
                else CHECK(cuMemcpyDtoHAsync(host, x, 4096, stream));
                CHECK(cuStreamSynchronize(stream));
            }
            printf("%.1f\n", (now_ns() - start) / iterations);
        }
        return 0;
    }

    float a = 1.0f, b = 0.0f;
    void *args[] = {&x, &a, &b};
    CUDA_KERNEL_NODE_PARAMS params;
    memset(&params, 0, sizeof params);
    params.func = axpb;
    params.gridDimX = N / 256; params.gridDimY = params.gridDimZ = 1;
    params.blockDimX = 256; params.blockDimY = params.blockDimZ = 1;
    params.kernelParams = args;
    CUgraph graph;
    CUgraphExec exec;
    CUgraphNode prev = NULL, first = NULL;
    CHECK(cuGraphCreate(&graph, 0));
    for (int k = 0; k < kernels; k++) {
        CUgraphNode node;
        CHECK(cuGraphAddKernelNode(&node, graph, prev ? &prev : NULL, prev ? 1 : 0, &params));
        if (!first) first = node;
        prev = node;
    }
    CHECK(cuGraphInstantiate(&exec, graph, 0));
    CHECK(cuGraphLaunch(exec, stream)); /* warm-up */
    CHECK(cuStreamSynchronize(stream));
    int update = strcmp(mode, "update") == 0;
    double start = now_ns();
    for (int i = 0; i < iterations; i++) {
        if (update) {
            b = (float)(i & 1);
            CHECK(cuGraphExecKernelNodeSetParams(exec, first, &params));
        }
        CHECK(cuGraphLaunch(exec, stream));
        CHECK(cuStreamSynchronize(stream));
    }
    printf("%.1f\n", (now_ns() - start) / iterations);
    return 0;
}
