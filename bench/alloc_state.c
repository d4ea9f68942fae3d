/* What a 1 MiB cuMemAlloc + cuMemcpyHtoD + cuMemFree costs in C, depending on
 * the device allocations already live in the process.
 *
 *     cc -O2 -o alloc_state bench/alloc_state.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda
 *     ./alloc_state
 *
 * Why it exists: to_gpu allocates and frees, and the driver's cost for that
 * is not a constant of the call. Where a partly used allocation block has
 * room, a 1 MiB allocation is carved from it (about 2 µs) and its free
 * unmaps nothing; else each allocation maps fresh memory and each free
 * unmaps it (about 40 and 60 µs on an H100, driver 580). run.py's C floor
 * and the cubind worker hold different allocations, so their to_gpu cells
 * can fall on either side of this; the bare call (worker.py bare_copies)
 * makes C's calls in a process holding the cubind worker's allocations. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_NAME "alloc_state"
#include "floor.h"

enum { ROUNDS = 300 };
static const size_t MIB = (size_t)1 << 20;

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_us(double *v) {
    qsort(v, ROUNDS, sizeof *v, by_value);
    return v[ROUNDS / 2] / 1000;
}

/* Medians of each of the three calls over ROUNDS allocate-copy-free rounds. */
static void measure(const char *state, const void *host) {
    static double alloc[ROUNDS], copy[ROUNDS], release[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        CUdeviceptr p;
        double t0 = now_ns();
        CHECK(cuMemAlloc(&p, MIB));
        double t1 = now_ns();
        CHECK(cuMemcpyHtoD(p, host, MIB));
        double t2 = now_ns();
        CHECK(cuMemFree(p));
        double t3 = now_ns();
        alloc[i] = t1 - t0, copy[i] = t2 - t1, release[i] = t3 - t2;
    }
    printf("| %s | %.1f µs | %.1f µs | %.1f µs |\n", state, median_us(alloc), median_us(copy),
           median_us(release));
}

int main(void) {
    CUdevice dev;
    CUcontext primary;
    CUdeviceptr big, small;
    void *host = malloc(MIB);
    if (!host) return 1;
    memset(host, 1, MIB);
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CHECK(cuCtxSetCurrent(primary));
    printf("| allocations live | cuMemAlloc 1 MiB | cuMemcpyHtoD 1 MiB (pageable) | cuMemFree |\n|---|---|---|---|\n");
    measure("none", host);
    CHECK(cuMemAlloc(&big, 256 * MIB));
    measure("256 MiB", host);
    CHECK(cuMemAlloc(&small, MIB));
    measure("256 MiB and 1 MiB", host);
    CHECK(cuMemFree(small));
    CHECK(cuMemFree(big));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(host);
    return 0;
}
