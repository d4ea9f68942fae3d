/* UCX's own floor for the two-process device rows of bench/graph_messages.py
 * (issue 35): messages of SIZE bytes of device memory (cuMemAlloc) sent one
 * way between two processes on one host with UCX's tag API in C, WINDOW
 * sends in flight, nothing else per message. What no binding of UCX, in any
 * language, can beat on this machine; the graph's rows are read against it.
 *
 *   ucx_floor recv PORT COUNT SIZE WINDOW      # prints one JSON line
 *   ucx_floor send HOST PORT COUNT SIZE WINDOW
 *
 * With FLOOR_HOST_MEMORY=1 in both processes the buffers are host memory
 * (malloc), which runs on a machine without a GPU (a check of the program).
 * With FLOOR_SENDER_EVENT=1 the sender records a CUDA event on the default
 * stream before each send and sends once it is complete, as a producer that
 * orders its sends after its GPU work does (cubind.graph's ready events): the
 * cost of the sender's own GPU work beside the receiver's copies.
 *
 * Build (the include and library folders of the libucx-cu13 wheel, CUDA's):
 *   cc -O2 -o ucx_floor bench/ucx_floor.c -I$UCX/include -L$UCX/lib \
 *      -Wl,-rpath,$UCX/lib -lucp -lucs -I$CUDA_HOME/include -ldl
 * (the driver is opened at run time, as cubind opens it: no link to libcuda).
 * The worker addresses are exchanged over one TCP connection (out of band, as
 * UCX's examples do); the data goes over whatever UCX picks (cuda_ipc here). */
#include <arpa/inet.h>
#include <cuda.h>
#include <dlfcn.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define FLOOR_NAME "ucx_floor"
#include "floor.h"

#define CHECK_UCS(call)                                                     \
    do {                                                                    \
        ucs_status_t s_ = (call);                                           \
        if (s_ != UCS_OK) {                                                 \
            fprintf(stderr, "%s failed: %s\n", #call, ucs_status_string(s_)); \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

/* The driver's entry points, by their ABI names (cuda.h maps the API names to these). */
static CUresult (*drv_init)(unsigned int);
static CUresult (*drv_device_get)(CUdevice *, int);
static CUresult (*drv_retain)(CUcontext *, CUdevice);
static CUresult (*drv_set_current)(CUcontext);
static CUresult (*drv_alloc)(CUdeviceptr *, size_t);
static CUresult (*drv_free)(CUdeviceptr);
static CUresult (*drv_release)(CUdevice);
static CUresult (*drv_event_create)(CUevent *, unsigned int);
static CUresult (*drv_event_record)(CUevent, CUstream);
static CUresult (*drv_event_query)(CUevent);

static void *entry(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (f == NULL) {
        fprintf(stderr, "libcuda.so.1 has no %s\n", name);
        exit(1);
    }
    return f;
}

static void open_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    drv_init = entry(lib, "cuInit");
    drv_device_get = entry(lib, "cuDeviceGet");
    drv_retain = entry(lib, "cuDevicePrimaryCtxRetain");
    drv_set_current = entry(lib, "cuCtxSetCurrent");
    drv_alloc = entry(lib, "cuMemAlloc_v2");
    drv_free = entry(lib, "cuMemFree_v2");
    drv_release = entry(lib, "cuDevicePrimaryCtxRelease_v2");
    drv_event_create = entry(lib, "cuEventCreate");
    drv_event_record = entry(lib, "cuEventRecord");
    drv_event_query = entry(lib, "cuEventQuery");
}

static void full_io(int fd, void *buf, size_t n, int out) {
    char *p = buf;
    while (n) {
        ssize_t k = out ? write(fd, p, n) : read(fd, p, n);
        if (k <= 0) {
            perror("out-of-band socket");
            exit(1);
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Bound before UCX starts: its TCP interfaces bind ports of their own, and
 * one may take this one if it is free then. */
static int oob_listen(int port) {
    int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = INADDR_ANY};
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 1)) {
        perror("listen");
        exit(1);
    }
    return s;
}

static int oob_accept(int s) {
    int c = accept(s, NULL, NULL);
    close(s);
    return c;
}

static int oob_connect(const char *host, int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    for (int tries = 0; tries < 200; ++tries) { /* the receiver may not listen yet */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) return s;
        close(s);
        usleep(50000);
    }
    perror("connect");
    exit(1);
}

/* Waits for a request (or an immediate status) while progressing the worker. */
static void wait_done(ucp_worker_h w, void *req) {
    if (req == NULL) return;
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "request failed: %s\n", ucs_status_string(UCS_PTR_STATUS(req)));
        exit(1);
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(w);
    CHECK_UCS(ucp_request_check_status(req));
    ucp_request_free(req);
}

int main(int argc, char **argv) {
    int sender = argc == 7 && !strcmp(argv[1], "send");
    if (!sender && !(argc == 6 && !strcmp(argv[1], "recv"))) {
        fprintf(stderr, "usage: ucx_floor recv PORT COUNT SIZE WINDOW | send HOST PORT COUNT SIZE WINDOW\n");
        return 2;
    }
    int port = atoi(argv[sender ? 3 : 2]);
    long count = atol(argv[sender ? 4 : 3]);
    size_t size = (size_t)atol(argv[sender ? 5 : 4]);
    int window = atoi(argv[sender ? 6 : 5]);
    int host = getenv("FLOOR_HOST_MEMORY") != NULL;
    int sender_event = !host && getenv("FLOOR_SENDER_EVENT") != NULL;
    int listener = sender ? -1 : oob_listen(port);
    CUevent ready = NULL;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr mem;
    if (host) {
        mem = (CUdeviceptr)malloc(size * window);
    } else {
        open_driver();
        CHECK(drv_init(0));
        CHECK(drv_device_get(&dev, 0));
        CHECK(drv_retain(&ctx, dev));
        CHECK(drv_set_current(ctx));
        CHECK(drv_alloc(&mem, size * window));
        if (sender_event) CHECK(drv_event_create(&ready, CU_EVENT_DISABLE_TIMING));
    }

    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG};
    ucp_worker_params_t wparams = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                   .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_context_h context;
    ucp_worker_h worker;
    CHECK_UCS(ucp_init(&params, NULL, &context));
    CHECK_UCS(ucp_worker_create(context, &wparams, &worker));
    ucp_request_param_t op = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE,
                              .memory_type = host ? UCS_MEMORY_TYPE_HOST : UCS_MEMORY_TYPE_CUDA};
    void **inflight = calloc(window, sizeof *inflight);
    char done = 0;

    if (!sender) {
        int fd = oob_accept(listener);
        ucp_address_t *address;
        size_t length;
        CHECK_UCS(ucp_worker_get_address(worker, &address, &length));
        full_io(fd, &length, sizeof length, 1);
        full_io(fd, address, length, 1);
        ucp_worker_release_address(worker, address);
        double first = 0;
        for (long i = 0; i < count + window; ++i) {
            int slot = (int)(i % window);
            if (i >= window) { /* the oldest receive: wait for it, then reuse its buffer */
                wait_done(worker, inflight[slot]);
                if (i == window) first = now_s();
            }
            if (i < count)
                inflight[slot] = ucp_tag_recv_nbx(worker, (void *)(mem + slot * size), size, (ucp_tag_t)i,
                                                  (ucp_tag_t)-1, &op);
        }
        double elapsed = now_s() - first;
        full_io(fd, &done, 1, 1); /* the sender may now close */
        printf("{\"row\": \"UCX tag API in C, two processes\", \"bytes\": %zu, \"window\": %d, "
               "\"messages\": %ld, \"messages_per_s\": %.1f, \"bytes_per_s\": %.4g}\n",
               size, window, count, (count - 1) / elapsed, (count - 1) * (double)size / elapsed);
        close(fd);
    } else {
        int fd = oob_connect(argv[2], port);
        size_t length;
        full_io(fd, &length, sizeof length, 0);
        ucp_address_t *address = malloc(length);
        full_io(fd, address, length, 0);
        ucp_ep_params_t eparams = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = address};
        ucp_ep_h ep;
        CHECK_UCS(ucp_ep_create(worker, &eparams, &ep));
        for (long i = 0; i < count + window; ++i) {
            int slot = (int)(i % window);
            if (i >= window) wait_done(worker, inflight[slot]);
            if (i < count && sender_event) { /* the producer's work ordered first; waited for while progressing */
                CHECK(drv_event_record(ready, NULL));
                while (drv_event_query(ready) == CUDA_ERROR_NOT_READY) ucp_worker_progress(worker);
            }
            if (i < count)
                inflight[slot] = ucp_tag_send_nbx(ep, (void *)(mem + slot * size), size, (ucp_tag_t)i, &op);
        }
        full_io(fd, &done, 1, 0);
        ucp_request_param_t closing = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
        void *req = ucp_ep_close_nbx(ep, &closing);
        if (req != NULL && !UCS_PTR_IS_ERR(req)) wait_done(worker, req);
        free(address);
        close(fd);
    }
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
    if (host) {
        free((void *)mem);
    } else {
        CHECK(drv_free(mem));
        CHECK(drv_release(dev));
    }
    return 0;
}
