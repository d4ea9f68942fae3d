/* What a ready event costs a publishing thread while another thread copies
 * device memory, as UCX's CUDA IPC does on the graph's pump thread
 * (cubind/graph/model/ordering.pyx, cubind._core.current.default_stream_idle):
 * cuEventRecord and cuStreamQuery on the legacy default stream and on a
 * non-blocking one, alone and beside a thread that copies 16 MiB device to
 * device on a non-blocking stream (cuMemcpyDtoDAsync, cuEventRecord, then
 * cuEventQuery until done, in a loop). And whether the legacy stream's
 * query answers as an event recorded there would, with work queued on a
 * blocking stream, on a non-blocking one, and on the legacy stream itself.
 *
 *   cc -O2 -pthread -o legacy_record bench/legacy_record.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda
 *   ./legacy_record [CALLS]
 *
 * Prints one JSON line. On the H200 (driver 580), 200 000 calls each:
 * the legacy stream's record 0.29 us alone, 15.8 beside the copies; its
 * query 0.19 and 2.0; a non-blocking stream's record 0.17 and 0.29. With a
 * blocking stream busy both the legacy query and a legacy event said
 * CUDA_ERROR_NOT_READY (600); with a non-blocking one busy both said done. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x)                                                                                                  \
    do {                                                                                                       \
        CUresult r_ = (x);                                                                                     \
        if (r_ != CUDA_SUCCESS && r_ != CUDA_ERROR_NOT_READY) {                                                \
            fprintf(stderr, "%s: %d\n", #x, (int)r_);                                                          \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

enum { EVENTS = 64 };
static const size_t COPY = 16 << 20;
static CUcontext ctx;
static CUdeviceptr src, dst;
static volatile int stop;
static long copies;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* The copying thread: UCX's CUDA IPC steps, over and over. */
static void *copier(void *arg) {
    CUstream s;
    CUevent e;
    (void)arg;
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    while (!stop) {
        CK(cuMemcpyDtoDAsync(dst, src, COPY, s));
        CK(cuEventRecord(e, s));
        while (cuEventQuery(e) == CUDA_ERROR_NOT_READY && !stop)
            ;
        copies++;
    }
    return NULL;
}

/* us a call: cuEventRecord (or cuStreamQuery where query) on stream. */
static double timed(CUevent *events, CUstream stream, int query, long calls) {
    double t0 = now_ns();
    for (long i = 0; i < calls; i++)
        CK(query ? cuStreamQuery(stream) : cuEventRecord(events[i % EVENTS], stream));
    return (now_ns() - t0) / calls / 1e3;
}

static void costs(const char *label, long calls, CUevent *events, CUstream nonblocking, int last) {
    timed(events, 0, 0, calls / 10); /* warm */
    printf("\"%s\": {\"record_legacy_us\": %.3f, \"query_legacy_us\": %.3f, \"record_nonblocking_us\": %.3f, "
           "\"query_nonblocking_us\": %.3f}%s",
           label, timed(events, 0, 0, calls), timed(events, 0, 1, calls), timed(events, nonblocking, 0, calls),
           timed(events, nonblocking, 1, calls), last ? "" : ", ");
}

/* The legacy stream's query and a legacy event's, with 8 memsets of 1 GiB queued on stream. */
static void answers(const char *label, CUstream stream, CUdeviceptr big, size_t n, CUevent e) {
    CUresult query, event;
    CK(cuCtxSynchronize());
    for (int k = 0; k < 8; k++)
        CK(cuMemsetD8Async(big, (unsigned char)k, n, stream));
    query = cuStreamQuery(0);
    CK(cuEventRecord(e, 0));
    event = cuEventQuery(e);
    printf("\"%s\": {\"legacy_query\": %d, \"legacy_event\": %d}, ", label, (int)query, (int)event);
    CK(cuCtxSynchronize());
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    CUdevice dev;
    CUstream blocking, nonblocking;
    CUevent events[EVENTS], e;
    CUdeviceptr big;
    size_t n = (size_t)1 << 30;
    pthread_t thread;
    if (calls < 10) {
        fprintf(stderr, "legacy_record: CALLS: at least 10\n");
        return 2;
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
    CK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    for (int i = 0; i < EVENTS; i++)
        CK(cuEventCreate(&events[i], CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&big, n));
    CK(cuMemAlloc(&src, COPY));
    CK(cuMemAlloc(&dst, COPY));
    printf("{\"calls\": %ld, ", calls);
    answers("blocking_stream_busy", blocking, big, n, e);
    answers("nonblocking_stream_busy", nonblocking, big, n, e);
    answers("legacy_stream_busy", 0, big, n, e);
    costs("alone", calls, events, nonblocking, 0);
    stop = 0;
    pthread_create(&thread, NULL, copier, NULL);
    costs("beside_copies", calls, events, nonblocking, 1);
    stop = 1;
    pthread_join(thread, NULL);
    printf(", \"copies\": %ld}\n", copies);
    CK(cuCtxSynchronize());
    return 0;
}
