# cython: language_level=3
from libc.stdint cimport uintptr_t


cdef class Allocation:
    """The base of a device allocation the core must be able to free at exit
    and drop at a reset (cubind._memory's DeviceMemory derives from it)."""
    cdef uintptr_t _ctx      # the CUcontext it was allocated in
    cdef void* _prev         # the live list (see allocations.pyx)
    cdef void* _next
    cdef bint _linked
    cdef void _link(self)
    cdef void _unlink(self)
    cdef _release_at_exit(self)
    cdef _release_for_reset(self)
    cdef bint _release_uncaptured(self) except -1


cdef void stream_used(object handle)
cdef void stream_unused(object handle, bint destroy)
cdef void wait_for_capture(Allocation mem)
cdef bint any_waiting()
