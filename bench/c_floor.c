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

#define FLOOR_NAME "c_floor"
#include "floor.h"

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
static void sync_default(void) { CHECK(cuStreamSynchronize(NULL)); }

/* The copies: pageable host memory (malloc'd, every page touched) to and
 * from one device allocation of the largest size. cuMemcpyHtoD/DtoH and
 * cuLaunchKernelEx are taken from cuGetProcAddress, as cubind takes every
 * entry point (the test suite's fake driver exports no such names to link
 * against). */
typedef CUresult (CUDAAPI *memcpy_htod_t)(CUdeviceptr, const void *, size_t);
typedef CUresult (CUDAAPI *memcpy_dtoh_t)(void *, CUdeviceptr, size_t);
static memcpy_htod_t memcpy_htod;
static memcpy_dtoh_t memcpy_dtoh;
/* cubind.launch's call, for its row. */
typedef CUresult (CUDAAPI *launch_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
static launch_ex_t launch_ex;
static CUlaunchConfig config5;
static void *host_in, *host_out;
static CUdeviceptr dcopy;
#define COPY_MAX ((size_t)256 << 20)

/* NULL where the driver lacks it: the rows that need it are then reported
 * in the ready line's errors instead of timed. */
static void *entry_point(const char *symbol) {
    void *fn = NULL;
    CUdriverProcAddressQueryResult found;
    if (cuGetProcAddress(symbol, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
        return NULL;
    return fn;
}

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
/* The Pythonic rows without a stream launch on the default stream. */
CALL(launch_5_default, CHECK(cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, NULL, args5, NULL)))
CALL(launch_5_ex, CHECK(launch_ex(&config5, saxpy, args5, NULL)))
/* HtoD (Array.set), DtoH (Array.get), and what to_gpu does: allocate, copy, free. */
#define COPIES(size, bytes)                                                                    \
    CALL(htod_##size, CHECK(memcpy_htod(dcopy, host_in, bytes)))                               \
    CALL(dtoh_##size, CHECK(memcpy_dtoh(host_out, dcopy, bytes)))                              \
    CALL(to_gpu_##size, CUdeviceptr p_ = 0; CHECK(cuMemAlloc(&p_, bytes));                      \
         CHECK(memcpy_htod(p_, host_in, bytes)); CHECK(cuMemFree(p_)))
COPIES(4k, (size_t)4 << 10)
COPIES(1m, (size_t)1 << 20)
COPIES(256m, (size_t)256 << 20)

/* The rows, named as bench/worker.py names them; `sync` ends each sample
 * with cuStreamSynchronize, as the Python loops do: 1 of the stream, 2 of
 * the default stream. */
static const struct {
    const char *name;
    void (*run)(long);
    int sync;
    void **needs;   /* an entry point from cuGetProcAddress the row calls */
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
    {"saxpy_pythonic", launch_5_default, 2},
    {"saxpy_pythonic_stream", launch_5, 1},
    {"saxpy_pythonic_arrays", launch_5_default, 2},
    {"saxpy_launch_config", launch_5_ex, 1, (void **)&launch_ex},
    {"HtoD_set_4KiB", htod_4k, 2, (void **)&memcpy_htod},
    {"HtoD_set_1MiB", htod_1m, 2, (void **)&memcpy_htod},
    {"HtoD_set_256MiB", htod_256m, 2, (void **)&memcpy_htod},
    {"DtoH_get_4KiB", dtoh_4k, 2, (void **)&memcpy_dtoh},
    {"DtoH_get_1MiB", dtoh_1m, 2, (void **)&memcpy_dtoh},
    {"DtoH_get_256MiB", dtoh_256m, 2, (void **)&memcpy_dtoh},
    {"HtoD_to_gpu_4KiB", to_gpu_4k, 2, (void **)&memcpy_htod},
    {"HtoD_to_gpu_1MiB", to_gpu_1m, 2, (void **)&memcpy_htod},
    {"HtoD_to_gpu_256MiB", to_gpu_256m, 2, (void **)&memcpy_htod},
};
#define AVAILABLE(i) (!CALLS[i].needs || *CALLS[i].needs)
#define NCALLS (sizeof CALLS / sizeof CALLS[0])

/* Times `iters` calls of row `i` after a short warm-up; ns per call. */
static double sample(size_t i, long iters) {
    void (*sync)(void) = CALLS[i].sync == 1 ? sync_stream : CALLS[i].sync == 2 ? sync_default : NULL;
    CALLS[i].run(iters / 10 + 1);
    if (sync) sync();
    double t0 = now_ns();
    CALLS[i].run(iters);
    if (sync) sync();
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
    CHECK(cuMemAlloc(&dcopy, COPY_MAX));
    memcpy_htod = (memcpy_htod_t)entry_point("cuMemcpyHtoD");
    memcpy_dtoh = (memcpy_dtoh_t)entry_point("cuMemcpyDtoH");
    launch_ex = (launch_ex_t)entry_point("cuLaunchKernelEx");
    config5.gridDimX = config5.gridDimY = config5.gridDimZ = 1;
    config5.blockDimX = 32, config5.blockDimY = config5.blockDimZ = 1;
    config5.hStream = stream;
    host_in = malloc(COPY_MAX);
    host_out = malloc(COPY_MAX);
    if (!host_in || !host_out) {
        fprintf(stderr, "c_floor: no memory for the copies\n");
        return 1;
    }
    memset(host_in, 1, COPY_MAX);
    memset(host_out, 0, COPY_MAX);

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
    for (size_t i = 0, n = 0; i < NCALLS; i++)
        if (AVAILABLE(i)) printf("%s\"%s\"", n++ ? ", " : "", CALLS[i].name);
    printf("], \"errors\": {");
    for (size_t i = 0, n = 0; i < NCALLS; i++)
        if (!AVAILABLE(i))
            printf("%s\"%s\": \"cuGetProcAddress found no entry point it calls\"", n++ ? ", " : "", CALLS[i].name);
    printf("}, \"cuInit_first_call\": %.2f}\n", init_ns);
    fflush(stdout);
    char line[256], name[200];
    long iters;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "%199s %ld", name, &iters) != 2 || iters <= 0) break;
        size_t i = 0;
        while (i < NCALLS && strcmp(CALLS[i].name, name) != 0) i++;
        if (i == NCALLS || !AVAILABLE(i)) {
            fprintf(stderr, "c_floor: unknown call %s\n", name);
            return 1;
        }
        printf("%.3f\n", sample(i, iters));
        fflush(stdout);
    }

    CHECK(cuMemFree(dbuf));
    CHECK(cuMemFree(dcopy));
    free(host_in);
    free(host_out);
    CHECK(cuEventDestroy(event));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuModuleUnload(module));
    CHECK(cuLibraryUnload(library));
    CHECK(cuCtxDestroy(ctx));
    free(ptx);
    return 0;
}
