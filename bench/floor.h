/* What bench/'s C floors share: a driver call checked (the program's name
 * and the failing call on stderr, exit 1) and the monotonic clock. Each
 * program defines FLOOR_NAME before including this. */
#ifndef CUBIND_BENCH_FLOOR_H
#define CUBIND_BENCH_FLOOR_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef FLOOR_NAME
#error "define FLOOR_NAME (the program's name, for its error messages) before including floor.h"
#endif

#define CHECK(call)                                                              \
    do {                                                                         \
        CUresult err_ = (call);                                                  \
        if (err_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, FLOOR_NAME ": %s failed: %d\n", #call, (int)err_);   \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static inline double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline double now_s(void) {
    return now_ns() * 1e-9;
}

#endif
