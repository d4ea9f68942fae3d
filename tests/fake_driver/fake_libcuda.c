/* A stand-in for libcuda.so.1 on machines without a GPU.
 *
 * Every function succeeds and does nothing, except that the fake records what
 * the binding handed it, for tests to read back through ctypes:
 *   - each cuGetProcAddress_v2 request (symbol, version, flags), so tests can
 *     check the ABI version and the per-thread default stream opt-in;
 *   - the kernelParams of the last cuLaunchKernel: fake_record_args values of
 *     8 bytes each, read through the pointers the binding packed.
 * bench/run.py --smoke also uses it to run the benchmark harness end to end in
 * CI; numbers taken with it say nothing about a real driver. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long cuuint64_t;

#define FAKE_MAX_REQUESTS 4096
#define FAKE_MAX_ARGS 512

struct fake_request {
    char symbol[64];
    int version;
    cuuint64_t flags;
};

struct fake_request fake_requests[FAKE_MAX_REQUESTS];
int fake_request_count = 0;

int fake_record_args = 0;
unsigned long long fake_args[FAKE_MAX_ARGS];
int fake_launch_count = 0;

static int fake_success(void) { return 0; }

static int fake_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void *stream, void **params, void **extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
    fake_launch_count++;
    for (int i = 0; i < fake_record_args && i < FAKE_MAX_ARGS; i++) memcpy(&fake_args[i], params[i], 8);
    return 0;
}

/* FAKE_MISSING names a function this "driver" lacks, as an older driver
 * would: cuGetProcAddress reports it not found (CUDA_ERROR_NOT_FOUND, 500). */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status) {
    const char *missing = getenv("FAKE_MISSING");
    if (fake_request_count < FAKE_MAX_REQUESTS) {
        struct fake_request *r = &fake_requests[fake_request_count++];
        strncpy(r->symbol, symbol, sizeof r->symbol - 1);
        r->version = version;
        r->flags = flags;
    }
    if (missing && strcmp(symbol, missing) == 0) {
        *pfn = NULL;
        if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
        return 500;
    }
    *pfn = strcmp(symbol, "cuLaunchKernel") == 0 ? (void *)fake_launch : (void *)fake_success;
    if (status) *status = 0;
    return 0;
}

/* What the C floor program links against by name (the header's _v2.. names). */
#define FAKE(name) int name(void) { return 0; }
FAKE(cuInit)
FAKE(cuDeviceGet)
FAKE(cuCtxCreate_v4)
FAKE(cuCtxDestroy_v2)
FAKE(cuCtxGetCurrent)
FAKE(cuDeviceGetAttribute)
FAKE(cuPointerGetAttribute)
FAKE(cuEventCreate)
FAKE(cuEventDestroy_v2)
FAKE(cuEventRecord)
FAKE(cuStreamCreate)
FAKE(cuStreamDestroy_v2)
FAKE(cuStreamQuery)
FAKE(cuStreamSynchronize)
FAKE(cuMemAlloc_v2)
FAKE(cuMemFree_v2)
FAKE(cuMemcpyHtoDAsync_v2)
FAKE(cuMemcpyHtoD_v2)
FAKE(cuMemcpyDtoH_v2)
FAKE(cuModuleLoadData)
FAKE(cuModuleUnload)
FAKE(cuModuleGetFunction)
FAKE(cuLibraryLoadData)
FAKE(cuLibraryGetKernel)
FAKE(cuLibraryUnload)
FAKE(cuLaunchKernel)
