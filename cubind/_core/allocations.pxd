# cython: language_level=3
from libc.stdint cimport uintptr_t


cdef class Linked:
    """A member of a list of live objects linked through the members
    themselves (see allocations.pyx): Allocation's, and cubind.Event's."""
    cdef void* _prev
    cdef void* _next
    cdef bint _linked


cdef inline void link_into(Linked member, void** head) noexcept:
    """Puts ``member`` first in the list that ``*head`` begins (inline: an
    event and an allocation are linked on every make)."""
    member._prev = NULL
    member._next = head[0]
    if head[0] != NULL:
        (<Linked>head[0])._prev = <void*>member
    head[0] = <void*>member
    member._linked = True


cdef inline void unlink_from(Linked member, void** head) noexcept:
    """Takes ``member`` out of the list that ``*head`` begins, where it is in it."""
    if not member._linked:
        return
    if member._prev != NULL:
        (<Linked>member._prev)._next = member._next
    else:
        head[0] = member._next
    if member._next != NULL:
        (<Linked>member._next)._prev = member._prev
    member._prev = member._next = NULL
    member._linked = False


cdef list linked_members(void* head)


cdef class Allocation(Linked):
    """The base of a device allocation the core must be able to free at exit
    and drop at a reset (cubind._memory's DeviceMemory derives from it)."""
    cdef uintptr_t _ctx      # the CUcontext it was allocated in
    cdef void _link(self)
    cdef void _unlink(self)
    cdef _release_at_exit(self)
    cdef _release_for_reset(self)
    cdef bint _release_uncaptured(self) except -1


cdef void stream_used(object handle)
cdef void stream_unused(object handle, bint destroy)
cdef void wait_for_capture(Allocation mem)
cdef bint any_waiting()
