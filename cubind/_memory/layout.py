"""Shape and stride arithmetic of strided arrays: no device, no numpy arrays.

Strides are in bytes, as numpy's are. Every function here is pure so that
views, reshapes and the choice of how to copy a layout can be checked
without a GPU.
"""

import operator
from collections import namedtuple

__all__ = ["normalize_shape", "c_strides", "is_c_contiguous", "index", "reshape", "transpose",
           "collapse", "plan_copy", "Plan", "extent"]

# The largest pitch cuMemcpy2D takes (CU_DEVICE_ATTRIBUTE_MAX_PITCH on every
# GPU since Fermi); a wider row step goes to the copy kernel instead.
MAX_PITCH = 2**31 - 1
# Layouts needing more than this many cuMemcpy2D calls use the copy kernel:
# each call costs microseconds, a kernel one launch.
MAX_ROW_COPIES = 16
# Rows narrower than this are slow through the copy engines when there are
# many of them; past MANY_NARROW_ROWS such rows the kernel is faster.
NARROW_ROW = 32
MANY_NARROW_ROWS = 4096


def normalize_shape(shape, param="shape"):
    """``shape`` (an int or a sequence of ints) as a tuple of ints >= 0."""
    if type(shape) is tuple:  # the usual case (a numpy shape), at a fraction of the general path's cost
        for n in shape:
            if type(n) is not int or n < 0:
                break
        else:
            return shape
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(operator.index(n) for n in shape)
        except TypeError:
            raise TypeError(f"{param}: expected an int or a sequence of ints, not {shape!r}") from None
    for n in dims:
        if n < 0:
            raise ValueError(f"{param}: negative dimensions are not allowed, got {dims}")
    return dims


def size_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def c_strides(shape, itemsize):
    """The byte strides of a C-contiguous array of ``shape``."""
    if len(shape) == 1:
        return (itemsize,)
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_c_contiguous(shape, strides, itemsize):
    """Whether the elements lie in C order with no gaps (axes of length 1
    may have any stride; an empty array is contiguous)."""
    if 0 in shape:
        return True
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def extent(shape, strides, itemsize):
    """(lowest, highest + 1) byte offsets the layout touches from its start;
    (0, 0) when empty."""
    if 0 in shape:
        return 0, 0
    low = high = 0
    for n, s in zip(shape, strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high + itemsize


def index(shape, strides, key):
    """Basic indexing: ``(byte offset, shape, strides)`` of ``array[key]`` for
    ints, slices (any step), ``Ellipsis`` and ``None``."""
    if not isinstance(key, tuple):
        key = (key,)
    ellipses = sum(1 for k in key if k is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(f"too many indices: the array is {ndim}-dimensional, but {consumed} were indexed")
    fill = (slice(None),) * (ndim - consumed)
    if ellipses:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + fill + key[at + 1:]
    else:
        key = key + fill
    offset, out_shape, out_strides, axis = 0, [], [], 0
    for k in key:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        n, s = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                offset += start * s
            out_shape.append(length)
            out_strides.append(s * step)
        else:
            offset += s * _integer_index(k, n, axis)
        axis += 1
    return offset, tuple(out_shape), tuple(out_strides)


def _integer_index(k, n, axis):
    if isinstance(k, bool) or type(k).__name__ in ("bool", "bool_"):  # numpy's bool scalars too
        raise TypeError("boolean indices are not supported on a cubind.Array (only ints, slices, '...' and None)")
    try:
        i = operator.index(k)
    except TypeError:
        raise TypeError(f"index {k!r} is not supported: a cubind.Array takes ints, slices, '...' and None "
                        f"(no advanced indexing with arrays or lists)") from None
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i + n if i < 0 else i


def reshape(shape, new_shape):
    """``new_shape`` with its one ``-1`` resolved; the sizes must match."""
    try:
        dims = (operator.index(new_shape),)
    except TypeError:
        try:
            dims = tuple(operator.index(n) for n in new_shape)
        except TypeError:
            raise TypeError(f"shape: expected an int or a sequence of ints, not {new_shape!r}") from None
    size = size_of(shape)
    unknown = [i for i, n in enumerate(dims) if n == -1]
    if len(unknown) > 1:
        raise ValueError(f"shape: can only specify one unknown dimension (-1), got {dims}")
    if any(n < -1 for n in dims):
        raise ValueError(f"shape: negative dimensions are not allowed, got {dims}")
    if unknown:
        known = size_of(n for n in dims if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"shape: cannot reshape an array of size {size} into shape {dims}")
        dims = tuple(size // known if n == -1 else n for n in dims)
    if size_of(dims) != size:
        raise ValueError(f"shape: cannot reshape an array of size {size} into shape {dims}")
    return dims


def transpose(shape, strides, axes):
    """(shape, strides) with the axes permuted; no axes reverses them."""
    ndim = len(shape)
    if not axes:
        axes = tuple(range(ndim))[::-1]
    elif len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    try:
        axes = tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"axes: expected ints, got {axes!r}") from None
    norm = tuple(a + ndim if a < 0 else a for a in axes)
    if sorted(norm) != list(range(ndim)):
        raise ValueError(f"axes: {axes} is not a permutation of the {ndim} axes")
    return tuple(shape[a] for a in norm), tuple(strides[a] for a in norm)


def collapse(shape, *stride_lists):
    """Drops axes of length 1 and merges neighbouring axes that every stride
    list walks as one: ``(shape, [strides, ...])`` with the fewest axes."""
    kept = [(n, [s[i] for s in stride_lists]) for i, n in enumerate(shape) if n != 1]
    out = []
    for n, ss in reversed(kept):
        if out:
            inner_n, inner_ss = out[-1]
            if all(s == inner_n * t for s, t in zip(ss, inner_ss)):
                out[-1] = (n * inner_n, inner_ss)
                continue
        out.append((n, ss))
    out.reverse()
    return tuple(n for n, _ in out), [tuple(ss[k] for _, ss in out) for k in range(len(stride_lists))]


# kind: "empty" (nothing to copy), "contiguous" (one copy of nbytes),
# "rows" (cuMemcpy2D of height rows of width bytes at each (src, dst) offset
# pair), "kernel" (the strided copy kernel over shape/src/dst strides).
Plan = namedtuple("Plan", "kind nbytes width height src_pitch dst_pitch offsets shape src_strides dst_strides")


def plan_copy(shape, itemsize, src_strides, dst_strides):
    """How to copy elements between two layouts of the same shape: one
    contiguous copy, a few 2-D copies, or the strided copy kernel."""
    if 0 in shape:
        return Plan("empty", 0, 0, 0, 0, 0, (), shape, src_strides, dst_strides)
    dims, (src, dst) = collapse(shape, src_strides, dst_strides)
    nbytes = size_of(dims) * itemsize
    if not dims or (len(dims) == 1 and src[0] == dst[0] == itemsize):
        return Plan("contiguous", nbytes, 0, 0, 0, 0, (), dims, src, dst)
    kernel = Plan("kernel", nbytes, 0, 0, 0, 0, (), dims, src, dst)
    if src[-1] == dst[-1] == itemsize:
        width, outer, outer_src, outer_dst = dims[-1] * itemsize, dims[:-1], src[:-1], dst[:-1]
    else:
        width, outer, outer_src, outer_dst = itemsize, dims, src, dst
    height, src_pitch, dst_pitch = outer[-1], outer_src[-1], outer_dst[-1]
    if not (width <= src_pitch <= MAX_PITCH and width <= dst_pitch <= MAX_PITCH):
        return kernel
    if size_of(outer[:-1]) > MAX_ROW_COPIES:
        return kernel
    offsets = [(0, 0)]
    for n, s, d in zip(outer[:-1], outer_src[:-1], outer_dst[:-1]):
        offsets = [(a + i * s, b + i * d) for a, b in offsets for i in range(n)]
    if width < NARROW_ROW and height * len(offsets) > MANY_NARROW_ROWS:
        return kernel
    return Plan("rows", nbytes, width, height, src_pitch, dst_pitch, tuple(offsets), dims, src, dst)
