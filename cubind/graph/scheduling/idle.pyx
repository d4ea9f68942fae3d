# cython: language_level=3
"""Where the multi-thread scheduler's idle workers wait (loop.pyx's Run
keeps one): without the GIL and without the scheduler's lock, on a
condition of their own, reading when the youngest running tick started and
when the last one ended.

Why: a worker that looked with the GIL took it, and the scheduler's lock,
from the ticking worker. Traced tick by tick on the H200, four workers
running the 1 MiB pipeline at 0.77x one had no tick moving between threads
and none at once: the loss was those looks, about 250 a second. Waiting
here, an idle worker costs the ticking one nothing until it acts.

The ticking worker updates the times with the GIL held and the mutex taken
(started, ended). The mutex's holders without the GIL (wait) never wait for
the GIL while holding it, so taking it with the GIL cannot deadlock; letting
the GIL go for it would offer the GIL to another thread twice a tick."""

from posix.time cimport CLOCK_MONOTONIC, timespec


cdef extern from "<pthread.h>" nogil:
    int pthread_mutex_init(pthread_mutex_t *mutex, const void *attr)
    int pthread_mutex_destroy(pthread_mutex_t *mutex)
    int pthread_mutex_lock(pthread_mutex_t *mutex)
    int pthread_mutex_unlock(pthread_mutex_t *mutex)
    int pthread_condattr_init(pthread_condattr_t *attr)
    int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock)
    int pthread_condattr_destroy(pthread_condattr_t *attr)
    int pthread_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
    int pthread_cond_destroy(pthread_cond_t *cond)
    int pthread_cond_broadcast(pthread_cond_t *cond)
    int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const timespec *abstime)


cdef class IdleWorkers:
    """The idle workers' waiting room of one run: ``handoff_ms`` and
    ``check_recession_period_ms`` as the scheduler has them."""

    def __cinit__(self, double handoff_ms, double poll_ms):
        cdef pthread_condattr_t attr
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)  # the clock the times here are read on
        pthread_cond_init(&self.cond, &attr)
        pthread_condattr_destroy(&attr)
        pthread_mutex_init(&self.mutex, NULL)
        self.handoff_ns = <long long>(handoff_ms * 1e6)
        self.poll_ns = <long long>(poll_ms * 1e6)

    def __dealloc__(self):
        pthread_cond_destroy(&self.cond)
        pthread_mutex_destroy(&self.mutex)

    cdef void started(self, long long at) noexcept:
        """A tick started at ``at`` (ns); the run's lock held."""
        pthread_mutex_lock(&self.mutex)
        self.running += 1
        self.youngest = at
        pthread_mutex_unlock(&self.mutex)

    cdef void ended(self, long long youngest, long long at, unsigned long me) noexcept:
        """A tick ended at ``at`` on worker ``me``; ``youngest``: the start
        of the youngest tick still running (0: none). The run's lock held."""
        pthread_mutex_lock(&self.mutex)
        self.running -= 1
        self.youngest = youngest
        self.finished = at
        self.active = me
        pthread_mutex_unlock(&self.mutex)

    cdef void handed_to(self, unsigned long me, long long at) noexcept:
        """Worker ``me`` is the active one, as if it had finished a tick at
        ``at`` (the run's first pick is its). The run's lock held."""
        pthread_mutex_lock(&self.mutex)
        self.finished = at
        self.active = me
        pthread_mutex_unlock(&self.mutex)

    cdef void look(self) noexcept:
        """Wakes every idle worker to look again (the run ends, an external
        source has news, the watcher left). The run's lock held."""
        pthread_mutex_lock(&self.mutex)
        self.events += 1
        pthread_cond_broadcast(&self.cond)
        pthread_mutex_unlock(&self.mutex)

    cdef void wait(self, bint watching, bint polls, unsigned long me, long long events) noexcept nogil:
        """Waits, the run's lock let go by the caller, until ``events``
        (read under the run's lock) is out of date or: for the watcher
        (``watching``), a running tick or the active worker's absence
        reaches ``handoff_ms``; where ``polls``, the poll period passes (for
        interrupts, signals and the run's duration). The others wait for the
        events alone."""
        cdef long long poll_end = monotonic_ns() + self.poll_ns
        pthread_mutex_lock(&self.mutex)
        while self.events == events and self._sleep(watching, polls, me, poll_end):
            pass
        pthread_mutex_unlock(&self.mutex)

    cdef bint _sleep(self, bint watching, bint polls, unsigned long me, long long poll_end) noexcept nogil:
        """One sleep of wait (the mutex held): False where the worker must look now."""
        cdef long long now = monotonic_ns(), due
        cdef timespec at
        if polls and now >= poll_end:
            return False
        if watching:
            if self.running > 0:
                due = self.youngest + self.handoff_ns
            elif self.active != 0 and self.active != me:
                due = self.finished + self.handoff_ns
            else:
                return False  # nothing running, and the next pick is this worker's
            if now >= due:
                return False
            due = min(due, poll_end)
        elif polls:
            due = poll_end
        else:
            due = now + 1000000000LL  # only the events end this wait: it loops on
        at.tv_sec, at.tv_nsec = due // 1000000000LL, due % 1000000000LL
        pthread_cond_timedwait(&self.cond, &self.mutex, &at)
        return True
