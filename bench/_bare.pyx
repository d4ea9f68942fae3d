# cython: language_level=3, binding=False
"""The bare call: each benchmarked C call behind a Python function of the
floor's shape (_pyfloor.pyx) that converts nothing and checks nothing: handles
and pointers pass as ints, a status is returned as it comes. No binding can be
cheaper. What cubind costs above this row is its conversions and checks; what
this row costs above the floor plus C is the driver call itself being slower
from a Python process than in C's hot loop (caches and branch predictors shared
with the interpreter)."""

from libc.stdint cimport uintptr_t


# c_X is the C function X; X is its Python function.
cdef extern from "cuda.h" nogil:
    ctypedef int CUresult
    ctypedef int CUdevice
    ctypedef int CUdevice_attribute
    ctypedef int CUpointer_attribute
    ctypedef unsigned long long CUdeviceptr
    ctypedef void* CUcontext
    ctypedef void* CUevent
    ctypedef void* CUstream
    ctypedef void* CUfunction
    CUresult c_cuCtxGetCurrent "cuCtxGetCurrent"(CUcontext* pctx)
    CUresult c_cuDeviceGet "cuDeviceGet"(CUdevice* device, int ordinal)
    CUresult c_cuDeviceGetAttribute "cuDeviceGetAttribute"(int* pi, CUdevice_attribute attrib, CUdevice dev)
    CUresult c_cuPointerGetAttribute "cuPointerGetAttribute"(void* data, CUpointer_attribute attribute,
                                                             CUdeviceptr ptr)
    CUresult c_cuEventRecord "cuEventRecord"(CUevent hEvent, CUstream hStream)
    CUresult c_cuStreamQuery "cuStreamQuery"(CUstream hStream)
    CUresult c_cuMemcpyHtoDAsync "cuMemcpyHtoDAsync"(CUdeviceptr dstDevice, const void* srcHost,
                                                     size_t ByteCount, CUstream hStream)
    CUresult c_cuMemAlloc "cuMemAlloc"(CUdeviceptr* dptr, size_t bytesize)
    CUresult c_cuMemFree "cuMemFree"(CUdeviceptr dptr)
    CUresult c_cuMemcpyHtoD "cuMemcpyHtoD"(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount)
    CUresult c_cuMemcpyDtoH "cuMemcpyDtoH"(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount)
    CUresult c_cuLaunchKernel "cuLaunchKernel"(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                            unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                            unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra)


cdef extern from "cuda_runtime_api.h" nogil:
    ctypedef int cudaError_t
    ctypedef struct dim3:
        unsigned int x, y, z
    cudaError_t c_cudaGetDevice "cudaGetDevice"(int* device)
    cudaError_t c_cudaStreamQuery "cudaStreamQuery"(CUstream stream)
    cudaError_t c_cudaLaunchKernel "cudaLaunchKernel"(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                      size_t sharedMem, CUstream stream)


cdef extern from "nvrtc.h" nogil:
    ctypedef int nvrtcResult
    nvrtcResult c_nvrtcVersion "nvrtcVersion"(int* major, int* minor)


cdef tuple _success = (0,)


cdef inline tuple _status(int r):
    return _success if r == 0 else (r,)


def cuCtxGetCurrent():
    cdef CUcontext ctx
    cdef CUresult r = c_cuCtxGetCurrent(&ctx)
    return (r, <uintptr_t>ctx)


def cuDeviceGet(int ordinal):
    cdef CUdevice dev
    cdef CUresult r = c_cuDeviceGet(&dev, ordinal)
    return (r, dev)


def cuDeviceGetAttribute(int attrib, int dev):
    cdef int value
    cdef CUresult r = c_cuDeviceGetAttribute(&value, <CUdevice_attribute>attrib, dev)
    return (r, value)


def cuPointerGetAttribute(int attribute, CUdeviceptr ptr):
    # MEMORY_TYPE, the attribute timed: an unsigned int, returned as an int.
    cdef unsigned int value = 0
    cdef CUresult r = c_cuPointerGetAttribute(&value, <CUpointer_attribute>attribute, ptr)
    return (r, value)


def cuEventRecord(uintptr_t event, uintptr_t stream):
    cdef CUresult r
    with nogil:
        r = c_cuEventRecord(<CUevent>event, <CUstream>stream)
    return _status(r)


def cuStreamQuery(uintptr_t stream):
    cdef CUresult r
    with nogil:
        r = c_cuStreamQuery(<CUstream>stream)
    return _status(r)


def cuMemcpyHtoDAsync(CUdeviceptr dst, uintptr_t src, size_t count, uintptr_t stream):
    cdef CUresult r
    with nogil:
        r = c_cuMemcpyHtoDAsync(dst, <const void*>src, count, <CUstream>stream)
    return _status(r)


def cuLaunchKernel(uintptr_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                   unsigned int by, unsigned int bz, unsigned int shared, uintptr_t stream, uintptr_t params,
                   uintptr_t extra):
    cdef CUresult r
    with nogil:
        r = c_cuLaunchKernel(<CUfunction>f, gx, gy, gz, bx, by, bz, shared, <CUstream>stream, <void**>params,
                           <void**>extra)
    return _status(r)


def nvrtcVersion():
    cdef int major, minor
    cdef nvrtcResult r = c_nvrtcVersion(&major, &minor)
    return (r, major, minor)


def cudaGetDevice():
    cdef int device
    cdef cudaError_t r = c_cudaGetDevice(&device)
    return (r, device)


def cudaStreamQuery(uintptr_t stream):
    cdef cudaError_t r
    with nogil:
        r = c_cudaStreamQuery(<CUstream>stream)
    return _status(r)


# A dim3 comes as an (x, y, z) tuple of ints: the least a Python caller can hand over.
def cudaLaunchKernel(uintptr_t f, (unsigned int, unsigned int, unsigned int) grid,
                     (unsigned int, unsigned int, unsigned int) block, uintptr_t params, size_t shared,
                     uintptr_t stream):
    cdef dim3 g = dim3(grid[0], grid[1], grid[2])
    cdef dim3 b = dim3(block[0], block[1], block[2])
    cdef cudaError_t r
    with nogil:
        r = c_cudaLaunchKernel(<const void*>f, g, b, <void**>params, shared, <CUstream>stream)
    return _status(r)


# The copy rows' C calls (host addresses as ints), in a process whose device
# allocations are the cubind worker's: what a 1 MiB cuMemAlloc/cuMemFree costs
# depends on the allocations already live (alloc_state.c), so C's own process
# is no reference for to_gpu's allocation.
def cuMemcpyHtoD(CUdeviceptr dst, uintptr_t src, size_t count):
    cdef CUresult r
    with nogil:
        r = c_cuMemcpyHtoD(dst, <const void*>src, count)
    return _status(r)


def cuMemcpyDtoH(uintptr_t dst, CUdeviceptr src, size_t count):
    cdef CUresult r
    with nogil:
        r = c_cuMemcpyDtoH(<void*>dst, src, count)
    return _status(r)


def to_gpu(uintptr_t src, size_t count):
    """What to_gpu does: allocate, copy, free (the free as the array goes)."""
    cdef CUdeviceptr p = 0
    cdef CUresult r
    with nogil:
        r = c_cuMemAlloc(&p, count)
        if r == 0:
            r = c_cuMemcpyHtoD(p, <const void*>src, count)
            c_cuMemFree(p)
    return _status(r)
