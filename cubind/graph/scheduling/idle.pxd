from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.types cimport clockid_t


cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef struct pthread_condattr_t:
        pass


cdef inline long long monotonic_ns() noexcept nogil:
    """CLOCK_MONOTONIC in nanoseconds: the clock of the times kept here."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000LL + ts.tv_nsec


cdef class IdleWorkers:
    # Written with the run's lock and the mutex held; read under either.
    cdef pthread_mutex_t mutex
    cdef pthread_cond_t cond
    cdef int running            # ticks running
    cdef long long youngest     # the youngest running tick's start (CLOCK_MONOTONIC ns)
    cdef long long finished     # when the last tick finished (ns)
    cdef unsigned long active   # the worker that finished it (0: none yet)
    cdef long long events       # bumped where idle workers must look again
    cdef long long handoff_ns, poll_ns

    cdef void started(self, long long at) noexcept
    cdef void ended(self, long long youngest, long long at, unsigned long me) noexcept
    cdef void handed_to(self, unsigned long me, long long at) noexcept
    cdef void look(self) noexcept
    cdef void wait(self, bint watching, bint polls, unsigned long me, long long events) noexcept nogil
    cdef bint _sleep(self, bint watching, bint polls, unsigned long me, long long poll_end) noexcept nogil
