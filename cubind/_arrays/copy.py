"""Moving array elements: host to device, device to host, device to device,
and filling, for any layout.

Each transfer is planned by :func:`cubind._memory.layout.plan_copy`: one
``cuMemcpy`` where both sides are contiguous, a few ``cuMemcpy2D`` where the
layout is rows at a fixed pitch (a column block of a matrix), else the
strided copy kernel, through a contiguous device buffer where one side is on
the host. The host side is always contiguous here (the array supplies a
contiguous copy or buffer).

``stream`` is a raw handle; ``sync`` says whether the host waits for the
transfer. When it does not, the host buffer and the device memory are kept
alive (:mod:`cubind._core.pending`) until the work on the stream is done.
"""

import numpy as np

from cubind._arrays.kernels import copy_strided, fill_strided
from cubind._core import pending as _pending
from cubind._core.driver import module as _driver
from cubind._core.errors import check
from cubind._memory.layout import Plan, collapse, plan_copy
from cubind._memory.memory import DeviceMemory

__all__ = ["to_device", "to_host", "device_to_device", "fill"]

# Both sides C-contiguous (the host side always is here): one copy of the
# host array's bytes, with no planning.
_CONTIGUOUS = Plan("contiguous", None, 0, 0, 0, 0, (), None, None, None)


def _memcpy_2d(cuda, plan, src, src_host, dst, dst_host, stream, sync):
    """The plan's rows, each of its offsets one cuMemcpy2D; src/dst are
    addresses, *_host say which are host memory."""
    M = cuda.CUmemorytype
    for src_off, dst_off in plan.offsets:
        copy = cuda.CUDA_MEMCPY2D()
        if src_host:
            copy.srcMemoryType, copy.srcHost = M.CU_MEMORYTYPE_HOST, src + src_off
        else:
            copy.srcMemoryType, copy.srcDevice = M.CU_MEMORYTYPE_DEVICE, src + src_off
        if dst_host:
            copy.dstMemoryType, copy.dstHost = M.CU_MEMORYTYPE_HOST, dst + dst_off
        else:
            copy.dstMemoryType, copy.dstDevice = M.CU_MEMORYTYPE_DEVICE, dst + dst_off
        copy.srcPitch, copy.dstPitch = plan.src_pitch, plan.dst_pitch
        copy.WidthInBytes, copy.Height = plan.width, plan.height
        if sync and stream == 0:
            check(cuda.cuMemcpy2D(copy), "cuMemcpy2D")
        else:
            check(cuda.cuMemcpy2DAsync(copy, stream), "cuMemcpy2DAsync")


def _finish(cuda, stream, sync, *keep):
    """Waits for the stream where the caller waits, else keeps ``keep`` alive
    until the queued work is done."""
    if sync:
        if stream != 0:
            check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize")
    elif keep:
        _pending.hold(stream, *keep)


def to_device(dst, host, stream, sync):
    """Copies the C-contiguous numpy array ``host`` into the array ``dst``
    (same shape and dtype)."""
    cuda = _driver()
    plan = _CONTIGUOUS if dst.c_contiguous else plan_copy(host.shape, host.itemsize, host.strides, dst.strides)
    if plan.kind == "empty" or not host.size:
        return
    ptr = dst.ptr
    if plan.kind == "contiguous":
        nbytes = host.nbytes
        if sync and stream == 0:
            check(cuda.cuMemcpyHtoD(ptr, host, nbytes), "cuMemcpyHtoD")
        else:
            check(cuda.cuMemcpyHtoDAsync(ptr, host, nbytes, stream), "cuMemcpyHtoDAsync")
    elif plan.kind == "rows":
        _memcpy_2d(cuda, plan, host.ctypes.data, True, ptr, False, stream, sync)
    else:
        staging = DeviceMemory(plan.nbytes, stream)
        check(cuda.cuMemcpyHtoDAsync(staging.ptr, host, plan.nbytes, stream), "cuMemcpyHtoDAsync")
        copy_strided(staging.ptr, dst.dtype, plan.src_strides, ptr, dst.dtype, plan.dst_strides, plan.shape,
                     stream, staging.device)
        staging.release()  # stream-ordered: after the kernel
    _finish(cuda, stream, sync, host, dst.memory)


def to_host(src, host, stream, sync):
    """Copies the array ``src`` into the C-contiguous, writable numpy array
    ``host`` (same shape and dtype)."""
    cuda = _driver()
    plan = _CONTIGUOUS if src.c_contiguous else plan_copy(host.shape, host.itemsize, src.strides, host.strides)
    if plan.kind == "empty" or not host.size:
        return
    ptr = src.ptr
    if plan.kind == "contiguous":
        nbytes = host.nbytes
        if sync and stream == 0:
            check(cuda.cuMemcpyDtoH(host, ptr, nbytes), "cuMemcpyDtoH")
        else:
            check(cuda.cuMemcpyDtoHAsync(host, ptr, nbytes, stream), "cuMemcpyDtoHAsync")
    elif plan.kind == "rows":
        _memcpy_2d(cuda, plan, ptr, False, host.ctypes.data, True, stream, sync)
    else:
        staging = DeviceMemory(plan.nbytes, stream)
        copy_strided(ptr, src.dtype, plan.src_strides, staging.ptr, src.dtype, plan.dst_strides, plan.shape,
                     stream, staging.device)
        check(cuda.cuMemcpyDtoHAsync(host, staging.ptr, plan.nbytes, stream), "cuMemcpyDtoHAsync")
        staging.release()
        if sync and stream == 0:
            check(cuda.cuStreamSynchronize(0), "cuStreamSynchronize")
    _finish(cuda, stream, sync, host, src.memory)


def device_to_device(dst, src, stream):
    """Queues on ``stream`` the copy of array ``src`` into array ``dst`` (same
    shape; the element type converts where the dtypes differ)."""
    cuda = _driver()
    if src.dtype == dst.dtype and src.c_contiguous and dst.c_contiguous:
        # The usual case (each array's layout is worked out once): one copy,
        # without planning it (plan_copy was most of a 1 MiB copy's host time).
        nbytes = dst.size * dst.itemsize
        if nbytes:
            check(cuda.cuMemcpyDtoDAsync(dst.ptr, src.ptr, nbytes, stream), "cuMemcpyDtoDAsync")
        return
    if src.dtype != dst.dtype:
        if src.size:
            shape, (src_strides, dst_strides) = collapse(dst.shape, src.strides, dst.strides)
            copy_strided(src.ptr, src.dtype, src_strides, dst.ptr, dst.dtype, dst_strides, shape, stream,
                         dst.device_ordinal)
        return
    plan = plan_copy(dst.shape, dst.itemsize, src.strides, dst.strides)
    if plan.kind == "empty":
        return
    if plan.kind == "contiguous":
        check(cuda.cuMemcpyDtoDAsync(dst.ptr, src.ptr, plan.nbytes, stream), "cuMemcpyDtoDAsync")
    elif plan.kind == "rows":
        _memcpy_2d(cuda, plan, src.ptr, False, dst.ptr, False, stream, False)
    else:
        copy_strided(src.ptr, src.dtype, plan.src_strides, dst.ptr, dst.dtype, plan.dst_strides, plan.shape,
                     stream, dst.device_ordinal)


def _memset_period(bits, ptr, pitch=None):
    """The smallest memset width (1, 2 or 4 bytes) whose repetition makes
    the element's bytes, aligned at ``ptr`` (and ``pitch``), or None."""
    for width in (1, 2, 4):
        if len(bits) % width or ptr % width or (pitch is not None and pitch % width):
            continue
        if bits == bits[:width] * (len(bits) // width):
            return width
    return None


_MEMSET = {1: "cuMemsetD8Async", 2: "cuMemsetD16Async", 4: "cuMemsetD32Async"}
_MEMSET_2D = {1: "cuMemsetD2D8Async", 2: "cuMemsetD2D16Async", 4: "cuMemsetD2D32Async"}


def fill(dst, value, stream):
    """Queues on ``stream`` the fill of array ``dst`` with ``value`` (a numpy
    scalar of its dtype): a memset where the element's bytes repeat a 1-, 2-
    or 4-byte pattern, else the fill kernel."""
    cuda = _driver()
    bits = np.asarray(value, dtype=dst.dtype).tobytes()
    plan = plan_copy(dst.shape, dst.itemsize, dst.strides, dst.strides)
    if plan.kind == "empty":
        return
    ptr = dst.ptr
    if plan.kind == "contiguous":
        width = _memset_period(bits, ptr)
        if width is not None:
            pattern = int.from_bytes(bits[:width], "little")
            name = _MEMSET[width]
            check(getattr(cuda, name)(ptr, pattern, plan.nbytes // width, stream), name)
            return
    elif plan.kind == "rows":
        width = _memset_period(bits, ptr + min(o for o, _ in plan.offsets), plan.dst_pitch)
        if width is not None and all((ptr + o) % width == 0 for o, _ in plan.offsets):
            pattern = int.from_bytes(bits[:width], "little")
            name = _MEMSET_2D[width]
            for offset, _ in plan.offsets:
                check(getattr(cuda, name)(ptr + offset, plan.dst_pitch, pattern, plan.width // width, plan.height,
                                          stream), name)
            return
    fill_strided(ptr, dst.itemsize, plan.dst_strides, plan.shape, bits, stream, dst.device_ordinal)
