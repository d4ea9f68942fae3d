/* cubind.Array's own kernels (cubind/_arrays/kernels.py), run by name over the
 * emulated memory: cubind_copy_<src>_<dst> (a strided copy converting numpy
 * dtype ``src`` to ``dst``, as the compiled kernel does) and
 * cubind_fill_<itemsize> (a strided fill with the bits lo, hi). Their
 * handles come from cuLibraryGetKernel and cuModuleGetFunction; any other
 * name gets 0x4000, which launches as before (nothing runs). Every element
 * access is checked against the live allocations. With emu_refuse_kernels
 * set, a launch of one is a violation (a test whose layouts need none). */
#include "emulated.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int emu_refuse_kernels = 0;

#define EMU_KERNELS 256
#define EMU_KERNEL_BASE 0x5000ULL
static char emu_kernel_names[EMU_KERNELS][48];
static int emu_kernels_used;

emu_u64 emu_kernel_handle(const char *name) {
    emu_u64 handle = 0x4000;
    if (strncmp(name, "cubind_copy_", 12) != 0 && strncmp(name, "cubind_fill_", 12) != 0) return handle;
    emu_lock();
    for (int i = 0; i < emu_kernels_used; i++)
        if (strcmp(emu_kernel_names[i], name) == 0) handle = EMU_KERNEL_BASE + 16ULL * (emu_u64)i;
    if (handle == 0x4000 && emu_kernels_used < EMU_KERNELS) {
        snprintf(emu_kernel_names[emu_kernels_used], sizeof emu_kernel_names[0], "%s", name);
        handle = EMU_KERNEL_BASE + 16ULL * (emu_u64)emu_kernels_used++;
    }
    emu_unlock();
    return handle;
}

/* -- element types, as numpy names them -- */

enum { K_BOOL, K_INT, K_UINT, K_FLOAT, K_HALF, K_COMPLEX };
static const struct { const char *name; int kind, size; } emu_types[] = {
    {"bool", K_BOOL, 1},     {"int8", K_INT, 1},     {"int16", K_INT, 2},     {"int32", K_INT, 4},
    {"int64", K_INT, 8},     {"uint8", K_UINT, 1},   {"uint16", K_UINT, 2},   {"uint32", K_UINT, 4},
    {"uint64", K_UINT, 8},   {"float16", K_HALF, 2}, {"float32", K_FLOAT, 4}, {"float64", K_FLOAT, 8},
    {"complex64", K_COMPLEX, 8}, {"complex128", K_COMPLEX, 16},
};
static int emu_type(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof emu_types / sizeof emu_types[0]; i++)
        if (strlen(emu_types[i].name) == len && strncmp(name, emu_types[i].name, len) == 0) return (int)i;
    return -1;
}

/* The PTX conversions the kernels' prelude uses: cvt.f32.f16, cvt.rn.f16.f64. */
static float emu_h2f(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m + 1024), e - 25);
    return h >> 15 ? -v : v;
}
static uint16_t emu_d2h(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d), f;
    int e;
    if (isnan(d)) return 0x7e00;
    if (a >= 65520.0) return sign | 0x7c00;                         /* rounds to infinity */
    if (a < 0x1p-14) return sign | (uint16_t)nearbyint(a * 0x1p24); /* subnormal (1024 carries into normal) */
    f = frexp(a, &e);                                               /* a = f * 2^e, f in [0.5, 1) */
    return sign | (uint16_t)(((e + 14) << 10) + (int)nearbyint((2 * f - 1) * 1024));
}

/* A source element: an exact integer, or a real and imaginary part. */
struct emu_value {
    int integer, is_signed;
    long long i;
    unsigned long long u;
    double re, im;
};

static struct emu_value emu_load(int t, const unsigned char *p) {
    struct emu_value v = {0};
    int kind = emu_types[t].kind, size = emu_types[t].size;
    if (kind == K_BOOL || kind == K_UINT) {
        memcpy(&v.u, p, (size_t)size); /* little-endian */
        if (kind == K_BOOL) v.u = v.u != 0;
        v.integer = 1, v.i = (long long)v.u;
    } else if (kind == K_INT) {
        int64_t x = 0;
        memcpy(&x, p, (size_t)size);
        x = (int64_t)((uint64_t)x << (64 - 8 * size)) >> (64 - 8 * size); /* sign-extend */
        v.integer = v.is_signed = 1, v.i = x, v.u = (unsigned long long)x;
    } else if (kind == K_HALF) {
        uint16_t h;
        memcpy(&h, p, 2);
        v.re = emu_h2f(h);
    } else if (kind == K_FLOAT || kind == K_COMPLEX) {
        int part = kind == K_COMPLEX ? size / 2 : size;
        float f[2];
        double d[2];
        if (part == 4) memcpy(f, p, (size_t)size), v.re = f[0], v.im = kind == K_COMPLEX ? f[1] : 0;
        else memcpy(d, p, (size_t)size), v.re = d[0], v.im = kind == K_COMPLEX ? d[1] : 0;
    }
    return v;
}

/* As C converts the value to a float (from the integer itself, rounded once). */
static float emu_as_float(const struct emu_value *v) {
    return !v->integer ? (float)v->re : v->is_signed ? (float)v->i : (float)v->u;
}
static double emu_as_double(const struct emu_value *v) {
    return !v->integer ? v->re : v->is_signed ? (double)v->i : (double)v->u;
}

static void emu_store(int t, unsigned char *p, const struct emu_value *v) {
    int kind = emu_types[t].kind, size = emu_types[t].size;
    if (kind == K_BOOL) {
        p[0] = v->integer ? v->u != 0 : (v->re != 0 || v->im != 0);
    } else if (kind == K_INT || kind == K_UINT) {
        unsigned long long bits = v->integer ? v->u
                                  : kind == K_INT ? (unsigned long long)(long long)v->re
                                                  : (unsigned long long)v->re;
        memcpy(p, &bits, (size_t)size); /* the low bytes: C's conversion to the narrower type */
    } else if (kind == K_HALF) {
        uint16_t h = emu_d2h(emu_as_double(v));
        memcpy(p, &h, 2);
    } else if (size == 4 || (kind == K_COMPLEX && size == 8)) {
        float f[2] = {emu_as_float(v), (float)v->im};
        memcpy(p, f, (size_t)size);
    } else {
        double d[2] = {emu_as_double(v), v->im};
        memcpy(p, d, (size_t)size);
    }
}

/* -- the launches -- */

static long long emu_arg(void **params, int i) {
    long long v;
    memcpy(&v, params[i], sizeof v);
    return v;
}

/* Byte offset of element ``i`` of the (n0, n1, n2, n3) box with strides s. */
static long long emu_offset(long long i, const long long *n, const long long *s) {
    long long i3 = i % n[3], r = i / n[3];
    long long i2 = r % n[2];
    r /= n[2];
    return (r / n[1]) * s[0] + (r % n[1]) * s[1] + i2 * s[2] + i3 * s[3];
}

static int emu_copy_kernel(const char *name, int src_t, int dst_t, void **params) {
    emu_u64 src = (emu_u64)emu_arg(params, 0), dst = (emu_u64)emu_arg(params, 1);
    long long count = emu_arg(params, 2), n[4] = {0, emu_arg(params, 3), emu_arg(params, 4), emu_arg(params, 5)};
    long long a[4], b[4];
    size_t ss = (size_t)emu_types[src_t].size, ds = (size_t)emu_types[dst_t].size;
    for (int k = 0; k < 4; k++) a[k] = emu_arg(params, 6 + k), b[k] = emu_arg(params, 10 + k);
    for (long long i = 0; i < count; i++) {
        emu_u64 from = src + (emu_u64)emu_offset(i, n, a), to = dst + (emu_u64)emu_offset(i, n, b);
        unsigned char *s, *d;
        struct emu_value v;
        emu_lock();
        s = emu_device(from, ss), d = emu_device(to, ds);
        if (s && d) v = emu_load(src_t, s), emu_store(dst_t, d, &v);
        emu_unlock();
        if (!s || !d)
            return emu_violation("cuLaunchKernel", 700, "%s: element %lld (%#llx to %#llx) outside every live "
                                 "allocation", name, i, from, to);
    }
    return 0;
}

static int emu_fill_kernel(const char *name, int itemsize, void **params) {
    emu_u64 dst = (emu_u64)emu_arg(params, 0);
    long long count = emu_arg(params, 1), n[4] = {0, emu_arg(params, 2), emu_arg(params, 3), emu_arg(params, 4)};
    long long b[4];
    unsigned long long bits[2] = {(unsigned long long)emu_arg(params, 9), (unsigned long long)emu_arg(params, 10)};
    for (int k = 0; k < 4; k++) b[k] = emu_arg(params, 5 + k);
    for (long long i = 0; i < count; i++) {
        emu_u64 to = dst + (emu_u64)emu_offset(i, n, b);
        unsigned char *d;
        emu_lock();
        if ((d = emu_device(to, (size_t)itemsize))) memcpy(d, bits, (size_t)itemsize);
        emu_unlock();
        if (!d)
            return emu_violation("cuLaunchKernel", 700, "%s: element %lld at %#llx outside every live allocation",
                                 name, i, to);
    }
    return 0;
}

/* Runs an array kernel: its name says the element types (or size). */
static int emu_run(const char *name, void **params) {
    const char *types = name + 12, *split = strchr(types, '_');
    if (strncmp(name, "cubind_fill_", 12) == 0) {
        int itemsize = atoi(types);
        if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8 && itemsize != 16)
            return emu_violation("cuLaunchKernel", 1, "%s: no such element size", name);
        return emu_fill_kernel(name, itemsize, params);
    }
    int src = split ? emu_type(types, (size_t)(split - types)) : -1, dst = split ? emu_type(split + 1, strlen(split + 1)) : -1;
    if (src < 0 || dst < 0) return emu_violation("cuLaunchKernel", 1, "%s: unknown element types", name);
    return emu_copy_kernel(name, src, dst, params);
}

int emu_launch(emu_u64 f, void **params, emu_u64 stream, int *rc) {
    char name[48];
    int index = (int)((f - EMU_KERNEL_BASE) / 16);
    if (f < EMU_KERNEL_BASE || (f - EMU_KERNEL_BASE) % 16 || index >= emu_kernels_used) return 0;
    emu_lock();
    memcpy(name, emu_kernel_names[index], sizeof name);
    emu_unlock();
    emu_record_launch(name, stream);
    if (emu_refuse_kernels) *rc = emu_violation("cuLaunchKernel", 1, "the test's layouts need no %s kernel", name);
    else *rc = emu_run(name, params);
    return 1;
}
