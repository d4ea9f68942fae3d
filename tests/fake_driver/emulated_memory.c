/* The emulated GPU's memory: device memory is host memory, kept in a table of
 * live allocations (pinned host memory too, which the device reaches through
 * unified addressing), and every device access a copy, a memset or a kernel
 * makes is checked against it: bytes outside every live allocation, or
 * memory freed twice, are a violation (emulated.h), answered
 * CUDA_ERROR_INVALID_VALUE. New device memory reads 0xCD, a value no test
 * writes, so that reading what was never written shows. Freed memory is
 * returned to the system only after later frees (up to EMU_QUARANTINE blocks
 * or EMU_QUARANTINE_BYTES, as AddressSanitizer does), so that a new allocation does not reuse a recent
 * address: a use after free is then a violation, not a read of someone
 * else's data, and allocations have distinct addresses as the tests expect.
 * Handed to cuGetProcAddress from here (emu_memory_lookup): the pitched
 * copies and memsets, and the synchronous memsets; fake_libcuda.c's own
 * allocation and copy functions call emu_alloc, emu_free and emu_copy. On a
 * capturing stream the calls here record nothing and do nothing, as before
 * the emulation (fake_libcuda.c makes nodes of the calls it knows). */
#include "emulated.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern int fake_sticky;
int fake_is_capturing(void *stream);

struct emu_allocation {
    emu_u64 base;
    size_t size;
    int host;
};
static struct emu_allocation *emu_allocs;
static int emu_allocs_used, emu_allocs_size;

int emu_alloc(emu_u64 *ptr, size_t n, int host) {
    void *mem = malloc(n ? n : 1);
    if (!mem) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    if (!host) memset(mem, 0xCD, n);
    else memset(mem, 0, n);
    emu_lock();
    if (emu_allocs_used == emu_allocs_size) {
        int size = emu_allocs_size ? 2 * emu_allocs_size : 256;
        struct emu_allocation *grown = realloc(emu_allocs, (size_t)size * sizeof *grown);
        if (!grown) {
            emu_unlock();
            free(mem);
            return 2;
        }
        emu_allocs = grown, emu_allocs_size = size;
    }
    emu_allocs[emu_allocs_used++] = (struct emu_allocation){(emu_u64)(uintptr_t)mem, n, host};
    emu_unlock();
    *ptr = (emu_u64)(uintptr_t)mem;
    return 0;
}

/* A ring of freed blocks, oldest first; bounded in bytes too, so that a
 * program freeing large blocks does not keep gigabytes (each new block then
 * faults its pages in anew). */
#define EMU_QUARANTINE 4096
#define EMU_QUARANTINE_BYTES (64u << 20)
static struct { void *ptr; size_t size; } emu_quarantine[EMU_QUARANTINE];
static unsigned emu_quarantine_head, emu_quarantine_count;
static size_t emu_quarantine_bytes;

/* Keeps ``ptr`` and returns the blocks that leave the ring (to free outside the lock). */
static int emu_quarantine_put(void *ptr, size_t size, void **out, int max) {
    int n = 0;
    while (n < max && emu_quarantine_count &&
           (emu_quarantine_count == EMU_QUARANTINE || emu_quarantine_bytes + size > EMU_QUARANTINE_BYTES)) {
        unsigned oldest = (emu_quarantine_head + EMU_QUARANTINE - emu_quarantine_count) % EMU_QUARANTINE;
        out[n++] = emu_quarantine[oldest].ptr;
        emu_quarantine_bytes -= emu_quarantine[oldest].size;
        emu_quarantine_count--;
    }
    emu_quarantine[emu_quarantine_head].ptr = ptr, emu_quarantine[emu_quarantine_head].size = size;
    emu_quarantine_head = (emu_quarantine_head + 1) % EMU_QUARANTINE;
    emu_quarantine_count++;
    emu_quarantine_bytes += size;
    return n;
}

int emu_free(const char *func, emu_u64 ptr, int host) {
    void *gone[64];
    int n;
    emu_lock();
    for (int i = 0; i < emu_allocs_used; i++) {
        if (emu_allocs[i].base == ptr && emu_allocs[i].host == host) {
            n = emu_quarantine_put((void *)(uintptr_t)ptr, emu_allocs[i].size, gone, 64);
            emu_allocs[i] = emu_allocs[--emu_allocs_used];
            emu_unlock();
            for (int k = 0; k < n; k++) free(gone[k]);
            return 0;
        }
    }
    emu_unlock();
    return emu_violation(func, 1, "%s of %#llx, not allocated (or freed already)", func, ptr);
}

/* Blocks a stream-ordered free gave back while fake_pool_reuse is set, newest
 * last: the next stream-ordered allocation of the same size takes the newest,
 * as a driver's pool hands freed memory out again. */
#define EMU_POOL 64
static struct { void *ptr; size_t size; } emu_pool[EMU_POOL];
static int emu_pool_count;

int emu_pool_put(const char *func, emu_u64 ptr) {
    emu_lock();
    if (emu_pool_count < EMU_POOL) {
        for (int i = 0; i < emu_allocs_used; i++) {
            if (emu_allocs[i].base == ptr && !emu_allocs[i].host) {
                emu_pool[emu_pool_count].ptr = (void *)(uintptr_t)ptr, emu_pool[emu_pool_count].size = emu_allocs[i].size;
                emu_pool_count++;
                emu_allocs[i] = emu_allocs[--emu_allocs_used];
                emu_unlock();
                return 0;
            }
        }
    }
    emu_unlock();
    return emu_free(func, ptr, 0); /* the pool is full, or the address is not allocated: freed as usual */
}

int emu_pool_take(emu_u64 *ptr, size_t n) {
    emu_lock();
    for (int i = emu_pool_count - 1; i >= 0; i--) {
        if (emu_pool[i].size != n) continue;
        void *mem = emu_pool[i].ptr;
        if (emu_allocs_used == emu_allocs_size) break; /* emu_alloc grows the table */
        emu_pool[i] = emu_pool[--emu_pool_count];
        memset(mem, 0xCD, n);
        emu_allocs[emu_allocs_used++] = (struct emu_allocation){(emu_u64)(uintptr_t)mem, n, 0};
        emu_unlock();
        *ptr = (emu_u64)(uintptr_t)mem;
        return 1;
    }
    emu_unlock();
    return 0;
}

void *emu_device(emu_u64 addr, size_t n) {
    for (int i = 0; i < emu_allocs_used; i++) {
        const struct emu_allocation *a = &emu_allocs[i];
        if (a->base <= addr && addr - a->base <= a->size && n <= a->size - (addr - a->base))
            return (void *)(uintptr_t)addr;
    }
    return NULL;
}

/* One end of a copy: 1 device memory (checked), 0 host memory, 2 either
 * (unified addressing: device when it lies in an allocation). */
static void *emu_end(emu_u64 addr, int device, size_t n) {
    void *p = emu_device(addr, n);
    if (device == 0 || (device == 2 && !p)) return (void *)(uintptr_t)addr;
    return p;
}

int emu_copy(const char *func, emu_u64 dst, int dst_device, emu_u64 src, int src_device, size_t n) {
    void *d, *s;
    if (n == 0) return 0;
    emu_lock();
    d = emu_end(dst, dst_device, n), s = emu_end(src, src_device, n);
    if (d && s) memmove(d, s, n);
    emu_unlock();
    if (!d || !s)
        return emu_violation(func, 1, "%s of %zu bytes from %#llx to %#llx: the device end is outside every live "
                             "allocation", func, n, src, dst);
    return 0;
}

int emu_memset(const char *func, emu_u64 dst, unsigned value, size_t count, int width) {
    unsigned char *d;
    if (count == 0) return 0;
    emu_lock();
    d = emu_device(dst, count * (size_t)width);
    for (size_t i = 0; d && i < count; i++) memcpy(d + i * (size_t)width, &value, (size_t)width); /* little-endian */
    emu_unlock();
    if (!d) return emu_violation(func, 1, "%s of %zu bytes at %#llx: outside every live allocation", func,
                                 count * (size_t)width, dst);
    return 0;
}

/* -- the pitched calls and the synchronous memsets -- */

/* CUDA_MEMCPY2D as cuda.h lays it out. */
struct emu_memcpy2d {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    emu_u64 srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    emu_u64 dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
};

/* CUmemorytype: 1 host, 2 device, 3 array (none here), 4 unified. */
static int emu_2d_end(int type, const void *host, emu_u64 device, emu_u64 *addr) {
    if (type == 1) *addr = (emu_u64)(uintptr_t)host;
    else *addr = device;
    return type == 1 ? 0 : type == 2 ? 1 : 2;
}

static int emu_memcpy_2d(const char *func, const struct emu_memcpy2d *c) {
    emu_u64 src, dst;
    int src_device, dst_device, rc = 0;
    if (!c || c->srcMemoryType == 3 || c->dstMemoryType == 3) return fake_fail(func, 1);
    if (c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)
        return emu_violation(func, 12, "%s: a pitch below the width %zu", func, c->WidthInBytes);
    src_device = emu_2d_end(c->srcMemoryType, c->srcHost, c->srcDevice, &src);
    dst_device = emu_2d_end(c->dstMemoryType, c->dstHost, c->dstDevice, &dst);
    for (size_t row = 0; row < c->Height && rc == 0; row++)
        rc = emu_copy(func, dst + c->dstXInBytes + (c->dstY + row) * c->dstPitch, dst_device,
                      src + c->srcXInBytes + (c->srcY + row) * c->srcPitch, src_device, c->WidthInBytes);
    return rc;
}

static int emu_memset_2d(const char *func, emu_u64 dst, size_t pitch, unsigned value, size_t width, size_t height,
                         int size) {
    int rc = 0;
    for (size_t row = 0; row < height && rc == 0; row++)
        rc = emu_memset(func, dst + row * pitch, value, width, size);
    return rc;
}

static int f_cuMemcpy2D(const struct emu_memcpy2d *c) {
    int rc = emu_call("cuMemcpy2D", 1, (emu_u64)(uintptr_t)c);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    return emu_memcpy_2d("cuMemcpy2D", c);
}
static int f_cuMemcpy2DAsync(const struct emu_memcpy2d *c, void *stream) {
    int rc;
    if (fake_is_capturing(stream)) return 0;
    rc = emu_call("cuMemcpy2DAsync", 2, (emu_u64)(uintptr_t)c, (emu_u64)(uintptr_t)stream);
    if (rc || (rc = fake_sticky)) return fake_fail(__func__, rc);
    return emu_memcpy_2d("cuMemcpy2DAsync", c);
}

#define EMU_MEMSET(NAME, WIDTH, TYPE)                                                                  \
    static int f_##NAME(emu_u64 dst, TYPE value, size_t count) {                                      \
        int rc = emu_call(#NAME, 3, dst, (emu_u64)value, (emu_u64)count);                             \
        if (rc || (rc = fake_sticky)) return fake_fail(#NAME, rc);                                    \
        return emu_memset(#NAME, dst, value, count, WIDTH);                                           \
    }
EMU_MEMSET(cuMemsetD8, 1, unsigned char)
EMU_MEMSET(cuMemsetD16, 2, unsigned short)
EMU_MEMSET(cuMemsetD32, 4, unsigned)

#define EMU_MEMSET_2D(NAME, WIDTH, TYPE)                                                               \
    static int f_##NAME(emu_u64 dst, size_t pitch, TYPE value, size_t w, size_t h, void *stream) {    \
        int rc;                                                                                        \
        if (fake_is_capturing(stream)) return 0;                                                       \
        rc = emu_call(#NAME, 6, dst, (emu_u64)pitch, (emu_u64)value, (emu_u64)w, (emu_u64)h,           \
                      (emu_u64)(uintptr_t)stream);                                                     \
        if (rc || (rc = fake_sticky)) return fake_fail(#NAME, rc);                                    \
        return emu_memset_2d(#NAME, dst, pitch, value, w, h, WIDTH);                                  \
    }
EMU_MEMSET_2D(cuMemsetD2D8Async, 1, unsigned char)
EMU_MEMSET_2D(cuMemsetD2D16Async, 2, unsigned short)
EMU_MEMSET_2D(cuMemsetD2D32Async, 4, unsigned)

void *emu_memory_lookup(const char *symbol) {
    static const struct { const char *name; void *fn; } table[] = {
        {"cuMemcpy2D", (void *)f_cuMemcpy2D},
        {"cuMemcpy2DAsync", (void *)f_cuMemcpy2DAsync},
        {"cuMemsetD8", (void *)f_cuMemsetD8},
        {"cuMemsetD16", (void *)f_cuMemsetD16},
        {"cuMemsetD32", (void *)f_cuMemsetD32},
        {"cuMemsetD2D8Async", (void *)f_cuMemsetD2D8Async},
        {"cuMemsetD2D16Async", (void *)f_cuMemsetD2D16Async},
        {"cuMemsetD2D32Async", (void *)f_cuMemsetD2D32Async},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(symbol, table[i].name) == 0) return table[i].fn;
    return NULL;
}

/* -- what the tests read (ctypes) -- */

/* The live allocations' bases and sizes, up to ``max``; their count. */
int emu_allocations(emu_u64 *bases, emu_u64 *sizes, int max) {
    int n;
    emu_lock();
    n = emu_allocs_used;
    for (int i = 0; i < n && i < max; i++) bases[i] = emu_allocs[i].base, sizes[i] = emu_allocs[i].size;
    emu_unlock();
    return n;
}
