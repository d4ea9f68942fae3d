/* A stand-in for libcuda.so.1 on machines without a GPU.
 *
 * Every function succeeds and does nothing, except that the fake records what
 * the binding handed it, for tests to read back through ctypes:
 *   - each cuGetProcAddress_v2 request (symbol, version, flags), so tests can
 *     check the ABI version and the per-thread default stream opt-in;
 *   - the kernelParams of the last cuLaunchKernel: fake_record_args values of
 *     8 bytes each, read through the pointers the binding packed;
 *   - the function of the last launch or cuOccupancyMaxPotentialBlockSize
 *     (fake_last_function), so tests see what a CUkernel passed as; the
 *     grid and block of the last cuLaunchKernelEx (fake_last_dims);
 *   - the count of asynchronous copies run (fake_copy_count), and the last
 *     one's destination, source and size (fake_last_copy);
 *   - with FAKE_CALL_LOG=path, one line per call that makes or releases
 *     something (memory, streams, events, libraries, primary contexts), in
 *     order, appended at once so that calls made at interpreter exit are in it.
 * Contexts, memory, streams, events and libraries get distinct fake handles.
 * FAKE_FAULT_ON_LAUNCH=1 makes the first launch poison the context as a kernel
 * writing to an illegal address would: every later call fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS (700) until cuDevicePrimaryCtxReset.
 * CUDA graphs (for cubind.compute's tests): graphs, nodes and executable
 * graphs get fake handles; every node added is kept in fake_nodes (its kind,
 * dependencies, and for a kernel node its grid, block and first
 * fake_record_args arguments; for a copy its ends and size), instantiations,
 * graph launches and kernel-node updates are counted, and graph and pinned
 * host memory creation and release are logged like the rest. Pinned host
 * memory is real (malloc), so a program may read and write it;
 * cuGraphAddNode points a conditional node's phGraph_out at body graphs;
 * cuLaunchHostFunc calls its function at once; fake_event_pending, set
 * through ctypes, makes that many cuEventQuery calls answer "not ready".
 * Stream capture (cuStreamBeginCapture .. cuStreamEndCapture, one stream at a
 * time): launches, async copies and memsets, stream-ordered allocations and
 * frees and host functions on the capturing stream become nodes of the
 * capture's graph (each after the one before) instead of running; the calls
 * capture forbids (cuMemAlloc, cuStreamSynchronize, cuCtxSynchronize,
 * cuStreamQuery and the synchronous copies; on the capturing thread in the
 * default thread-local mode, on every thread in global mode, none relaxed)
 * answer CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and a wait of the capturing
 * stream for an event recorded outside the capture
 * CUDA_ERROR_STREAM_CAPTURE_ISOLATION; each invalidates the capture,
 * whose cuStreamEndCapture then answers CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
 * with no graph, as the driver does; cuGraphNodeGetType reads the node table.
 * FAKE_COMPUTE_CAPABILITY=90 makes device 0 answer its attributes and name as
 * a GPU of that compute capability (unset, they are left unwritten);
 * cuMemAllocHost is real host memory, as cuMemHostAlloc.
 * FAKE_STREAMS_BUSY=1 makes cuStreamQuery answer CUDA_ERROR_NOT_READY for
 * every stream (work still queued), as a stream the GPU has not caught up with.
 * FAKE_DRIVER_VERSION (default 13000) is what cuDriverGetVersion says;
 * cuGetProcAddress refuses a newer version with CUDA_ERROR_INVALID_VALUE, as
 * the real driver does.
 * The EGL interop refuses a NULL image, stream or sync as a driver without an
 * EGL display does, and maps a registered resource to a fixed frame.
 * bench/run.py --smoke also uses it to run the benchmark harness end to end in
 * CI; numbers taken with it say nothing about a real driver. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulated.h"

typedef unsigned long long cuuint64_t;

#define FAKE_MAX_REQUESTS 4096
#define FAKE_MAX_ARGS 512

struct fake_request {
    char symbol[64];
    int version;
    cuuint64_t flags;
    int rc;
};

struct fake_request fake_requests[FAKE_MAX_REQUESTS];
int fake_request_count = 0;

int fake_record_args = 0;
unsigned long long fake_args[FAKE_MAX_ARGS];
int fake_launch_count = 0;
unsigned long long fake_last_stream = 0; /* the stream of the last cuLaunchKernel[Ex] */
/* The function (or kernel cast to one) of the last launch or occupancy query. */
unsigned long long fake_last_function = 0;

int fake_sticky = 0; /* shared with the emulated GPU's files (emulated.h) */
/* The current context is per thread, as the real driver's is. */
static __thread void *fake_current = NULL;
static __thread void *fake_stack[64];
static __thread int fake_depth = 0;
static unsigned long long fake_next_handle = 0x10000;

static void fake_log(const char *name, unsigned long long arg) {
    const char *path = getenv("FAKE_CALL_LOG");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s 0x%llx\n", name, arg);
    fclose(f);
}

/* Threads call in at once (a binding lets the GIL go around each call): a
   handle is taken in one atomic step, or two streams made at the same
   instant got one handle, and the second's destroy was refused as dead. */
static unsigned long long fake_new(const char *name, unsigned long long size) {
    unsigned long long step = ((size + 0xffff) & ~0xffffULL) + (size == 0 ? 0x10000 : 0);
    unsigned long long h = __atomic_fetch_add(&fake_next_handle, step, __ATOMIC_SEQ_CST);
    fake_log(name, h);
    return h;
}

/* With FAKE_FAILED_LOG=path, one line per call answered with an error (not
 * CUDA_ERROR_NOT_READY, which a query answers in the normal course), appended
 * at once: tests/conftest.py fails a test whose calls failed unless it is
 * marked provokes_api_error, as compute-sanitizer reports each on a GPU. */
int fake_fail(const char *func, int rc) {
    const char *path = getenv("FAKE_FAILED_LOG");
    if (path && rc != 0 && rc != 600) {
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%s %d\n", strncmp(func, "f_", 2) == 0 ? func + 2 : func, rc);
            fclose(f);
        }
    }
    return rc;
}
/* Stream capture (below, with the graphs): whether a call on ``stream`` is
 * recorded into the capture instead of running, and the refusal of a call
 * capture forbids. */
static int fake_captured_launch(void *stream, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, void *f, void **params);
static int fake_captured(void *stream, int kind, const char *name);

/* Streams destroyed so far (handles are never reused here): a call given one
 * is answered CUDA_ERROR_INVALID_HANDLE, where a real driver's behaviour is
 * undefined (a crash inside it, seen on a GPU). */
#define FAKE_DEAD_MAX 65536
static unsigned long long fake_dead_streams[FAKE_DEAD_MAX];
static int fake_dead_count = 0;
static int fake_stream_dead(void *s) {
    int n = __atomic_load_n(&fake_dead_count, __ATOMIC_SEQ_CST);
    if (n > FAKE_DEAD_MAX) n = FAKE_DEAD_MAX;
    for (int i = 0; i < n; i++)
        if (fake_dead_streams[i] == (unsigned long long)s) return 1;
    return 0;
}
static int fake_capture_forbids(const char *func);

static int fake_success(void) { return fake_fail("a function the fake answers generically", fake_sticky); }
static int fake_ok(void) { return 0; }
static int fake_driver_version(void) {
    const char *v = getenv("FAKE_DRIVER_VERSION");
    return v ? atoi(v) : 13000;
}
static int f_cuDriverGetVersion(int *v) { *v = fake_driver_version(); return 0; }
static int f_cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return fake_fail(__func__, 101); *d = 0; return 0; }
static int f_cuDeviceGetCount(int *c) {
    const char *n = getenv("FAKE_DEVICE_COUNT"); /* default 0: "no GPU" for the tests that want that */
    *c = n ? atoi(n) : 0;
    return 0;
}
static int f_cuGetErrorString(int e, const char **s) { (void)e; *s = "fake error"; return 0; }
static int f_cuCtxGetCurrent(void **ctx) { *ctx = fake_current; return 0; }
static int f_cuCtxSetCurrent(void *ctx) { fake_current = ctx; return 0; }
static int f_cuCtxGetDevice(int *d) { if (!fake_current) return fake_fail(__func__, 201); *d = 0; return fake_fail(__func__, fake_sticky); }
static int f_cuCtxPushCurrent(void *ctx) {
    int rc = emu_call("cuCtxPushCurrent", 1, (emu_u64)ctx);
    if (rc) return fake_fail(__func__, rc);
    if (fake_depth < 64) fake_stack[fake_depth++] = fake_current;
    fake_current = ctx;
    return 0;
}
static int f_cuCtxPopCurrent(void **ctx) {
    int rc = emu_call("cuCtxPopCurrent", 0);
    if (rc) return fake_fail(__func__, rc);
    if (ctx) *ctx = fake_current;
    fake_current = fake_depth ? fake_stack[--fake_depth] : NULL;
    return 0;
}
static int f_cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)(0xC000ULL + dev); fake_log("cuDevicePrimaryCtxRetain", dev); return 0; }
static int f_cuDevicePrimaryCtxRelease(int dev) { fake_log("cuDevicePrimaryCtxRelease", dev); return 0; }
static int f_cuDevicePrimaryCtxReset(int dev) { fake_log("cuDevicePrimaryCtxReset", dev); fake_sticky = 0; return 0; }
/* Device memory is the emulated GPU's (emulated_memory.c): host memory, checked. */
static int fake_alloc(const char *func, unsigned long long *p, size_t n) {
    int rc = emu_alloc(p, n, 0);
    if (rc) return fake_fail(func, rc);
    fake_log("cuMemAlloc", *p);
    return 0;
}
static int fake_free(const char *func, unsigned long long p) {
    if (fake_sticky) return fake_fail(func, fake_sticky);
    fake_log("cuMemFree", p);
    return emu_free(func, p, 0);
}
/* Stream-ordered memory handed out again: with fake_pool_reuse set, a
 * stream-ordered free keeps its block for the next stream-ordered allocation
 * of its size (the newest first), as the driver's pool does; otherwise freed
 * blocks are held back a while, so that a use after a free is caught. */
int fake_pool_reuse = 0;
static int fake_pool_alloc(const char *func, unsigned long long *p, size_t n) {
    if (fake_pool_reuse && emu_pool_take(p, n)) {
        fake_log("cuMemAlloc", *p);
        return 0;
    }
    return fake_alloc(func, p, n);
}
static int f_cuMemAlloc(unsigned long long *p, size_t n) {
    int rc = emu_call("cuMemAlloc", 1, (emu_u64)n);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    if (fake_capture_forbids(__func__)) return fake_fail(__func__, 900);
    return fake_alloc("cuMemAlloc", p, n);
}
static int f_cuMemAllocAsync(unsigned long long *p, size_t n, void *s) {
    int rc;
    if (fake_stream_dead(s)) return fake_fail(__func__, 400);
    if (fake_captured(s, 5, "cuMemAllocAsync node")) { /* FAKE_NODE_MEM_ALLOC: the graph's own memory */
        if ((rc = emu_alloc(p, n, 0))) return fake_fail(__func__, rc); /* real, so that a later free finds it */
        fake_log("cuMemAllocAsync (captured)", *p);
        return 0;
    }
    rc = emu_call("cuMemAllocAsync", 2, (emu_u64)n, (emu_u64)s);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    return fake_pool_alloc("cuMemAllocAsync", p, n);
}
/* A pool the tests name: any handle is taken (the emulated memory has one heap). */
static int f_cuMemAllocFromPoolAsync(unsigned long long *p, size_t n, void *pool, void *s) {
    int rc;
    if (fake_stream_dead(s)) return fake_fail(__func__, 400);
    if (!pool) return fake_fail(__func__, 1);
    if (fake_captured(s, 5, "cuMemAllocFromPoolAsync node")) {
        if ((rc = emu_alloc(p, n, 0))) return fake_fail(__func__, rc);
        fake_log("cuMemAllocAsync (captured)", *p);
        return 0;
    }
    rc = emu_call("cuMemAllocFromPoolAsync", 3, (emu_u64)n, (emu_u64)pool, (emu_u64)s);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    return fake_pool_alloc("cuMemAllocFromPoolAsync", p, n);
}
static int f_cuMemFree(unsigned long long p) {
    int rc = emu_call("cuMemFree", 1, p);
    return rc ? fake_fail(__func__, rc) : fake_free("cuMemFree", p);
}
static int f_cuMemFreeAsync(unsigned long long p, void *s) {
    int rc;
    if (fake_stream_dead(s)) return fake_fail(__func__, 400); /* a real driver may crash here */
    if (fake_captured(s, 6, "cuMemFreeAsync node")) return 0; /* FAKE_NODE_MEM_FREE */
    rc = emu_call("cuMemFreeAsync", 2, p, (emu_u64)s);
    if (rc) return fake_fail(__func__, rc);
    if (!fake_pool_reuse) return fake_free("cuMemFreeAsync", p);
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_log("cuMemFree", p);
    return emu_pool_put("cuMemFreeAsync", p);
}
/* A new context is current in the creating thread, as the real driver's is. */
static int f_cuCtxCreate(void **ctx, void *params, unsigned flags, int dev) {
    (void)params; (void)flags; (void)dev;
    *ctx = (void *)fake_new("cuCtxCreate", 0);
    fake_current = *ctx;
    return 0;
}
static int f_cuCtxDestroy(void *ctx) {
    if (fake_current == ctx) fake_current = NULL;
    fake_log("cuCtxDestroy", (unsigned long long)ctx);
    return 0;
}
int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev) { return f_cuCtxCreate(ctx, params, flags, dev); }
int cuCtxDestroy_v2(void *ctx) { return f_cuCtxDestroy(ctx); }
/* Synchronous copies need a current context, as the real driver's do: a
 * thread that never made one current gets CUDA_ERROR_INVALID_CONTEXT. */
/* Ends: 1 device memory, 0 host memory, 2 either (emu_copy). */
#define FAKE_COPY(NAME, DST_T, SRC_T, TO, FROM)                                                          \
    static int f_##NAME(DST_T dst, SRC_T src, size_t n) {                                              \
        int rc = emu_call(#NAME, 3, (emu_u64)dst, (emu_u64)src, (emu_u64)n);                           \
        if (rc) return fake_fail(#NAME, rc);                                                           \
        if (!fake_current) return fake_fail(#NAME, 201);                                               \
        if (fake_capture_forbids(#NAME)) return fake_fail(#NAME, 900); /* synchronous: not in a capture */ \
        if (fake_sticky) return fake_fail(#NAME, fake_sticky);                                         \
        return emu_copy(#NAME, (emu_u64)dst, TO, (emu_u64)src, FROM, n);                               \
    }
FAKE_COPY(cuMemcpyHtoD, unsigned long long, const void *, 1, 0)
FAKE_COPY(cuMemcpyDtoH, void *, unsigned long long, 0, 1)
FAKE_COPY(cuMemcpyDtoD, unsigned long long, unsigned long long, 1, 1)
FAKE_COPY(cuMemcpy, unsigned long long, unsigned long long, 2, 2)
static int f_cuStreamCreateWithPriority(void **s, unsigned flags, int prio) {
    (void)flags; (void)prio;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    *s = (void *)fake_new("cuStreamCreate", 0);
    return 0;
}
static int f_cuStreamDestroy(void *s) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if (fake_stream_dead(s)) return fake_fail(__func__, 400);
    fake_log("cuStreamDestroy", (unsigned long long)s);
    /* A slot of its own, taken atomically (destroys come from several threads at once). */
    int slot = __atomic_fetch_add(&fake_dead_count, 1, __ATOMIC_SEQ_CST);
    if (slot < FAKE_DEAD_MAX) __atomic_store_n(&fake_dead_streams[slot], (unsigned long long)s, __ATOMIC_SEQ_CST);
    return 0;
}
/* Events are the emulated GPU's too (emulated_events.c): used or destroyed
   after their destruction, they are refused. */
static int f_cuEventCreate(void **e, unsigned flags) {
    int rc = emu_call("cuEventCreate", 1, (emu_u64)flags);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    *e = (void *)fake_new("cuEventCreate", 0);
    emu_event_made((emu_u64)*e);
    return 0;
}
static int f_cuEventDestroy(void *e) {
    int rc = emu_call("cuEventDestroy", 1, (emu_u64)e);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    fake_log("cuEventDestroy", (unsigned long long)e);
    return emu_event_destroy((emu_u64)e);
}
static int f_cuLibraryLoadData(void **lib) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    *lib = (void *)fake_new("cuLibraryLoadData", 0);
    return 0;
}
static int f_cuLibraryUnload(void *lib) { fake_log("cuLibraryUnload", (unsigned long long)lib); return 0; }
/* Kernels by name: cubind.Array's own are run by the emulated GPU (emulated_kernels.c). */
static int f_cuLibraryGetKernel(void **k, void *lib, const char *name) { (void)lib; *k = (void *)emu_kernel_handle(name); return fake_fail(__func__, fake_sticky); }
static int f_cuModuleGetFunction(void **f, void *mod, const char *name) { (void)mod; *f = (void *)emu_kernel_handle(name); return fake_fail(__func__, fake_sticky); }

static int fake_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void *stream, void **params, void **extra) {
    (void)shared; (void)extra;
    if (fake_captured_launch(stream, gx, gy, gz, bx, by, bz, f, params)) return 0;
    fake_launch_count++;
    fake_last_function = (unsigned long long)f;
    fake_last_stream = (unsigned long long)stream;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    static int faulted = 0;
    if (getenv("FAKE_FAULT_ON_LAUNCH") && !faulted++) fake_sticky = 700;
    for (int i = 0; i < fake_record_args && i < FAKE_MAX_ARGS; i++) memcpy(&fake_args[i], params[i], 8);
    int rc = 0;
    if (emu_launch((emu_u64)f, params, (emu_u64)stream, &rc)) return rc;
    return 0;
}

/* CUlaunchConfig: seven unsigned ints of dimensions and shared bytes, then hStream at offset 32.
   The grid and block of the last cuLaunchKernelEx are kept (fake_last_dims). */
unsigned fake_last_dims[6];
static int fake_launch_ex(const void *config, void *f, void **params, void **extra) {
    void *stream;
    memcpy(&stream, (const char *)config + 32, sizeof stream);
    memcpy(fake_last_dims, config, sizeof fake_last_dims);
    return fake_launch(f, 0, 0, 0, 0, 0, 0, 0, stream, params, extra);
}


/* -- CUDA graphs ------------------------------------------------------------ */

#define FAKE_MAX_NODES 4096
#define FAKE_MAX_DEPS 16
#define FAKE_NODE_ARGS 8

enum { FAKE_NODE_KERNEL = 1, FAKE_NODE_MEMCPY = 2, FAKE_NODE_EMPTY = 3, FAKE_NODE_MEMSET = 4 };

struct fake_node {
    unsigned long long handle, graph;
    int kind, ndeps;
    unsigned long long deps[FAKE_MAX_DEPS];
    unsigned grid[3], block[3];         /* kernel nodes */
    unsigned long long args[FAKE_NODE_ARGS];
    unsigned long long func, kern;
    int src_type, dst_type;             /* memcpy nodes: CUmemorytype of each end */
    unsigned long long src, dst, bytes;
};

/* CUDA_KERNEL_NODE_PARAMS_v2 as cuda.h lays it out. */
struct fake_kernel_params {
    unsigned long long func;
    unsigned grid[3], block[3], shared;
    void **params;
    void **extra;
    unsigned long long kern, ctx;
};

/* CUDA_MEMCPY3D: only the fields a 1-D copy sets are named. */
struct fake_memcpy3d {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    unsigned long long srcDevice;
    void *srcArray, *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    unsigned long long dstDevice;
    void *dstArray, *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
};

struct fake_node fake_nodes[FAKE_MAX_NODES];
int fake_node_count = 0;
int fake_instantiate_count = 0;
int fake_graph_launch_count = 0;
int fake_exec_update_count = 0;          /* cuGraphExecKernelNodeSetParams */
unsigned long long fake_update_node = 0; /* the node of the last update, and its arguments */
unsigned long long fake_update_args[FAKE_NODE_ARGS];
int fake_stream_wait_count = 0;
unsigned long long fake_last_wait_stream = 0, fake_last_wait_event = 0;
int fake_host_func_count = 0;
int fake_event_pending = 0; /* while above 0, cuEventQuery says CUDA_ERROR_NOT_READY (and counts it down) */

static struct fake_node *fake_add_node(unsigned long long *out, void *graph, const unsigned long long *deps,
                                       size_t n, int kind, const char *name) {
    struct fake_node *node = fake_node_count < FAKE_MAX_NODES ? &fake_nodes[fake_node_count++] : NULL;
    *out = fake_new(name, 0);
    if (!node) return NULL;
    memset(node, 0, sizeof *node);
    node->handle = *out;
    node->graph = (unsigned long long)graph;
    node->kind = kind;
    node->ndeps = (int)n;
    for (size_t i = 0; i < n && i < FAKE_MAX_DEPS; i++) node->deps[i] = deps[i];
    return node;
}

static void fake_copy_args(unsigned long long *dst, void **params) {
    for (int i = 0; i < fake_record_args && i < FAKE_NODE_ARGS; i++) memcpy(&dst[i], params[i], 8);
}

static int f_cuGraphCreate(void **g, unsigned flags) {
    (void)flags;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    *g = (void *)fake_new("cuGraphCreate", 0);
    return 0;
}
static int f_cuGraphDestroy(void *g) { fake_log("cuGraphDestroy", (unsigned long long)g); return fake_fail(__func__, fake_sticky); }
static int f_cuGraphAddKernelNode(unsigned long long *out, void *g, const unsigned long long *deps, size_t n,
                                  const struct fake_kernel_params *p) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    struct fake_node *node = fake_add_node(out, g, deps, n, FAKE_NODE_KERNEL, "cuGraphAddKernelNode");
    if (node) {
        memcpy(node->grid, p->grid, sizeof node->grid);
        memcpy(node->block, p->block, sizeof node->block);
        node->func = p->func;
        node->kern = p->kern;
        fake_copy_args(node->args, p->params);
    }
    return 0;
}
static int f_cuGraphAddMemcpyNode(unsigned long long *out, void *g, const unsigned long long *deps, size_t n,
                                  const struct fake_memcpy3d *c, void *ctx) {
    (void)ctx;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    struct fake_node *node = fake_add_node(out, g, deps, n, FAKE_NODE_MEMCPY, "cuGraphAddMemcpyNode");
    if (node) {
        node->src_type = c->srcMemoryType;
        node->dst_type = c->dstMemoryType;
        node->src = c->srcMemoryType == 1 ? (unsigned long long)c->srcHost : c->srcDevice;
        node->dst = c->dstMemoryType == 1 ? (unsigned long long)c->dstHost : c->dstDevice;
        node->bytes = c->WidthInBytes;
    }
    return 0;
}
/* A child graph node: src records the child graph. */
static int f_cuGraphAddChildGraphNode(unsigned long long *out, void *g, const unsigned long long *deps, size_t n,
                                      void *child) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    struct fake_node *node = fake_add_node(out, g, deps, n, 8, "cuGraphAddChildGraphNode"); /* FAKE_NODE_GRAPH */
    if (node) node->src = (unsigned long long)child;
    return 0;
}
/* Memcpy node updates: the executable's (counted, the last one's node and
 * addresses kept; fake_refuse_copy_update makes the driver answer
 * CUDA_ERROR_INVALID_VALUE, as it does for another kind of allocation) and
 * the graph's own node (its table entry rewritten). */
int fake_exec_copy_update_count = 0, fake_refuse_copy_update = 0;
unsigned long long fake_copy_update_node = 0, fake_copy_update_src = 0, fake_copy_update_dst = 0;
static int f_cuGraphExecMemcpyNodeSetParams(void *exec, unsigned long long node, const struct fake_memcpy3d *c,
                                            void *ctx) {
    (void)exec; (void)ctx;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if (fake_refuse_copy_update) return fake_fail(__func__, 1);
    fake_exec_copy_update_count++;
    fake_copy_update_node = node;
    fake_copy_update_src = c->srcDevice;
    fake_copy_update_dst = c->dstDevice;
    return 0;
}
static int f_cuGraphMemcpyNodeSetParams(unsigned long long handle, const struct fake_memcpy3d *c) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    for (int i = 0; i < fake_node_count; i++)
        if (fake_nodes[i].handle == handle) {
            fake_nodes[i].src = c->srcMemoryType == 1 ? (unsigned long long)c->srcHost : c->srcDevice;
            fake_nodes[i].dst = c->dstMemoryType == 1 ? (unsigned long long)c->dstHost : c->dstDevice;
        }
    return 0;
}
static int f_cuGraphAddEmptyNode(unsigned long long *out, void *g, const unsigned long long *deps, size_t n) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_add_node(out, g, deps, n, FAKE_NODE_EMPTY, "cuGraphAddEmptyNode");
    return 0;
}
/* CUDA_MEMSET_NODE_PARAMS: dst, pitch, value, elementSize, width, height. The
 * node records dst, the value (as src) and width * elementSize (as bytes). */
struct fake_memset_params { unsigned long long dst; size_t pitch; unsigned value, element_size; size_t width, height; };
static int f_cuGraphAddMemsetNode(unsigned long long *out, void *g, const unsigned long long *deps, size_t n,
                                  const struct fake_memset_params *p, void *ctx) {
    (void)ctx;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    struct fake_node *node = fake_add_node(out, g, deps, n, FAKE_NODE_MEMSET, "cuGraphAddMemsetNode");
    if (node) {
        node->dst = p->dst;
        node->src = p->value;
        node->bytes = (unsigned long long)p->width * p->element_size;
    }
    return 0;
}
/* cuGraphAddNode (the _v2 prototype, with edge data): a conditional node
 * (CUgraphNodeParams.type 13) gets `size` body graphs in an array its
 * CUDA_CONDITIONAL_NODE_PARAMS.phGraph_out is set to, as the driver does. The
 * union starts at byte 16; in it, size is at 12 and phGraph_out at 16. */
static int f_cuGraphAddNode(unsigned long long *out, void *g, const unsigned long long *deps, const void *edges,
                            size_t n, unsigned char *params) {
    (void)edges;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_add_node(out, g, deps, n, FAKE_NODE_EMPTY, "cuGraphAddNode");
    int type;
    memcpy(&type, params, sizeof type);
    if (type == 13) {
        unsigned size;
        memcpy(&size, params + 16 + 12, sizeof size);
        /* The driver points phGraph_out at an array it owns, living as long as the node. */
        unsigned long long *bodies = calloc(size ? size : 1, sizeof *bodies);
        if (!bodies) return fake_fail(__func__, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
        for (unsigned i = 0; i < size; i++) bodies[i] = fake_new("cuGraphAddNode body graph", 0);
        memcpy(params + 16 + 16, &bodies, sizeof bodies);
    }
    return 0;
}
/* Before 12.3 the function had no edgeData: a 12.x build asks for that ABI
   (cuGetProcAddress at version 12020), and the driver gives this one. */
static int f_cuGraphAddNode_v12000(unsigned long long *out, void *g, const unsigned long long *deps, size_t n,
                                   unsigned char *params) {
    return f_cuGraphAddNode(out, g, deps, NULL, n, params);
}
/* Each executable graph's instantiation flags, for cuGraphExecGetFlags. */
#define FAKE_MAX_EXECS 4096
static struct { unsigned long long exec, flags; } fake_execs[FAKE_MAX_EXECS];
static int fake_exec_count = 0;
static pthread_mutex_t fake_exec_lock = PTHREAD_MUTEX_INITIALIZER;
static int f_cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags) {
    (void)g;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_instantiate_count++;
    *exec = (void *)fake_new("cuGraphInstantiate", 0);
    pthread_mutex_lock(&fake_exec_lock);
    fake_execs[fake_exec_count++ % FAKE_MAX_EXECS].exec = (unsigned long long)*exec;
    fake_execs[(fake_exec_count - 1) % FAKE_MAX_EXECS].flags = flags;
    pthread_mutex_unlock(&fake_exec_lock);
    return 0;
}
/* What cuGetProcAddress("cuGraphInstantiate") gives at any version: the
   driver's only ABIs under that name are 10.0's and 11.0's, with an error node
   and a log buffer instead of flags (cuda.h renames the 12.x call to
   cuGraphInstantiateWithFlags). A binding calling it with (exec, graph,
   flags) loses its flags and hands the driver a garbage log buffer; this one
   instantiates without flags, as the driver does, and writes the log buffer
   only where its size is said, as the driver may. */
int fake_legacy_instantiate_count = 0;
static int f_cuGraphInstantiate_v11000(void **exec, void *g, unsigned long long *error_node, char *log,
                                       size_t log_size) {
    (void)error_node;
    fake_legacy_instantiate_count++;
    if (log && log_size) log[0] = 0;
    return f_cuGraphInstantiateWithFlags(exec, g, 0);
}
static int f_cuGraphExecGetFlags(void *exec, unsigned long long *flags) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    pthread_mutex_lock(&fake_exec_lock);
    for (int i = 0; i < fake_exec_count && i < FAKE_MAX_EXECS; i++)
        if (fake_execs[i].exec == (unsigned long long)exec) *flags = fake_execs[i].flags;
    pthread_mutex_unlock(&fake_exec_lock);
    return 0;
}
static int f_cuGraphExecDestroy(void *exec) { fake_log("cuGraphExecDestroy", (unsigned long long)exec); return fake_fail(__func__, fake_sticky); }
static int f_cuGraphLaunch(void *exec, void *stream) {
    (void)exec;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_graph_launch_count++;
    fake_last_stream = (unsigned long long)stream;
    return 0;
}
static int f_cuGraphExecKernelNodeSetParams(void *exec, unsigned long long node, const struct fake_kernel_params *p) {
    (void)exec;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    fake_exec_update_count++;
    fake_update_node = node;
    fake_copy_args(fake_update_args, p->params);
    return 0;
}
/* cuGraphGetNodes: the graph's nodes in the order added, as many as the
 * capacity holds (the rest NULL), and their count. */
static int f_cuGraphGetNodes(void *g, unsigned long long *nodes, size_t *count) {
    size_t n = 0;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if (!count) return fake_fail(__func__, 1);
    for (int i = 0; i < fake_node_count; i++) {
        if (fake_nodes[i].graph != (unsigned long long)g) continue;
        if (nodes && n < *count) nodes[n] = fake_nodes[i].handle;
        n++;
    }
    for (size_t i = n; nodes && i < *count; i++) nodes[i] = 0;
    *count = n;
    return 0;
}

/* -- stream capture --------------------------------------------------------- */

enum { FAKE_NODE_MEM_ALLOC = 5, FAKE_NODE_MEM_FREE = 6, FAKE_NODE_HOST = 7 };
void *fake_capture_stream = NULL;             /* the stream being captured, or NULL */
static unsigned long long fake_capture_graph = 0, fake_capture_last = 0;
int fake_capture_status = 0;                  /* CUstreamCaptureStatus: 0 none, 1 active, 2 invalidated */
int fake_capture_count = 0;                   /* captures begun */

int fake_is_capturing(void *stream) { return fake_capture_status && stream == fake_capture_stream; }

/* A node of the capture's graph after the previous one, when ``stream`` is
 * the capturing stream (the node is then made and 1 returned); 0 otherwise. */
static struct fake_node *fake_capture_node(void *stream, int kind, const char *name) {
    unsigned long long handle;
    struct fake_node *node;
    if (!fake_is_capturing(stream) || fake_capture_status != 1) return NULL;
    node = fake_add_node(&handle, (void *)fake_capture_graph, &fake_capture_last, fake_capture_last ? 1 : 0,
                         kind, name);
    fake_capture_last = handle;
    return node;
}
static int fake_captured(void *stream, int kind, const char *name) {
    return fake_is_capturing(stream) && (fake_capture_node(stream, kind, name), 1);
}
static int fake_captured_launch(void *stream, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, void *f, void **params) {
    struct fake_node *node;
    if (!fake_is_capturing(stream)) return 0;
    node = fake_capture_node(stream, FAKE_NODE_KERNEL, "captured kernel node");
    if (node) {
        node->grid[0] = gx, node->grid[1] = gy, node->grid[2] = gz;
        node->block[0] = bx, node->block[1] = by, node->block[2] = bz;
        node->func = (unsigned long long)f;
        fake_copy_args(node->args, params);
    }
    return 1;
}
/* A call capture forbids while a capture is on, by its mode as the driver
 * has it: CU_STREAM_CAPTURE_MODE_GLOBAL (0) refuses it on every thread,
 * _THREAD_LOCAL (1) on the capturing thread only, _RELAXED (2) nowhere; a
 * refused call invalidates the capture. */
static int fake_capture_mode_begun = 0;
static pthread_t fake_capture_thread;
static int fake_capture_forbids(const char *func) {
    (void)func;
    if (!fake_capture_status || fake_capture_mode_begun == 2) return 0;
    if (fake_capture_mode_begun == 1 && !pthread_equal(pthread_self(), fake_capture_thread)) return 0;
    fake_capture_status = 2;
    return 1;
}
/* Events recorded on the capturing stream during the capture: the only ones
 * it may wait for (a wait on one recorded outside crosses the capture's
 * boundary: CUDA_ERROR_STREAM_CAPTURE_ISOLATION, and the capture is invalid). */
#define FAKE_CAPTURED_EVENTS 1024
static void *fake_captured_events[FAKE_CAPTURED_EVENTS];
static int fake_captured_event_count = 0;
int fake_event_record_count = 0; /* the records answered CUDA_SUCCESS */
static int f_cuEventRecord(void *event, void *stream) {
    int rc = emu_call("cuEventRecord", 2, (emu_u64)event, (emu_u64)stream);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    __atomic_add_fetch(&fake_event_record_count, 1, __ATOMIC_RELAXED);
    if (fake_is_capturing(stream) && fake_captured_event_count < FAKE_CAPTURED_EVENTS)
        fake_captured_events[fake_captured_event_count++] = event;
    return emu_event_use("cuEventRecord", (emu_u64)event);
}
static int fake_capture_waits_outside(void *stream, void *event) {
    if (!fake_is_capturing(stream)) return 0;
    for (int i = 0; i < fake_captured_event_count; i++)
        if (fake_captured_events[i] == event) return 0;
    fake_capture_status = 2;
    return 1;
}
static int f_cuStreamBeginCapture(void *stream, int mode) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    /* The NULL, legacy and per-thread streams cannot be captured. */
    if ((unsigned long long)stream <= 2) return fake_fail(__func__, 900);
    if (fake_capture_status) return fake_fail(__func__, 1); /* one capture at a time here */
    fake_capture_stream = stream;
    fake_capture_graph = fake_new("cuStreamBeginCapture graph", 0);
    fake_capture_last = 0;
    fake_capture_status = 1;
    fake_captured_event_count = 0;
    fake_capture_mode_begun = mode;
    fake_capture_thread = pthread_self();
    fake_capture_count++;
    return 0;
}
static int f_cuStreamEndCapture(void *stream, void **graph) {
    int status = fake_capture_status;
    if (!status || stream != fake_capture_stream) return fake_fail(__func__, 903); /* CAPTURE_UNMATCHED */
    fake_capture_status = 0;
    fake_capture_stream = NULL;
    if (status == 2) {
        *graph = NULL;
        fake_log("cuGraphDestroy", fake_capture_graph); /* the driver drops the invalidated graph */
        return fake_fail(__func__, 901);                 /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
    }
    *graph = (void *)fake_capture_graph;
    return 0;
}
static int f_cuStreamIsCapturing(void *stream, int *status) {
    *status = fake_is_capturing(stream) ? fake_capture_status : 0;
    return fake_fail(__func__, fake_sticky);
}
/* The capture's id is its count (each capture a new one); the graph and its
 * dependencies are not told here. */
static int f_cuStreamGetCaptureInfo(void *stream, int *status, unsigned long long *id, void **graph,
                                    const void **deps, const void **edges, size_t *count) {
    int capturing = fake_is_capturing(stream);
    *status = capturing ? fake_capture_status : 0;
    if (id) *id = capturing ? (unsigned long long)fake_capture_count : 0;
    if (graph) *graph = capturing ? (void *)fake_capture_graph : NULL;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (count) *count = 0;
    return fake_fail(__func__, fake_sticky);
}
/* A synchronisation: forbidden during a capture. */
static int f_cuStreamSynchronize(void *stream) {
    int rc = emu_call("cuStreamSynchronize", 1, (emu_u64)stream);
    if (rc) return fake_fail(__func__, rc);
    if (fake_capture_forbids(__func__)) return fake_fail(__func__, 900);
    return fake_fail(__func__, fake_sticky);
}
static int f_cuCtxSynchronize(void) {
    if (fake_capture_forbids(__func__)) return fake_fail(__func__, 900);
    return fake_fail(__func__, fake_sticky);
}
static int f_cuStreamQuery(void *stream) {
    int rc = emu_call("cuStreamQuery", 1, (emu_u64)stream);
    if (rc) return fake_fail(__func__, rc);
    if (fake_is_capturing(stream) && fake_capture_forbids(__func__)) return fake_fail(__func__, 900);
    if (getenv("FAKE_STREAMS_BUSY") && !fake_sticky) return 600; /* CUDA_ERROR_NOT_READY: an answer */
    return fake_fail(__func__, fake_sticky);
}
/* Asynchronous copies and memsets: nodes on the capturing stream, else nothing. */
/* Asynchronous copies copy nothing; those that run (not captured) are
   counted and the last one's ends and size kept, for tests to read. */
int fake_copy_count = 0;
unsigned long long fake_last_copy[3]; /* dst, src, bytes */
static int fake_copy_async(const char *func, unsigned long long dst, int to, unsigned long long src, int from,
                           size_t n, void *stream) {
    struct fake_node *node;
    if (fake_sticky) return fake_fail(func, fake_sticky);
    node = fake_capture_node(stream, FAKE_NODE_MEMCPY, "captured copy node");
    if (node) {
        node->dst = dst, node->src = src, node->bytes = n;
        return 0;
    }
    fake_copy_count++;
    fake_last_copy[0] = dst, fake_last_copy[1] = src, fake_last_copy[2] = n;
    return emu_copy(func, dst, to, src, from, n);
}
#define FAKE_COPY_ASYNC(NAME, DST_T, SRC_T, TO, FROM)                                                    \
    static int f_##NAME(DST_T dst, SRC_T src, size_t n, void *stream) {                                \
        int rc = fake_is_capturing(stream) ? 0                                                          \
                 : emu_call(#NAME, 4, (emu_u64)dst, (emu_u64)src, (emu_u64)n, (emu_u64)stream);          \
        if (rc) return fake_fail(#NAME, rc);                                                           \
        return fake_copy_async(#NAME, (emu_u64)dst, TO, (emu_u64)src, FROM, n, stream);                \
    }
FAKE_COPY_ASYNC(cuMemcpyAsync, unsigned long long, unsigned long long, 2, 2)
FAKE_COPY_ASYNC(cuMemcpyDtoDAsync, unsigned long long, unsigned long long, 1, 1)
FAKE_COPY_ASYNC(cuMemcpyHtoDAsync, unsigned long long, const void *, 1, 0)
FAKE_COPY_ASYNC(cuMemcpyDtoHAsync, void *, unsigned long long, 0, 1)
static int fake_memset_async(const char *func, unsigned long long dst, unsigned value, size_t n, int width,
                             void *stream) {
    struct fake_node *node;
    if (fake_sticky) return fake_fail(func, fake_sticky);
    node = fake_capture_node(stream, FAKE_NODE_MEMSET, "captured memset node");
    if (node) {
        node->dst = dst, node->bytes = n;
        return 0;
    }
    return emu_memset(func, dst, value, n, width);
}
#define FAKE_MEMSET_ASYNC(NAME, WIDTH, TYPE)                                                             \
    static int f_##NAME(unsigned long long dst, TYPE value, size_t n, void *stream) {                 \
        int rc = fake_is_capturing(stream) ? 0                                                          \
                 : emu_call(#NAME, 4, (emu_u64)dst, (emu_u64)value, (emu_u64)n, (emu_u64)stream);        \
        if (rc) return fake_fail(#NAME, rc);                                                           \
        return fake_memset_async(#NAME, dst, value, n, WIDTH, stream);                                 \
    }
FAKE_MEMSET_ASYNC(cuMemsetD8Async, 1, unsigned char)
FAKE_MEMSET_ASYNC(cuMemsetD16Async, 2, unsigned short)
FAKE_MEMSET_ASYNC(cuMemsetD32Async, 4, unsigned)
/* cuGraphNodeGetType: CUgraphNodeType of the node table's kinds. */
static int f_cuGraphNodeGetType(unsigned long long handle, int *type) {
    static const int types[] = {-1, 0 /* kernel */, 1 /* memcpy */, 5 /* empty */, 2 /* memset */,
                                10 /* mem alloc */, 11 /* mem free */, 3 /* host */, 4 /* child graph */};
    for (int i = 0; i < fake_node_count; i++)
        if (fake_nodes[i].handle == handle) {
            *type = types[fake_nodes[i].kind];
            return 0;
        }
    return fake_fail(__func__, 400); /* CUDA_ERROR_INVALID_HANDLE */
}

/* The calling thread's capture mode, swapped (one thread is enough here). */
static int fake_capture_mode = 0;
static int f_cuThreadExchangeStreamCaptureMode(int *mode) {
    int previous = fake_capture_mode;
    if (!mode) return fake_fail(__func__, 1);
    fake_capture_mode = *mode;
    *mode = previous;
    return 0;
}

/* The JIT linker: cuLinkCreate remembers the info log buffer and its size
 * among its options (CU_JIT_INFO_LOG_BUFFER = 3, _SIZE_BYTES = 4) and each
 * option's raw value slot (fake_jit_values, for tests); cuLinkAddData and
 * cuLinkComplete write into that buffer later, as the driver does, so a
 * buffer freed after cuLinkCreate is written after its release. */
#define FAKE_JIT_OPTIONS 64
unsigned long long fake_jit_values[FAKE_JIT_OPTIONS];
struct fake_link { char *info; size_t info_size, info_used; };
static void fake_link_log(struct fake_link *link, const char *what, const char *name) {
    char line[256];
    int n = snprintf(line, sizeof line, "fake: %s %s\n", what, name ? name : "");
    if (!link->info || n <= 0) return;
    for (int i = 0; i < n && link->info_used + 1 < link->info_size; i++) link->info[link->info_used++] = line[i];
    link->info[link->info_used] = 0;
}
static int f_cuLinkCreate(unsigned n, const int *options, void **values, void **state) {
    struct fake_link *link;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if (!(link = calloc(1, sizeof *link))) return fake_fail(__func__, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
    for (unsigned i = 0; i < n; i++) {
        if (options[i] >= 0 && options[i] < FAKE_JIT_OPTIONS)
            fake_jit_values[options[i]] = (unsigned long long)(size_t)values[i];
        if (options[i] == 3) link->info = values[i];
        if (options[i] == 4) link->info_size = (size_t)values[i];
    }
    *state = link;
    return 0;
}
static int f_cuLinkAddData(void *state, int type, void *data, size_t size, const char *name, unsigned n,
                           const int *options, void **values) {
    (void)type, (void)data, (void)size, (void)n, (void)options, (void)values;
    if (!state) return fake_fail(__func__, 1);
    fake_link_log(state, "added", name);
    return 0;
}
static const char fake_cubin[] = "fake cubin";
static int f_cuLinkComplete(void *state, void **cubin, size_t *size) {
    if (!state) return fake_fail(__func__, 1);
    fake_link_log(state, "linked", "");
    *cubin = (void *)fake_cubin;
    *size = sizeof fake_cubin;
    return 0;
}
static int f_cuLinkDestroy(void *state) {
    free(state);
    return 0;
}

int fake_node_update_count = 0;          /* cuGraphKernelNodeSetParams (the graph's node, not the executable's) */
static int f_cuGraphKernelNodeSetParams(unsigned long long node, const struct fake_kernel_params *p) {
    (void)node; (void)p;
    fake_node_update_count++;
    return fake_fail(__func__, fake_sticky);
}
static int fake_capture_waits_outside(void *stream, void *event);
static int f_cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
    int rc = emu_call("cuStreamWaitEvent", 3, (emu_u64)stream, (emu_u64)event, (emu_u64)flags);
    if (rc) return fake_fail(__func__, rc);
    if ((rc = emu_event_use("cuStreamWaitEvent", (emu_u64)event))) return rc;
    if (fake_capture_waits_outside(stream, event)) return fake_fail(__func__, 905); /* _CAPTURE_ISOLATION */
    fake_stream_wait_count++;
    fake_last_wait_stream = (unsigned long long)stream;
    fake_last_wait_event = (unsigned long long)event;
    return fake_fail(__func__, fake_sticky);
}
static int f_cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data) {
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if (fake_captured(stream, 7, "cuLaunchHostFunc node")) return 0; /* FAKE_NODE_HOST */
    fake_host_func_count++;
    fn(data);
    return 0;
}
static int f_cuEventQuery(void *event) {
    int rc = emu_call("cuEventQuery", 1, (emu_u64)event);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    if ((rc = emu_event_query((emu_u64)event))) return rc;
    if (fake_event_pending > 0) {
        fake_event_pending--;
        return 600; /* CUDA_ERROR_NOT_READY */
    }
    return 0;
}
/* Pinned host memory is real, zeroed, and among the emulated GPU's
   allocations (the device reaches it through unified addressing). */
static int f_cuMemHostAlloc(void **p, size_t n, unsigned flags) {
    unsigned long long addr;
    int rc;
    (void)flags;
    if (fake_sticky) return fake_fail(__func__, fake_sticky);
    if ((rc = emu_alloc(&addr, n, 1))) return fake_fail(__func__, rc);
    *p = (void *)addr;
    fake_log("cuMemHostAlloc", addr);
    return 0;
}
/* cuMemAllocHost (cuda.core's LegacyPinnedMemoryResource) as cuMemHostAlloc. */
static int f_cuMemAllocHost(void **p, size_t n) { return f_cuMemHostAlloc(p, n, 0); }
static int f_cuMemFreeHost(void *p) { fake_log("cuMemFreeHost", (unsigned long long)p); return emu_free("cuMemFreeHost", (emu_u64)p, 1); }
static int f_cuMemHostGetDevicePointer(unsigned long long *d, void *p, unsigned flags) {
    (void)flags;
    *d = (unsigned long long)p; /* unified addressing: the same address */
    return fake_fail(__func__, fake_sticky);
}
/* The block-size-to-shared-memory function, when given, is called as the
   driver calls it: a block of 256 needing more than 48 KiB halves to 128. */
static int f_cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, void *f, size_t (*b2d)(int), size_t shared,
                                              int limit) {
    (void)shared;
    fake_last_function = (unsigned long long)f;
    *min_grid = 132;
    *block = limit > 0 && limit < 256 ? limit : 256;
    if (b2d) {
        size_t need = b2d(*block);
        fake_log("cuOccupancyMaxPotentialBlockSize.b2d", need);
        if (need > 48 * 1024) *block /= 2;
    }
    return fake_fail(__func__, fake_sticky);
}

/* EGL interop (cudaEGL.h). Without an EGL display the driver refuses a NULL
 * image, stream or sync (CUDA_ERROR_INVALID_VALUE); given one, the fake hands
 * out handles, and a mapped frame reads back as a 640x480 two-plane pitch
 * frame whose planes are at 0x1000 and 0x2000. */
struct fake_egl_frame {
    void *planes[3];
    unsigned width, height, depth, pitch, planeCount, numChannels;
    int frameType, eglColorFormat, cuFormat;
};

static int f_cuGraphicsEGLRegisterImage(void **resource, void *image, unsigned flags) {
    (void)flags;
    if (!image) return fake_fail(__func__, 1);
    *resource = (void *)fake_new("cuGraphicsEGLRegisterImage", 0);
    return 0;
}

static int f_cuEGLStreamConsumerConnect(void **conn, void *stream) {
    if (!stream) return fake_fail(__func__, 1);
    *conn = (void *)fake_new("cuEGLStreamConsumerConnect", 0);
    return 0;
}

static int f_cuEventCreateFromEGLSync(void **event, void *sync, unsigned flags) {
    (void)flags;
    if (!sync) return fake_fail(__func__, 1);
    *event = (void *)fake_new("cuEventCreate", 0);
    emu_event_made((emu_u64)*event);
    return 0;
}

static int f_cuGraphicsResourceGetMappedEglFrame(struct fake_egl_frame *frame, void *resource, unsigned index,
                                                 unsigned level) {
    (void)index, (void)level;
    if (!resource) return fake_fail(__func__, 400); /* CUDA_ERROR_INVALID_HANDLE */
    memset(frame, 0, sizeof *frame);
    frame->planes[0] = (void *)0x1000;
    frame->planes[1] = (void *)0x2000;
    frame->width = 640, frame->height = 480, frame->depth = 1, frame->pitch = 768;
    frame->planeCount = 2, frame->numChannels = 1;
    frame->frameType = 1; /* CU_EGL_FRAME_TYPE_PITCH */
    return 0;
}

/* GL and VDPAU interop (cudaGL.h, cudaVDPAU.h). Without a GL context or a
 * VDPAU device the driver has nothing to register; the fake answers from the
 * arguments, so that a test sees each one arrive: a GL buffer or image is
 * registered as resource 0x61000000 + name (a name of 0 is refused), the
 * devices of the current GL context are device 0, and a VDPAU device is
 * device 0 given a VdpGetProcAddress (NULL is refused); video and output
 * surfaces register as 0x62000000 and 0x63000000 + surface. */
static int f_cuGraphicsGLRegisterBuffer(void **resource, unsigned buffer, unsigned flags) {
    (void)flags;
    if (!buffer) return fake_fail(__func__, 1);
    *resource = (void *)(0x61000000ULL + buffer);
    return 0;
}

static int f_cuGraphicsGLRegisterImage(void **resource, unsigned image, unsigned target, unsigned flags) {
    (void)flags;
    if (!image || !target) return fake_fail(__func__, 1);
    *resource = (void *)(0x61000000ULL + image);
    return 0;
}

static int f_cuGLGetDevices(unsigned *count, int *devices, unsigned capacity, int list) {
    if (list < 1 || list > 3) return fake_fail(__func__, 1);
    *count = 1;
    if (capacity >= 1) devices[0] = 0;
    return 0;
}

static int f_cuVDPAUGetDevice(int *device, unsigned vdp_device, void *get_proc_address) {
    (void)vdp_device;
    if (!get_proc_address) return fake_fail(__func__, 1);
    *device = 0;
    return 0;
}

static int f_cuGraphicsVDPAURegisterVideoSurface(void **resource, unsigned surface, unsigned flags) {
    (void)flags;
    *resource = (void *)(0x62000000ULL + surface);
    return 0;
}

static int f_cuGraphicsVDPAURegisterOutputSurface(void **resource, unsigned surface, unsigned flags) {
    (void)flags;
    *resource = (void *)(0x63000000ULL + surface);
    return 0;
}

/* A device's LUID is the bytes 0x10..0x17 (a NUL inside would be kept), its
 * node mask 1. The driver's log holds one line, "[fake] one log line\n": a
 * dump copies it (NUL-terminated) when the buffer has room and says how many
 * bytes it wrote, else writes 0 and refuses; an iterator is advanced by one. */
static int f_cuDeviceGetLuid(char *luid, unsigned *mask, int dev) {
    if (dev != 0) return fake_fail(__func__, 101); /* CUDA_ERROR_INVALID_DEVICE */
    for (int i = 0; i < 8; i++) luid[i] = (char)(0x10 + i);
    luid[3] = 0;
    *mask = 1;
    return 0;
}

static int f_cuLogsDumpToMemory(unsigned *iterator, char *buffer, size_t *size, unsigned flags) {
    static const char line[] = "[fake] one log line\n";
    if (flags || !buffer || !size) return fake_fail(__func__, 1);
    if (*size < sizeof line) {
        *size = 0;
        return fake_fail(__func__, 1);
    }
    memcpy(buffer, line, sizeof line);
    *size = sizeof line - 1;
    if (iterator) *iterator += 1;
    return 0;
}

static int f_cuLogsDumpToFile(unsigned *iterator, const char *path, unsigned flags) {
    if (flags || !path) return fake_fail(__func__, 1);
    if (iterator) *iterator += 1;
    return 0;
}

/* The device's current memory pool: one, whose release threshold is kept
   (starting at the driver's 0) so tests see what a binding sets there. */
unsigned long long fake_pool_release_threshold = 0;
int fake_pool_threshold_sets = 0;
static int f_cuDeviceGetMemPool(unsigned long long *pool, int dev) {
    (void)dev;
    *pool = 0xB001;
    return fake_fail(__func__, fake_sticky);
}
static int f_cuMemPoolGetAttribute(unsigned long long pool, int attr, void *value) {
    (void)pool;
    if (attr == 4) *(unsigned long long *)value = fake_pool_release_threshold; /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    return fake_fail(__func__, fake_sticky);
}
static int f_cuMemPoolSetAttribute(unsigned long long pool, int attr, void *value) {
    (void)pool;
    if (attr == 4) {
        fake_pool_release_threshold = *(unsigned long long *)value;
        fake_pool_threshold_sets++;
    }
    return fake_fail(__func__, fake_sticky);
}
/* With FAKE_COMPUTE_CAPABILITY=90 (major * 10 + minor), or
   fake_compute_capability_set set to it in the process, the device answers
   its attributes and name as such a GPU would (132 SMs, 1024 threads a
   block, warps of 32, 48 KiB of shared memory a block; 0 for the rest), for
   a library that reads them through the C level into its own variables
   (cuda.core 1.2's Device): unset, they stay unwritten, as before. */
int fake_compute_capability_set = 0; /* set through ctypes, it wins over the variable */
static int fake_compute_capability(void) {
    const char *cc = getenv("FAKE_COMPUTE_CAPABILITY");
    if (fake_compute_capability_set) return fake_compute_capability_set;
    return cc ? atoi(cc) : 0;
}
static int f_cuDeviceGetAttribute(int *value, int attribute, int dev) {
    int cc = fake_compute_capability();
    if (!cc) return fake_fail(__func__, fake_sticky);
    if (dev != 0) return fake_fail(__func__, 101); /* CUDA_ERROR_INVALID_DEVICE */
    switch (attribute) {
    case 1: case 2: case 3: *value = 1024; break;   /* MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X, _Y */
    case 4: *value = 64; break;                     /* MAX_BLOCK_DIM_Z */
    case 5: *value = 2147483647; break;             /* MAX_GRID_DIM_X */
    case 6: case 7: *value = 65535; break;          /* MAX_GRID_DIM_Y, _Z */
    case 8: *value = 48 * 1024; break;              /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 10: *value = 32; break;                    /* WARP_SIZE */
    case 16: *value = 132; break;                   /* MULTIPROCESSOR_COUNT */
    case 75: *value = cc / 10; break;               /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = cc % 10; break;               /* COMPUTE_CAPABILITY_MINOR */
    default: *value = 0;
    }
    return fake_fail(__func__, fake_sticky);
}
static int f_cuDeviceGetName(char *name, int len, int dev) {
    if (fake_compute_capability() && len > 0) {
        if (dev != 0) return fake_fail(__func__, 101);
        snprintf(name, (size_t)len, "cubind fake device");
    }
    return fake_fail(__func__, fake_sticky);
}
static const struct { const char *name; void *fn; } fake_table[] = {
    {"cuDeviceGetAttribute", (void *)f_cuDeviceGetAttribute},
    {"cuDeviceGetName", (void *)f_cuDeviceGetName},
    {"cuMemAllocHost", (void *)f_cuMemAllocHost},
    {"cuDeviceGetMemPool", (void *)f_cuDeviceGetMemPool},
    {"cuMemPoolGetAttribute", (void *)f_cuMemPoolGetAttribute},
    {"cuMemPoolSetAttribute", (void *)f_cuMemPoolSetAttribute},
    {"cuLaunchKernelEx", (void *)fake_launch_ex},
    {"cuGraphicsGLRegisterBuffer", (void *)f_cuGraphicsGLRegisterBuffer},
    {"cuGraphicsGLRegisterImage", (void *)f_cuGraphicsGLRegisterImage},
    {"cuGLGetDevices", (void *)f_cuGLGetDevices},
    {"cuVDPAUGetDevice", (void *)f_cuVDPAUGetDevice},
    {"cuGraphicsVDPAURegisterVideoSurface", (void *)f_cuGraphicsVDPAURegisterVideoSurface},
    {"cuGraphicsVDPAURegisterOutputSurface", (void *)f_cuGraphicsVDPAURegisterOutputSurface},
    {"cuDeviceGetLuid", (void *)f_cuDeviceGetLuid},
    {"cuLogsDumpToMemory", (void *)f_cuLogsDumpToMemory},
    {"cuLogsDumpToFile", (void *)f_cuLogsDumpToFile},
    {"cuLaunchKernel", (void *)fake_launch},
    {"cuInit", (void *)fake_ok},
    {"cuGetErrorName", (void *)fake_ok},
    {"cuGetErrorString", (void *)f_cuGetErrorString},
    {"cuDriverGetVersion", (void *)f_cuDriverGetVersion},
    {"cuDeviceGet", (void *)f_cuDeviceGet},
    {"cuDeviceGetCount", (void *)f_cuDeviceGetCount},
    {"cuCtxGetCurrent", (void *)f_cuCtxGetCurrent},
    {"cuCtxCreate", (void *)f_cuCtxCreate},
    {"cuCtxDestroy", (void *)f_cuCtxDestroy},
    {"cuCtxSetCurrent", (void *)f_cuCtxSetCurrent},
    {"cuCtxGetDevice", (void *)f_cuCtxGetDevice},
    {"cuCtxPushCurrent", (void *)f_cuCtxPushCurrent},
    {"cuCtxPopCurrent", (void *)f_cuCtxPopCurrent},
    {"cuDevicePrimaryCtxRetain", (void *)f_cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease", (void *)f_cuDevicePrimaryCtxRelease},
    {"cuDevicePrimaryCtxReset", (void *)f_cuDevicePrimaryCtxReset},
    {"cuMemAlloc", (void *)f_cuMemAlloc},
    {"cuMemAllocAsync", (void *)f_cuMemAllocAsync},
    {"cuMemFree", (void *)f_cuMemFree},
    {"cuMemFreeAsync", (void *)f_cuMemFreeAsync},
    {"cuMemcpyHtoD", (void *)f_cuMemcpyHtoD},
    {"cuMemcpyDtoH", (void *)f_cuMemcpyDtoH},
    {"cuStreamCreateWithPriority", (void *)f_cuStreamCreateWithPriority},
    {"cuStreamDestroy", (void *)f_cuStreamDestroy},
    {"cuEventCreate", (void *)f_cuEventCreate},
    {"cuEventDestroy", (void *)f_cuEventDestroy},
    {"cuLibraryLoadData", (void *)f_cuLibraryLoadData},
    {"cuLibraryUnload", (void *)f_cuLibraryUnload},
    {"cuLibraryGetKernel", (void *)f_cuLibraryGetKernel},
    {"cuGraphCreate", (void *)f_cuGraphCreate},
    {"cuGraphDestroy", (void *)f_cuGraphDestroy},
    {"cuGraphGetNodes", (void *)f_cuGraphGetNodes},
    {"cuLinkCreate", (void *)f_cuLinkCreate},
    {"cuLinkAddData", (void *)f_cuLinkAddData},
    {"cuLinkComplete", (void *)f_cuLinkComplete},
    {"cuLinkDestroy", (void *)f_cuLinkDestroy},
    {"cuThreadExchangeStreamCaptureMode", (void *)f_cuThreadExchangeStreamCaptureMode},
    {"cuGraphAddKernelNode", (void *)f_cuGraphAddKernelNode},
    {"cuGraphAddMemcpyNode", (void *)f_cuGraphAddMemcpyNode},
    {"cuGraphAddChildGraphNode", (void *)f_cuGraphAddChildGraphNode},
    {"cuGraphExecMemcpyNodeSetParams", (void *)f_cuGraphExecMemcpyNodeSetParams},
    {"cuGraphMemcpyNodeSetParams", (void *)f_cuGraphMemcpyNodeSetParams},
    {"cuGraphAddEmptyNode", (void *)f_cuGraphAddEmptyNode},
    {"cuGraphAddMemsetNode", (void *)f_cuGraphAddMemsetNode},
    {"cuGraphAddNode", (void *)f_cuGraphAddNode},
    {"cuStreamBeginCapture", (void *)f_cuStreamBeginCapture},
    {"cuStreamEndCapture", (void *)f_cuStreamEndCapture},
    {"cuStreamIsCapturing", (void *)f_cuStreamIsCapturing},
    {"cuStreamGetCaptureInfo", (void *)f_cuStreamGetCaptureInfo},
    {"cuEventRecord", (void *)f_cuEventRecord},
    {"cuStreamSynchronize", (void *)f_cuStreamSynchronize},
    {"cuCtxSynchronize", (void *)f_cuCtxSynchronize},
    {"cuStreamQuery", (void *)f_cuStreamQuery},
    {"cuMemcpyDtoD", (void *)f_cuMemcpyDtoD},
    {"cuMemcpy", (void *)f_cuMemcpy},
    {"cuMemcpyAsync", (void *)f_cuMemcpyAsync},
    {"cuMemcpyDtoDAsync", (void *)f_cuMemcpyDtoDAsync},
    {"cuMemcpyHtoDAsync", (void *)f_cuMemcpyHtoDAsync},
    {"cuMemcpyDtoHAsync", (void *)f_cuMemcpyDtoHAsync},
    {"cuMemsetD8Async", (void *)f_cuMemsetD8Async},
    {"cuMemsetD16Async", (void *)f_cuMemsetD16Async},
    {"cuMemsetD32Async", (void *)f_cuMemsetD32Async},
    {"cuModuleGetFunction", (void *)f_cuModuleGetFunction},
    {"cuMemAllocFromPoolAsync", (void *)f_cuMemAllocFromPoolAsync},
    {"cuGraphNodeGetType", (void *)f_cuGraphNodeGetType},
    {"cuGraphInstantiate", (void *)f_cuGraphInstantiate_v11000},
    {"cuGraphInstantiateWithFlags", (void *)f_cuGraphInstantiateWithFlags},
    {"cuGraphExecGetFlags", (void *)f_cuGraphExecGetFlags},
    {"cuGraphExecDestroy", (void *)f_cuGraphExecDestroy},
    {"cuGraphLaunch", (void *)f_cuGraphLaunch},
    {"cuGraphExecKernelNodeSetParams", (void *)f_cuGraphExecKernelNodeSetParams},
    {"cuGraphKernelNodeSetParams", (void *)f_cuGraphKernelNodeSetParams},
    {"cuStreamWaitEvent", (void *)f_cuStreamWaitEvent},
    {"cuLaunchHostFunc", (void *)f_cuLaunchHostFunc},
    {"cuEventQuery", (void *)f_cuEventQuery},
    {"cuMemHostAlloc", (void *)f_cuMemHostAlloc},
    {"cuMemFreeHost", (void *)f_cuMemFreeHost},
    {"cuMemHostGetDevicePointer", (void *)f_cuMemHostGetDevicePointer},
    {"cuOccupancyMaxPotentialBlockSize", (void *)f_cuOccupancyMaxPotentialBlockSize},
    {"cuGraphicsEGLRegisterImage", (void *)f_cuGraphicsEGLRegisterImage},
    {"cuEGLStreamConsumerConnect", (void *)f_cuEGLStreamConsumerConnect},
    {"cuEventCreateFromEGLSync", (void *)f_cuEventCreateFromEGLSync},
    {"cuGraphicsResourceGetMappedEglFrame", (void *)f_cuGraphicsResourceGetMappedEglFrame},
};

/* FAKE_MISSING names a function this "driver" lacks, as an older driver
 * would: cuGetProcAddress succeeds with a NULL pointer and the status
 * CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, as documented. */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status) {
    const char *missing = getenv("FAKE_MISSING");
    struct fake_request *r = NULL;
    if (fake_request_count < FAKE_MAX_REQUESTS) {
        r = &fake_requests[fake_request_count++];
        strncpy(r->symbol, symbol, sizeof r->symbol - 1);
        r->version = version;
        r->flags = flags;
        r->rc = 0;
    }
    if (version > fake_driver_version() || flags > 2) {
        if (r) r->rc = 1;
        return fake_fail(__func__, 1); /* CUDA_ERROR_INVALID_VALUE */
    }
    if (missing && strcmp(symbol, missing) == 0) {
        *pfn = NULL;
        if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
        return 0;
    }
    *pfn = (void *)fake_success;
    for (size_t i = 0; i < sizeof fake_table / sizeof fake_table[0]; i++)
        if (strcmp(symbol, fake_table[i].name) == 0) *pfn = fake_table[i].fn;
    if (emu_lookup(symbol)) *pfn = emu_lookup(symbol);
    /* An older ABI of a function whose parameters changed, as the driver
       answers a request at a version before the change. */
    if (strcmp(symbol, "cuGraphAddNode") == 0 && version < 12030) *pfn = (void *)f_cuGraphAddNode_v12000;
    if (status) *status = 0;
    return 0;
}

/* What the C floor program links against by name (the header's _v2.. names):
   memory, copies and events as the emulated GPU has them, the rest succeeding. */
int cuMemAlloc_v2(unsigned long long *p, size_t n) { return f_cuMemAlloc(p, n); }
int cuMemFree_v2(unsigned long long p) { return f_cuMemFree(p); }
int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { return f_cuMemcpyHtoD(d, s, n); }
int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { return f_cuMemcpyDtoH(d, s, n); }
int cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *stream) {
    return f_cuMemcpyHtoDAsync(d, s, n, stream);
}
int cuEventCreate(void **e, unsigned flags) { return f_cuEventCreate(e, flags); }
int cuEventDestroy_v2(void *e) { return f_cuEventDestroy(e); }
int cuEventRecord(void *e, void *stream) { return f_cuEventRecord(e, stream); }
int cuStreamCreate(void **s, unsigned flags) { return f_cuStreamCreateWithPriority(s, flags, 0); }
#define FAKE(name) int name(void) { return 0; }
FAKE(cuInit)
FAKE(cuDeviceGet)
FAKE(cuCtxGetCurrent)
FAKE(cuDeviceGetAttribute)
FAKE(cuPointerGetAttribute)
FAKE(cuStreamDestroy_v2)
FAKE(cuStreamQuery)
FAKE(cuStreamSynchronize)
FAKE(cuModuleLoadData)
FAKE(cuModuleUnload)
FAKE(cuModuleGetFunction)
FAKE(cuLibraryLoadData)
FAKE(cuLibraryGetKernel)
FAKE(cuLibraryUnload)
FAKE(cuLaunchKernel)
