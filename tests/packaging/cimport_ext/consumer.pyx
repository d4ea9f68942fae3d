# cython: language_level=3
"""A library author's extension: it cimports cubind's C-level driver API and
handle classes and calls them without Python in between (tests/packaging/test_cimport.py
builds and runs it)."""
from libc.stdint cimport uintptr_t

from cuda cimport cdriver as c
from cuda._driver cimport CUdeviceptr, CUstream


def driver_version():
    """(status, version) from cuDriverGetVersion, called nogil."""
    cdef int version = 0
    cdef c.CUresult err
    with nogil:
        err = c.cuDriverGetVersion(&version)
    return <int>err, version


def stream_value(CUstream stream):
    """The raw CUstream inside cubind's handle class."""
    return <uintptr_t>stream._ptr


def fill(const char* ptx, unsigned int n, unsigned int value):
    """Loads `ptx`, launches its `fill(out, value, n)` and returns what it wrote:
    the whole driver flow at C level, with the GIL released."""
    cdef c.CUresult err = c.CUDA_SUCCESS
    cdef c.CUdevice dev
    cdef c.CUcontext ctx = NULL
    cdef c.CUmodule module = NULL
    cdef c.CUfunction f
    cdef c.CUdeviceptr out = 0
    cdef void* args[3]
    cdef list result = [0] * n
    cdef unsigned int[256] host
    if n > 256:
        raise ValueError("n: at most 256")
    args[0] = &out
    args[1] = &value
    args[2] = &n
    with nogil:
        err = c.cuInit(0)
        if err == c.CUDA_SUCCESS:
            err = c.cuDeviceGet(&dev, 0)
        if err == c.CUDA_SUCCESS:
            err = c.cuDevicePrimaryCtxRetain(&ctx, dev)
        if err == c.CUDA_SUCCESS:
            err = c.cuCtxPushCurrent(ctx)
        if err == c.CUDA_SUCCESS:
            err = c.cuModuleLoadData(&module, ptx)
        if err == c.CUDA_SUCCESS:
            err = c.cuModuleGetFunction(&f, module, "fill")
        if err == c.CUDA_SUCCESS:
            err = c.cuMemAlloc(&out, n * sizeof(unsigned int))
        if err == c.CUDA_SUCCESS:
            err = c.cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL)
        if err == c.CUDA_SUCCESS:
            err = c.cuMemcpyDtoH(host, out, n * sizeof(unsigned int))
        if out:
            c.cuMemFree(out)
        if module != NULL:
            c.cuModuleUnload(module)
        if ctx != NULL:
            c.cuCtxPopCurrent(&ctx)
    if err != c.CUDA_SUCCESS:
        return <int>err, None
    for i in range(n):
        result[i] = host[i]
    return 0, result


def as_handle(uintptr_t address):
    """A cubind handle object made at C level."""
    cdef CUdeviceptr ptr = CUdeviceptr.__new__(CUdeviceptr)
    ptr._ptr = address
    return ptr
