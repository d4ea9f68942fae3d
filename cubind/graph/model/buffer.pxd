from cpython.pythread cimport PyThread_type_lock


cdef class MessageBuffer:
    cdef readonly int capacity
    cdef readonly int policy
    cdef public long long dropped
    cdef object main
    cdef object back
    cdef PyThread_type_lock lock

    cdef void take(self) noexcept
    cdef void give(self) noexcept
    cpdef int size(self)
    cpdef int back_size(self)
    cpdef int free(self)
    cpdef int push(self, object message) except -1
    cpdef object pop(self)
    cpdef void put_front(self, object message)
    cpdef void sync_in(self)
    cpdef list take_all(self)
