"""The array's own kernels: a strided copy that converts element types (for
``astype`` and for layouts the copy engines cannot walk) and a strided fill.

Each kernel covers up to four axes (shape and byte strides as scalar
parameters, after merging axes: most views need one or two); a layout with
more axes is launched once per index of its leading ones. Sources are made
per element type (pair), compiled with :class:`cubind.Program` on first use
(its disk cache makes later processes skip NVRTC) and kept per device.
"""

import threading
from typing import TYPE_CHECKING

import numpy as np

from cubind._core import lifetime as _lifetime
from cubind._memory.dtypes import C_TYPES
from cubind._memory.layout import size_of

if TYPE_CHECKING:
    from cubind._launch.kernel import Kernel

__all__ = ["copy_strided", "fill_strided", "convert_expr", "PRELUDE", "copy_kernel_name", "copy_kernel_source",
           "fill_kernel_name", "fill_kernel_source", "KERNEL_AXES"]

KERNEL_AXES = 4
_BLOCK = 256
_MAX_BLOCKS = 1 << 20  # a grid-stride loop covers the rest

# Storage types the conversions need: half as its bits (converted with PTX's
# cvt, so that no header is needed), complex as numpy lays it out.
PRELUDE = r"""
struct f16 { unsigned short bits; };
struct c64 { float re, im; };
struct c128 { double re, im; };
struct b16 { unsigned long long lo, hi; };
__device__ __forceinline__ float h2f(f16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
__device__ __forceinline__ f16 d2h(double d) {
    f16 h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(d));
    return h;
}
"""

# Index arithmetic shared by both kernels: element i of the (n0, n1, n2, n3)
# box at byte offsets off_a (strides a*) and off_b (strides b*).
_WALK = r"""
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        long long r = i;
        const long long i3 = r % n3; r /= n3;
        const long long i2 = r % n2; r /= n2;
        const long long i1 = r % n1;
        const long long i0 = r / n1;
"""

_NP_FLOAT16 = np.dtype(np.float16)
_NP_COMPLEX64 = np.dtype(np.complex64)


def convert_expr(src, dst):
    """C++ expression converting ``v`` (of ``src``'s storage type) to
    ``dst``'s storage type, as numpy's ``astype`` does for values both can
    hold: complex to real takes the real part, to bool tests both parts."""
    if src == dst:
        return "v"
    if src.kind == "c":
        re, im = "v.re", "v.im"
    elif src == _NP_FLOAT16:
        re, im = "h2f(v)", None
    elif src.kind == "b":
        re, im = "(v != 0)", None
    else:
        re, im = "v", None
    if dst.kind == "b":
        nonzero = f"{re} != 0" + (f" || {im} != 0" if im else "")
        return f"(unsigned char)({nonzero})"
    if dst == _NP_FLOAT16:
        return f"d2h((double)({re}))"
    if dst.kind == "c":
        part = "float" if dst == _NP_COMPLEX64 else "double"
        return f"{C_TYPES[dst]}{{({part})({re}), ({part})({im or 0})}}"
    return f"({C_TYPES[dst]})({re})"


def copy_kernel_name(src, dst):
    """The copy kernel's name, which says its element types: a profiler's
    timeline, or a driver log, then tells each conversion apart."""
    return f"cubind_copy_{src.name}_{dst.name}"


def fill_kernel_name(itemsize):
    return f"cubind_fill_{itemsize}"


def copy_kernel_source(src, dst):
    """The strided converting copy from ``src`` to ``dst`` elements (no
    prelude)."""
    name = copy_kernel_name(src, dst)
    return f"""
extern "C" __global__ void {name}(const char *src, char *dst, long long n, long long n1, long long n2, long long n3,
        long long a0, long long a1, long long a2, long long a3,
        long long b0, long long b1, long long b2, long long b3) {{
    typedef {C_TYPES[src]} S;
    typedef {C_TYPES[dst]} D;
{_WALK}
        const S v = *(const S *)(src + i0 * a0 + i1 * a1 + i2 * a2 + i3 * a3);
        *(D *)(dst + i0 * b0 + i1 * b1 + i2 * b2 + i3 * b3) = {convert_expr(src, dst)};
    }}
}}
"""


_FILL_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long", 16: "b16"}


def fill_kernel_source(itemsize):
    """The strided fill of ``itemsize``-byte elements with the bits
    ``(lo, hi)`` (no prelude)."""
    name = fill_kernel_name(itemsize)
    t = _FILL_TYPES[itemsize]
    value = "b16{lo, hi}" if itemsize == 16 else f"({t})lo"
    return f"""
extern "C" __global__ void {name}(char *dst, long long n, long long n1, long long n2, long long n3,
        long long b0, long long b1, long long b2, long long b3, unsigned long long lo, unsigned long long hi) {{
    const {t} value = {value};
{_WALK}
        *({t} *)(dst + i0 * b0 + i1 * b1 + i2 * b2 + i3 * b3) = value;
    }}
}}
"""


_lock = threading.Lock()
_kernels: dict[tuple, "Kernel"] = {}  # (kind, *types, device) -> Kernel
_resets = [0]  # the resets the cache has seen (cubind._core.lifetime.resets)


def _kernel(key, source, name):
    if _resets[0] != _lifetime.resets:
        # Device.reset() unloaded their modules: compile (from the disk cache) anew.
        with _lock:
            _kernels.clear()
            _resets[0] = _lifetime.resets
    kernel = _kernels.get(key)
    if kernel is None:
        from cubind._compile.program import Program

        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                module = Program(PRELUDE + source, name=f"{name}.cu").compile("cubin")
                kernel = module.get_kernel(name)
                _kernels[key] = kernel
    return kernel


def _boxes(shape, *stride_lists):
    """(shape, strides, offsets) launches covering a layout: the last
    KERNEL_AXES axes per launch, one launch per index of the axes before."""
    lead = len(shape) - KERNEL_AXES
    if lead <= 0:
        pad = KERNEL_AXES - len(shape)
        yield (1,) * pad + tuple(shape), [(0,) * pad + tuple(s) for s in stride_lists], [0] * len(stride_lists)
        return
    inner = tuple(shape[lead:])
    inner_strides = [tuple(s[lead:]) for s in stride_lists]
    for flat in range(size_of(shape[:lead])):
        offsets, r = [0] * len(stride_lists), flat
        for axis in reversed(range(lead)):
            r, i = divmod(r, shape[axis])
            for k, s in enumerate(stride_lists):
                offsets[k] += i * s[axis]
        yield inner, inner_strides, offsets


def _grid(n):
    return min((n + _BLOCK - 1) // _BLOCK, _MAX_BLOCKS)


def copy_strided(src_ptr, src_dtype, src_strides, dst_ptr, dst_dtype, dst_strides, shape, stream, device):
    """Queues on ``stream`` the copy of ``shape`` elements from the layout at
    ``src_ptr`` to the one at ``dst_ptr``, converting the element type."""
    kernel = _kernel(("copy", src_dtype, dst_dtype, device), copy_kernel_source(src_dtype, dst_dtype),
                     copy_kernel_name(src_dtype, dst_dtype))
    for box, (a, b), (oa, ob) in _boxes(shape, src_strides, dst_strides):
        n = size_of(box)
        if n:
            kernel(_grid(n), _BLOCK, src_ptr + oa, dst_ptr + ob, n, box[1], box[2], box[3], *a, *b, stream=stream)


def fill_strided(dst_ptr, itemsize, dst_strides, shape, bits, stream, device):
    """Queues on ``stream`` the fill of the layout at ``dst_ptr`` with the
    element whose bytes are ``bits``."""
    kernel = _kernel(("fill", itemsize, device), fill_kernel_source(itemsize), fill_kernel_name(itemsize))
    raw = bytes(bits).ljust(16, b"\0")
    lo, hi = int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")
    for box, (b,), (ob,) in _boxes(shape, dst_strides):
        n = size_of(box)
        if n:
            kernel(_grid(n), _BLOCK, dst_ptr + ob, n, box[1], box[2], box[3], *b, lo, hi, stream=stream)
