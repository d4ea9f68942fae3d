# cython: language_level=3
"""A queue's two stages, compiled: what a receiver or transmitter holds
(queues.py), and what the scheduler's loop (scheduling/loop.pyx) moves
between them on every tick without a Python call.

The main stage is what ``receive`` reads; the back stage is where a
transmitter's published messages wait until the tick ends, and where a
receiver's delivered messages wait until its entity's next tick begins.
``capacity`` bounds both stages together; a full buffer answers a push by its
policy: drop the oldest (0), reject the new one (1), or refuse (2, the
caller raises).

Each buffer has its own lock, a plain PyThread lock: a codelet publishes and
receives on its worker thread while the scheduler moves messages on another.
Nothing inside the lock calls a graph's Python code (a message dropped to
make room is let go after the lock is), and a thread that finds the lock
taken waits for it without the GIL."""

from collections import deque

from cpython.pythread cimport (PyThread_acquire_lock, PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_release_lock, PyThread_type_lock)


cdef class MessageBuffer:
    def __cinit__(self, int capacity, int policy):
        self.capacity = capacity
        self.policy = policy
        self.main = deque()
        self.back = deque()
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError("a queue's lock")

    def __dealloc__(self):
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    cdef void take(self) noexcept:
        if not PyThread_acquire_lock(self.lock, 0):  # taken: wait for it without the GIL
            with nogil:
                PyThread_acquire_lock(self.lock, 1)

    cdef void give(self) noexcept:
        PyThread_release_lock(self.lock)

    cpdef int size(self):
        """Messages in the main stage."""
        self.take()
        cdef int n = len(self.main)
        self.give()
        return n

    cpdef int back_size(self):
        self.take()
        cdef int n = len(self.back)
        self.give()
        return n

    cpdef int free(self):
        """Room left, both stages counted."""
        self.take()
        cdef int n = self.capacity - len(self.main) - len(self.back)
        self.give()
        return n

    cpdef int push(self, object message) except -1:
        """Into the back stage, by the policy: 0 pushed, 1 dropped (the new
        one, or the oldest to make room), 2 refused (policy 2, full)."""
        cdef object oldest = None
        cdef int outcome = 0
        self.take()
        if len(self.main) + len(self.back) >= self.capacity:
            if self.policy == 1:
                self.dropped += 1
                outcome = 1
            elif self.policy == 2:
                outcome = 2
            else:
                self.dropped += 1
                oldest = (self.main if self.main else self.back).popleft()
                self.back.append(message)
                outcome = 1
        else:
            self.back.append(message)
        self.give()
        return outcome  # ``oldest`` goes here, outside the lock

    cpdef object pop(self):
        """The oldest message of the main stage, or None."""
        cdef object message = None
        self.take()
        if self.main:
            message = self.main.popleft()
        self.give()
        return message

    cpdef void put_front(self, object message):
        """Into the main stage, to be read next, whatever the capacity."""
        self.take()
        self.main.appendleft(message)
        self.give()

    cpdef void sync_in(self):
        """Back stage to main stage (before a receiver's entity ticks)."""
        self.take()
        if self.back:
            self.main.extend(self.back)
            self.back.clear()
        self.give()

    def snapshot(self):
        """(main stage, back stage) as lists, left as they are."""
        self.take()
        out = list(self.main), list(self.back)
        self.give()
        return out

    cpdef list take_all(self):
        """Every message, back stage first, and both stages emptied (a
        transmitter's, after its entity's tick)."""
        cdef list out
        self.take()
        if not self.back and not self.main:
            self.give()
            return []
        out = list(self.back)
        out.extend(self.main)
        self.back.clear()
        self.main.clear()
        self.give()
        return out
