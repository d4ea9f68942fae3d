/* A stand-in for libcudart.so.13 on machines without a GPU: the few runtime
 * calls bench/run.py times, each succeeding at once. The real runtime needs a
 * real driver underneath (it reads the driver's private export tables), so
 * with the fake libcuda it could not start; bench/run.py --smoke pairs the two
 * fakes. Numbers taken with it say nothing about the real runtime. */
#include <stddef.h>

typedef struct { unsigned int x, y, z; } dim3;

int cudaGetDevice(int *device) {
    *device = 0;
    return 0;
}

int cudaStreamQuery(void *stream) {
    (void)stream;
    return 0;
}

int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared, void *stream) {
    (void)func, (void)grid, (void)block, (void)args, (void)shared, (void)stream;
    return 0;
}
