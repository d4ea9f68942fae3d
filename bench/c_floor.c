/* The floor: each benchmarked call made from C in a tight loop.
 *
 *   c_floor <kernels.ptx> <repeats> <scale>
 *
 * prints one JSON object: call name -> list of nanoseconds per call, one entry
 * per repeat. The calls, their arguments and the kernels match bench/worker.py
 * so that the rows of the table compare like with like. */
#include <cuda.h>
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

static int first_row = 1;

/* One JSON row: `body` runs `iters` times per repeat; launches also wait for
 * the stream at the end of each repeat, as the Python loops do. */
#define ROW(name, iters, body, after)                                        \
    do {                                                                     \
        printf("%s\n  \"%s\": [", first_row ? "{" : ",", name);              \
        first_row = 0;                                                       \
        for (int r_ = 0; r_ < repeats; r_++) {                               \
            double t0_ = now_ns();                                           \
            for (long i_ = 0; i_ < (iters); i_++) { body; }                  \
            after;                                                           \
            printf("%s%.2f", r_ ? ", " : "", (now_ns() - t0_) / (iters));    \
        }                                                                    \
        printf("]");                                                         \
        fflush(stdout);                                                      \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: c_floor <kernels.ptx> <repeats> <scale>\n");
        return 2;
    }
    char *ptx = read_file(argv[1]);
    int repeats = atoi(argv[2]);
    long scale = atol(argv[3]);
    long queries = 20000 * scale, launches = 2000 * scale;

    double t0 = now_ns();
    CHECK(cuInit(0));
    double init_ns = now_ns() - t0;

    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction k0, saxpy, ptr16, int256;
    CUstream stream;
    CUevent event;
    CUdeviceptr dbuf;
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&k0, module, "k0"));
    CHECK(cuModuleGetFunction(&saxpy, module, "saxpy"));
    CHECK(cuModuleGetFunction(&ptr16, module, "ptr16"));
    CHECK(cuModuleGetFunction(&int256, module, "int256"));
    CHECK(cuStreamCreate(&stream, 0));
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemAlloc(&dbuf, 3 * 32 * sizeof(float)));

    CUcontext current;
    CUdevice got;
    int value;
    unsigned int memtype;
    CUresult status;
    long long host8 = 0;
    int major, minor;

    float a = 2.0f;
    CUdeviceptr x = dbuf, y = dbuf + 32 * sizeof(float), out = dbuf + 64 * sizeof(float);
    size_t n = 32;
    void *args5[] = {&a, &x, &y, &out, &n};
    CUdeviceptr ptrs[16];
    void *args16[16];
    for (int i = 0; i < 16; i++) { ptrs[i] = dbuf; args16[i] = &ptrs[i]; }
    int ints[256];
    void *args256[256];
    for (int i = 0; i < 256; i++) { ints[i] = i; args256[i] = &ints[i]; }

    ROW("cuCtxGetCurrent", queries, CHECK(cuCtxGetCurrent(&current)), );
    ROW("cuDeviceGet", queries, CHECK(cuDeviceGet(&got, 0)), );
    ROW("cuDeviceGetAttribute", queries,
        CHECK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)), );
    ROW("cuPointerGetAttribute", queries,
        CHECK(cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dbuf)), );
    ROW("cuEventRecord", queries, CHECK(cuEventRecord(event, stream)), CHECK(cuStreamSynchronize(stream)));
    ROW("cuStreamQuery", queries, status = cuStreamQuery(stream); (void)status, );
    ROW("cuMemcpyHtoDAsync_8B", queries / 4, CHECK(cuMemcpyHtoDAsync(dbuf, &host8, 8, stream)),
        CHECK(cuStreamSynchronize(stream)));
    ROW("cuLaunchKernel_0", launches,
        CHECK(cuLaunchKernel(k0, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL)), CHECK(cuStreamSynchronize(stream)));
    ROW("cuLaunchKernel_5_values", launches,
        CHECK(cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, stream, args5, NULL)), CHECK(cuStreamSynchronize(stream)));
    ROW("cuLaunchKernel_5_packed", launches,
        CHECK(cuLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, stream, args5, NULL)), CHECK(cuStreamSynchronize(stream)));
    ROW("cuLaunchKernel_16ptr", launches,
        CHECK(cuLaunchKernel(ptr16, 1, 1, 1, 32, 1, 1, 0, stream, args16, NULL)), CHECK(cuStreamSynchronize(stream)));
    ROW("cuLaunchKernel_256int", launches,
        CHECK(cuLaunchKernel(int256, 1, 1, 1, 32, 1, 1, 0, stream, args256, NULL)), CHECK(cuStreamSynchronize(stream)));
    ROW("nvrtcVersion", queries, if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) exit(1), );
    printf(",\n  \"cuInit_first_call\": [%.2f]\n}\n", init_ns);

    CHECK(cuMemFree(dbuf));
    CHECK(cuEventDestroy(event));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuModuleUnload(module));
    CHECK(cuCtxDestroy(ctx));
    free(ptx);
    return 0;
}
