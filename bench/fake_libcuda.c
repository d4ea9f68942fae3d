/* A stand-in for libcuda.so.1 on machines without a GPU: every function
 * succeeds and does nothing. It lets the benchmark harness run end to end in
 * CI (`bench/run.py --smoke`) and measures the binding's own work with a
 * driver call that costs almost nothing. Numbers taken with it say nothing
 * about a real driver. */
#include <stddef.h>
#include <string.h>

typedef unsigned long long cuuint64_t;

static int fake_success(void) { return 0; }

/* What the bindings resolve: any symbol, any version. */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status) {
    (void)symbol; (void)version; (void)flags;
    *pfn = (void *)fake_success;
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
FAKE(cuModuleLoadData)
FAKE(cuModuleUnload)
FAKE(cuModuleGetFunction)
FAKE(cuLaunchKernel)
