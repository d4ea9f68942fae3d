/* The floor of one message of bench/graph_messages.py's GPU-resident 1 MiB
 * pipeline (issue 33): the driver calls cubind.graph makes per message,
 * counted on the emulated driver (FAKE_CALL_LOG), made from C in a loop,
 * with no scheduler, queue or Python:
 *
 *   generator  cuMemAllocAsync (1 MiB, its stream), cuEventRecord
 *   chain      cuStreamWaitEvent, cuMemAllocAsync (the output), two
 *              cuGraphExecMemcpyNodeSetParams (the message's tensor into the
 *              captured chain's buffer, the buffer into the output),
 *              cuGraphLaunch (copy, saxpy, saxpy, copy), cuEventRecord
 *   sink       cuStreamWaitEvent; each tensor freed in its stream's order
 *              after the streams that used it (cuEventRecord,
 *              cuStreamWaitEvent, cuMemFreeAsync, twice)
 *   and the cheap queries: 6 cuCtxGetCurrent, 2 cuCtxGetDevice,
 *   6 cuStreamIsCapturing.
 *
 *   pipeline_floor [messages]      # one JSON line: microseconds per message
 *
 * Build: cc -O2 -o pipeline_floor bench/pipeline_floor.c -I$CUDA_HOME/include \
 *        -L$CUDA_HOME/lib64 -lnvrtc -ldl   (the driver is opened at run time) */
#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_NAME "pipeline_floor"
#include "floor.h"

#define MIB (1u << 20)
#define N (MIB / 4)

static const char *SAXPY =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *out, size_t n)\n"
    "{\n"
    "    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = a * x[i] + out[i];\n"
    "}\n";

/* The entry points, from cuGetProcAddress at the version of the prototype
 * cuda.h declares (cudaTypedefs.h's), as cubind's loader asks: asked at 13000,
 * a name the driver has a newer ABI of gives that one, not the header's. */
#define ENTRIES(X)                                                                          \
    X(cuCtxGetCurrent, 4000, (CUcontext *))                                                       \
    X(cuCtxGetDevice, 2000, (CUdevice *))                                                         \
    X(cuStreamIsCapturing, 10000, (CUstream, CUstreamCaptureStatus *))                             \
    X(cuMemAllocAsync, 11020, (CUdeviceptr *, size_t, CUstream))                                   \
    X(cuMemFreeAsync, 11020, (CUdeviceptr, CUstream))                                              \
    X(cuEventRecord, 2000, (CUevent, CUstream))                                                   \
    X(cuStreamWaitEvent, 3020, (CUstream, CUevent, unsigned int))                                 \
    X(cuGraphExecMemcpyNodeSetParams, 10020, (CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *, CUcontext)) \
    X(cuGraphLaunch, 10000, (CUgraphExec, CUstream))                                               \
    X(cuDeviceGet, 2000, (CUdevice *, int))                                                       \
    X(cuDevicePrimaryCtxRetain, 7000, (CUcontext *, CUdevice))                                    \
    X(cuCtxSetCurrent, 4000, (CUcontext))                                                         \
    X(cuStreamCreate, 2000, (CUstream *, unsigned int))                                           \
    X(cuEventCreate, 2000, (CUevent *, unsigned int))                                             \
    X(cuMemAlloc, 3020, (CUdeviceptr *, size_t))                                                  \
    X(cuModuleLoadData, 2000, (CUmodule *, const void *))                                         \
    X(cuModuleGetFunction, 2000, (CUfunction *, CUmodule, const char *))                          \
    X(cuGraphCreate, 10000, (CUgraph *, unsigned int))                                             \
    X(cuGraphAddMemcpyNode, 10000, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMCPY3D *, CUcontext)) \
    X(cuGraphAddKernelNode, 12000, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *)) \
    X(cuGraphInstantiate, 11040, (CUgraphExec *, CUgraph, unsigned long long))                     \
    X(cuCtxSynchronize, 2000, (void))

#define DECLARE(name, version, args) static CUresult(*p_##name) args;
ENTRIES(DECLARE)

static void load(void) {
    const char *path = getenv("CUBIND_CUDA_LIBRARY"); /* as cubind: the emulated driver, for a check without a GPU */
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);
    CUresult (*init)(unsigned int);
    CUresult (*proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    if (!lib || !(init = dlsym(lib, "cuInit")) || !(proc = dlsym(lib, "cuGetProcAddress_v2"))) {
        fprintf(stderr, "pipeline_floor: no driver (%s)\n", dlerror());
        exit(1);
    }
    CHECK(init(0));
    CUdriverProcAddressQueryResult found;
    /* cuGraphInstantiate is the 11.0 ABI under its own name: ask for WithFlags, as cubind does. */
#define RESOLVE(name, version, args)                                                              \
    CHECK(proc(strcmp(#name, "cuGraphInstantiate") ? #name : "cuGraphInstantiateWithFlags",        \
               (void **)&p_##name, version, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    ENTRIES(RESOLVE)
}

static char *compile_ptx(void) {
    nvrtcProgram prog;
    size_t size;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    if (nvrtcCreateProgram(&prog, SAXPY, "saxpy.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS || nvrtcGetPTXSize(prog, &size) != NVRTC_SUCCESS) {
        fprintf(stderr, "pipeline_floor: NVRTC failed\n");
        exit(1);
    }
    char *ptx = malloc(size);
    nvrtcGetPTX(prog, ptx);
    nvrtcDestroyProgram(&prog);
    return ptx;
}

static CUDA_MEMCPY3D copy_params(CUdeviceptr dst, CUdeviceptr src) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.dstDevice = dst;
    c.WidthInBytes = MIB;
    c.Height = c.Depth = 1;
    return c;
}

int main(int argc, char **argv) {
    long messages = argc > 1 ? atol(argv[1]) : 20000;
    CUdevice dev;
    CUcontext ctx, current;
    CUstream gen, chain, sink;
    CUevent ev_gen, ev_chain, ev_sink;
    CUmodule module;
    CUfunction saxpy;
    CUdeviceptr fixed, x, y;
    CUgraph graph;
    CUgraphNode copy_in, k1, k2, copy_out;
    CUgraphExec exec;
    CUstreamCaptureStatus capturing;
    char *ptx = compile_ptx();
    load();
    CHECK(p_cuDeviceGet(&dev, 0));
    CHECK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(p_cuCtxSetCurrent(ctx));
    CHECK(p_cuStreamCreate(&gen, CU_STREAM_NON_BLOCKING));
    CHECK(p_cuStreamCreate(&chain, CU_STREAM_NON_BLOCKING));
    CHECK(p_cuStreamCreate(&sink, CU_STREAM_NON_BLOCKING));
    CHECK(p_cuEventCreate(&ev_gen, CU_EVENT_DISABLE_TIMING));
    CHECK(p_cuEventCreate(&ev_chain, CU_EVENT_DISABLE_TIMING));
    CHECK(p_cuEventCreate(&ev_sink, CU_EVENT_DISABLE_TIMING));
    CHECK(p_cuModuleLoadData(&module, ptx));
    CHECK(p_cuModuleGetFunction(&saxpy, module, "saxpy"));
    CHECK(p_cuMemAlloc(&fixed, MIB));
    /* The copies' ends are pool memory, as each message's tensors: the driver
     * refuses to move a copy node made with cuMemAlloc memory to pool memory. */
    CHECK(p_cuMemAllocAsync(&x, MIB, gen));
    CHECK(p_cuMemAllocAsync(&y, MIB, chain));
    CHECK(p_cuCtxSynchronize());

    /* copy in -> saxpy -> saxpy -> copy out, as the chain's replay graph. */
    float a = 2.0f;
    size_t n = N;
    void *args[] = {&a, &fixed, &fixed, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = saxpy;
    kp.gridDimX = (N + 255) / 256;
    kp.gridDimY = kp.gridDimZ = kp.blockDimY = kp.blockDimZ = 1;
    kp.blockDimX = 256;
    kp.kernelParams = args;
    CUDA_MEMCPY3D in = copy_params(fixed, x), out = copy_params(y, fixed);
    CHECK(p_cuGraphCreate(&graph, 0));
    CHECK(p_cuGraphAddMemcpyNode(&copy_in, graph, NULL, 0, &in, ctx));
    CHECK(p_cuGraphAddKernelNode(&k1, graph, &copy_in, 1, &kp));
    CHECK(p_cuGraphAddKernelNode(&k2, graph, &k1, 1, &kp));
    CHECK(p_cuGraphAddMemcpyNode(&copy_out, graph, &k2, 1, &out, ctx));
    CHECK(p_cuGraphInstantiate(&exec, graph, 0));

    double start = 0;
    for (long i = -200; i < messages; ++i) { /* 200 of warm-up: the pool grows to its size */
        if (i == 0) {
            CHECK(p_cuCtxSynchronize());
            start = now_s();
        }
        for (int q = 0; q < 6; ++q) CHECK(p_cuCtxGetCurrent(&current));
        for (int q = 0; q < 2; ++q) CHECK(p_cuCtxGetDevice(&dev));
        for (int q = 0; q < 6; ++q) CHECK(p_cuStreamIsCapturing(q % 2 ? chain : gen, &capturing));
        /* generator */
        CHECK(p_cuMemAllocAsync(&x, MIB, gen));
        CHECK(p_cuEventRecord(ev_gen, gen));
        /* chain */
        CHECK(p_cuStreamWaitEvent(chain, ev_gen, 0));
        CHECK(p_cuMemAllocAsync(&y, MIB, chain));
        in = copy_params(fixed, x);
        out = copy_params(y, fixed);
        CHECK(p_cuGraphExecMemcpyNodeSetParams(exec, copy_in, &in, ctx));
        CHECK(p_cuGraphExecMemcpyNodeSetParams(exec, copy_out, &out, ctx));
        CHECK(p_cuGraphLaunch(exec, chain));
        CHECK(p_cuEventRecord(ev_chain, chain));
        /* sink */
        CHECK(p_cuStreamWaitEvent(sink, ev_chain, 0));
        /* x: used by the chain; freed on the generator's stream after it */
        CHECK(p_cuEventRecord(ev_chain, chain));
        CHECK(p_cuStreamWaitEvent(gen, ev_chain, 0));
        CHECK(p_cuMemFreeAsync(x, gen));
        /* y: used by the sink; freed on the chain's stream after it */
        CHECK(p_cuEventRecord(ev_sink, sink));
        CHECK(p_cuStreamWaitEvent(chain, ev_sink, 0));
        CHECK(p_cuMemFreeAsync(y, chain));
    }
    CHECK(p_cuCtxSynchronize());
    double elapsed = now_s() - start;
    printf("{\"row\": \"the resident 1 MiB pipeline's driver calls per message, from C\", \"messages\": %ld, "
           "\"us_per_message\": %.3f, \"messages_per_s\": %.1f}\n",
           messages, elapsed * 1e6 / messages, messages / elapsed);
    return 0;
}
