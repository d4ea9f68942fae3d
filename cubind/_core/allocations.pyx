# cython: language_level=3
"""The device allocations alive now, which the core frees at exit and drops
at a reset without knowing what kind of owner holds them.

:class:`Allocation` is the protocol, defined here and implemented above:
an owner (``cubind._memory``'s ``DeviceMemory``) derives from it, links
itself while it holds memory, and says how to release that memory at exit
(:meth:`Allocation._release_at_exit`) and when its context is about to be
destroyed (:meth:`Allocation._release_for_reset`). ``cubind._core.lifetime``
calls :func:`release_all` and :func:`abandon`, so nothing above registers
itself into the core.

The list is linked through the owners themselves (borrowed pointers; an
owner unlinks itself when freed or deallocated): linking is a few pointer
writes with no Python call between them, so the GIL makes it atomic, no lock.
A weak reference per owner in a dict took DeviceMemory(1024) from 180 to
310 ns on the fake driver; this list leaves it at 175 ns. The list's links
are :class:`Linked`'s, which ``cubind.Event`` (event.pyx) keeps its live
events with too.

Two orders the collector does not keep are kept here:

- A stream outlives the allocations ordered on it. An owner keeps its stream
  object, but when both are garbage in one reference cycle the collector runs
  the stream's ``weakref.finalize`` (which destroys it) before the owner's
  ``__del__`` (which frees on it): a free queued on a destroyed stream (on a
  GPU, a crash inside the driver). So the owners count their streams
  (:func:`stream_used`), and :func:`destroy_stream` defers the destruction of
  a stream still in use until its last allocation is freed.
- A collector's free does not land in a stream capture. An owner let go while
  its stream is being captured would have its ``cuMemFreeAsync`` recorded as a
  node of the graph (freeing, at each replay, memory the graph never
  allocated): it waits (:func:`wait_for_capture`) and is freed at the end of
  the capture (:func:`release_waiting`) or at the next release after it.
"""

__all__ = ["Linked", "Allocation", "release_all", "abandon", "live_count", "destroy_stream", "release_waiting",
           "streams_in_use"]

cdef void* _head = NULL
cdef dict _stream_users = {}    # stream handle (int) -> allocations ordered on it, not yet freed
cdef dict _deferred = {}        # stream handle -> (fn, args): its destruction, waiting for those
cdef list _waiting = []         # owners let go while their stream was being captured


cdef class Linked:
    pass  # its fields, and link_into and unlink_from, are allocations.pxd's


cdef class Allocation(Linked):

    cdef void _link(self):
        link_into(self, &_head)

    cdef void _unlink(self):
        unlink_from(self, &_head)

    def __dealloc__(self):
        self._unlink()

    cdef _release_at_exit(self):
        """Frees the memory (the interpreter is exiting); must unlink."""
        self._unlink()

    cdef _release_for_reset(self):
        """Frees the memory, or forgets it where its context refuses; must unlink."""
        self._unlink()

    cdef bint _release_uncaptured(self) except -1:
        """Frees the memory unless its stream is still being captured; True when freed."""
        return True


cdef void stream_used(object handle):
    # Dict operations on int keys call no Python code, so the GIL makes each
    # update whole (as for the list above); no lock.
    _stream_users[handle] = _stream_users.get(handle, 0) + 1


cdef void stream_unused(object handle, bint destroy):
    """One allocation on ``handle`` freed (``destroy``) or forgotten at a reset
    (the stream died with its context: a deferred destruction is dropped)."""
    cdef object left = _stream_users.pop(handle, 1) - 1
    if left > 0:
        _stream_users[handle] = left
        return
    pending = _deferred.pop(handle, None)
    if pending is not None and destroy:
        pending[0](*pending[1])


def destroy_stream(handle, fn, *args):
    """Calls ``fn(*args)`` (which destroys the stream ``handle``, an int) now,
    or when the last allocation still ordered on that stream is freed."""
    if _stream_users.get(handle, 0) > 0:
        _deferred[handle] = (fn, args)
    else:
        fn(*args)


def streams_in_use():
    """{stream handle: allocations ordered on it} (for tests and diagnostics)."""
    return dict(_stream_users)


cdef void wait_for_capture(Allocation mem):
    _waiting.append(mem)


cdef bint any_waiting():
    return len(_waiting) > 0


def release_waiting():
    """Frees the owners let go during a capture whose stream is no longer
    being captured (the end of a capture calls it; so does the next release)."""
    cdef Allocation mem
    if not _waiting:
        return
    batch = list(_waiting)
    del _waiting[:]
    for mem in batch:
        _release_one(mem)


cdef void _release_one(Allocation mem) noexcept:
    # A failure is the collector's (no caller to tell): Cython writes an
    # exception leaving a noexcept function as unraisable, as for __del__.
    if not mem._release_uncaptured():
        _waiting.append(mem)


cdef list linked_members(void* head):
    """The members of the list that ``head`` begins, first to last."""
    cdef list out = []
    cdef void* p = head
    while p != NULL:
        out.append(<Linked>p)
        p = (<Linked>p)._next
    return out


cdef list _live():
    return linked_members(_head)


def live_count():
    """Allocations alive and not yet freed (for tests and diagnostics)."""
    return len(_live())


def release_all():
    """Frees every allocation still alive, newest first, without raising:
    the exit hook calls it before the primary contexts are released."""
    cdef Allocation mem
    while _head != NULL:
        mem = <Allocation>_head
        try:
            mem._release_at_exit()
        except Exception:  # at exit there is no caller to tell; the driver frees the rest with the context
            pass
        if mem._linked:
            mem._unlink()
    del _waiting[:]


def abandon(contexts):
    """Frees (or forgets) every allocation made in one of ``contexts``
    (CUcontext values as ints), which a reset is about to destroy."""
    cdef Allocation mem
    wanted = {int(c) for c in contexts}
    _waiting[:] = [m for m in _waiting if (<Allocation>m)._ctx not in wanted]
    for mem in _live():
        if mem._ctx not in wanted:
            continue
        try:
            mem._release_for_reset()
        except Exception:  # the context is poisoned: the reset frees what it holds
            pass
        if mem._linked:
            mem._unlink()
