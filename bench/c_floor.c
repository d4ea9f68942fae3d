/* The floor: each benchmarked call made from C in a tight loop.
 *
 *   c_floor <kernels.ptx>
 *
 * serves bench/run.py as worker.py does: a JSON line naming its calls, then
 * for each request line "<call> <iterations>" the nanoseconds per call. The
 * calls, their arguments and the kernels match bench/worker.py so that the
 * rows of the table compare like with like. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult err_ = (call);                                              \
        if (err_ != CUDA_SUCCESS) {                                          \
            fprintf(stderr, "c_floor: %s failed: %d\n", #call, (int)err_);  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc(size + 1);
    if (fread(text, 1, size, f) != (size_t)size) { perror(path); exit(1); }
    text[size] = 0;
    fclose(f);
    return text;
}

/* Everything a call needs, made once in main(). */
static CUdevice dev;
static CUcontext ctx;
static CUmodule module;
static CUfunction k0, saxpy, ptr16, int256;
static CUstream stream;
static CUevent event;
static CUdeviceptr dbuf;
static CUcontext current;
static CUdevice got;
static int value;
static unsigned int memtype;
static long long host8;
static int major_, minor_;
static void *args5[5], *args16[16], *args256[256];
/* The runtime rows launch the driver library's CUkernel as a cudaKernel_t. */
static CUlibrary library;
static CUkernel rt_saxpy;
static int device_;

#define RT_CHECK(call)                                                       \
    do {                                                                     \
        cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                           \
            fprintf(stderr, "c_floor: %s failed: %d\n", #call, (int)err_);  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static void sync_stream(void) { CHECK(cuStreamSynchronize(stream)); }

static const dim3 dim3_1 = {1, 1, 1}, dim3_32 = {32, 1, 1};

/* One timed call: `body` in a loop of `iters_`. */
#define CALL(fn, body)                                                       \
    static void fn(long iters_) {                                            \
        for (long i_ = 0; i_ < iters_; i_++) { body; }                       \
    }

CALL(ctx_get_current, CHECK(cuCtxGetCurrent(&current)))
CALL(device_get, CHECK(cuDeviceGet(&got, 0)))
CALL(device_get_attribute, CHECK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)))
CALL(pointer_get_attribute, CHECK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dbuf)))
CALL(event_record, CHECK(cuEventRecord(event, stream)))
CALL(stream_query, CUresult s_ = cuStreamQuery(stream); (void)s_)
CALL(memcpy_8b, CHECK(cuMemcpyHtoDAsync(dbuf, &host8, 8, stream)))
CALL(launch_0, CHECK(cuLaunchKernel(k0, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL)))
CALL(launch_5, CHECK(cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, stream, args5, NULL)))
CALL(launch_16, CHECK(cuLaunchKernel(ptr16, 1, 1, 1, 32, 1, 1, 0, stream, args16, NULL)))
CALL(launch_256, CHECK(cuLaunchKernel(int256, 1, 1, 1, 32, 1, 1, 0, stream, args256, NULL)))
CALL(rt_get_device, RT_CHECK(cudaGetDevice(&device_)))
CALL(rt_stream_query, cudaError_t s_ = cudaStreamQuery((cudaStream_t)stream); (void)s_)
CALL(rt_launch_5, RT_CHECK(cudaLaunchKernel((const void *)rt_saxpy, dim3_1, dim3_32, args5, 0, (cudaStream_t)stream)))
CALL(nvrtc_version, if (nvrtcVersion(&major_, &minor_) != NVRTC_SUCCESS) exit(1))

/* The rows, named as bench/worker.py names them; `sync` ends each sample
 * with cuStreamSynchronize, as the Python loops do. */
static const struct {
    const char *name;
    void (*run)(long);
    int sync;
} CALLS[] = {
    {"cuCtxGetCurrent", ctx_get_current, 0},
    {"cuDeviceGet", device_get, 0},
    {"cuDeviceGetAttribute", device_get_attribute, 0},
    {"cuPointerGetAttribute", pointer_get_attribute, 0},
    {"cuEventRecord", event_record, 1},
    {"cuStreamQuery", stream_query, 0},
    {"cuMemcpyHtoDAsync_8B", memcpy_8b, 1},
    {"cuLaunchKernel_0", launch_0, 1},
    {"cuLaunchKernel_5_values", launch_5, 1},
    {"cuLaunchKernel_5_packed", launch_5, 1},
    {"cuLaunchKernel_16ptr", launch_16, 1},
    {"cuLaunchKernel_256int", launch_256, 1},
    {"nvrtcVersion", nvrtc_version, 0},
    {"cudaGetDevice", rt_get_device, 0},
    {"cudaStreamQuery", rt_stream_query, 0},
    {"cudaLaunchKernel_5_values", rt_launch_5, 1},
    {"cudaLaunchKernel_5_packed", rt_launch_5, 1},
};
#define NCALLS (sizeof CALLS / sizeof CALLS[0])

/* Times `iters` calls of row `i` after a short warm-up; ns per call. */
static double sample(size_t i, long iters) {
    CALLS[i].run(iters / 10 + 1);
    if (CALLS[i].sync) sync_stream();
    double t0 = now_ns();
    CALLS[i].run(iters);
    if (CALLS[i].sync) sync_stream();
    return (now_ns() - t0) / iters;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: c_floor <kernels.ptx>\n");
        return 2;
    }
    char *ptx = read_file(argv[1]);

    double t0 = now_ns();
    CHECK(cuInit(0));
    double init_ns = now_ns() - t0;

    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&k0, module, "k0"));
    CHECK(cuModuleGetFunction(&saxpy, module, "saxpy"));
    CHECK(cuModuleGetFunction(&ptr16, module, "ptr16"));
    CHECK(cuModuleGetFunction(&int256, module, "int256"));
    CHECK(cuLibraryLoadData(&library, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&rt_saxpy, library, "saxpy"));
    CHECK(cuStreamCreate(&stream, 0));
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemAlloc(&dbuf, 3 * 32 * sizeof(float)));

    static float a = 2.0f;
    static CUdeviceptr x, y, out;
    static size_t n = 32;
    x = dbuf, y = dbuf + 32 * sizeof(float), out = dbuf + 64 * sizeof(float);
    args5[0] = &a, args5[1] = &x, args5[2] = &y, args5[3] = &out, args5[4] = &n;
    static CUdeviceptr ptrs[16];
    for (int i = 0; i < 16; i++) { ptrs[i] = dbuf; args16[i] = &ptrs[i]; }
    static int ints[256];
    for (int i = 0; i < 256; i++) { ints[i] = i; args256[i] = &ints[i]; }

    /* The protocol of bench/worker.py: a ready line, then one line per
     * request "<call> <iterations>" answered with ns per call. */
    printf("{\"calls\": [");
    for (size_t i = 0; i < NCALLS; i++) printf("%s\"%s\"", i ? ", " : "", CALLS[i].name);
    printf("], \"errors\": {}, \"cuInit_first_call\": %.2f}\n", init_ns);
    fflush(stdout);
    char line[256], name[200];
    long iters;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "%199s %ld", name, &iters) != 2 || iters <= 0) break;
        size_t i = 0;
        while (i < NCALLS && strcmp(CALLS[i].name, name) != 0) i++;
        if (i == NCALLS) {
            fprintf(stderr, "c_floor: unknown call %s\n", name);
            return 1;
        }
        printf("%.3f\n", sample(i, iters));
        fflush(stdout);
    }

    CHECK(cuMemFree(dbuf));
    CHECK(cuEventDestroy(event));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuModuleUnload(module));
    CHECK(cuLibraryUnload(library));
    CHECK(cuCtxDestroy(ctx));
    free(ptx);
    return 0;
}
