"""Ordering between streams, and keeping memory alive while queued work uses it.

An asynchronous copy reads or writes its buffers after the call returns. A
host buffer collected meanwhile, or device memory freed in the order of
another stream, would be used after release. :func:`hold` keeps such objects
until an event recorded behind the work completes; :func:`sweep` (run on each
new hold) drops those whose work is done; :func:`wait_for` lets an explicit
``free()`` wait for the work still using the memory.
"""

import sys
import threading

from cubind._core.driver import module as _driver
from cubind._core.errors import CUDAError, check

__all__ = ["hold", "sweep", "wait_for", "order", "order_event", "pending_count", "drop", "retire_order_events"]

_CU_EVENT_DISABLE_TIMING = 0x2
_CUDA_ERROR_NOT_READY = 600

# Every read and change of _pending happens under _lock, and an entry's event
# is queried, waited on or destroyed only while the entry is in the list
# (under the lock) or after exactly one thread took it out: a thread can never
# use an event another destroyed. The objects are released outside the lock
# (their release may hold again). cubind/_memory/memory.pyx reads the list's
# emptiness without the lock, as a hint only: a stale answer costs a sweep,
# or skips waiting for work that did not hold the object when it looked.
#
# The lock is reentrant: any allocation inside a critical section may start a
# garbage collection whose finalizers free memory (DeviceMemory.release ->
# wait_for) or queue work (hold) in this same thread; with a plain Lock that
# thread waited on itself forever. Such a nested call never takes entries out
# and never pins (the outer section may be walking the list): it only appends
# or waits in place, and the outer sections take out only the entry they just
# looked at, by index, so appends meanwhile are harmless.
_lock = threading.RLock()
_pending: list = []  # [_Entry]


class _Entry:
    __slots__ = ("event", "objects", "pins")

    def __init__(self, event, objects):
        self.event, self.objects, self.pins = event, objects, 0


def _event(cuda, stream):
    event = check(cuda.cuEventCreate(_CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    err, = cuda.cuEventRecord(event, stream)
    if err != 0:
        cuda.cuEventDestroy(event)
        raise CUDAError(err, "cuEventRecord")
    return event


def hold(stream, *objects):
    """Keeps ``objects`` alive until the work queued on ``stream`` (a raw
    handle) so far is done."""
    cuda = _driver()
    sweep()
    event = _event(cuda, stream)
    with _lock:
        _pending.append(_Entry(event, objects))


def sweep():
    """Drops the objects whose work is done; returns how many entries remain."""
    if not _pending:
        return 0
    cuda = _driver()
    if _lock._is_owned():   # a finalizer run inside one of our own sections: the outer call sweeps
        return len(_pending)
    done = []
    with _lock:
        # Queried under the lock: outside it another thread could take the
        # entry out and destroy its event first. A query is a few hundred ns.
        i = 0
        while i < len(_pending):
            entry = _pending[i]
            if not entry.pins and cuda.cuEventQuery(entry.event)[0] != _CUDA_ERROR_NOT_READY:
                del _pending[i]   # done, or failed: either way nothing will use the objects
                done.append(entry)
            else:
                i += 1
        remaining = len(_pending)
    for entry in done:   # taken out by this thread alone
        cuda.cuEventDestroy(entry.event)
    return remaining   # the objects go with `done`, outside the lock: their release may hold again


def pending_count():
    """Entries still held (for tests and diagnostics)."""
    with _lock:
        return len(_pending)


def wait_for(obj, stream=None):
    """Makes ``stream`` (a raw handle; ``None``: the calling thread) wait for
    queued work that holds ``obj``."""
    if _lock._is_owned():
        _wait_nested(obj, stream)
        return
    with _lock:
        entries = [e for e in _pending if any(o is obj for o in e.objects)]
        for entry in entries:
            entry.pins += 1   # a pinned entry stays in the list, its event alive, until unpinned
    if not entries:
        return
    cuda = _driver()
    try:
        for entry in entries:
            if stream is None:
                check(cuda.cuEventSynchronize(entry.event), "cuEventSynchronize")
            else:
                check(cuda.cuStreamWaitEvent(stream, entry.event, 0), "cuStreamWaitEvent")
    finally:
        with _lock:
            for entry in entries:
                entry.pins -= 1


def _wait_nested(obj, stream):
    """wait_for from a finalizer run inside one of our own sections (this
    thread holds the lock): waits in place, under the lock, on the listed
    (hence live) events, without pinning. Rare: the memory of an unreachable
    array is held only where another array's release ran inside a section."""
    cuda = _driver()
    with _lock:
        for i in range(len(_pending) - 1, -1, -1):   # appends meanwhile are newer work: not obj's
            entry = _pending[i]
            if any(o is obj for o in entry.objects):
                if stream is None:
                    check(cuda.cuEventSynchronize(entry.event), "cuEventSynchronize")
                else:
                    check(cuda.cuStreamWaitEvent(stream, entry.event, 0), "cuStreamWaitEvent")


# order()'s events: one per thread and context, recorded and waited for at
# once. cuStreamWaitEvent takes a snapshot of the event's last record, so the
# event may be recorded again at once; being the thread's own, no other
# thread records it between the two calls. A thread's events are destroyed
# when it ends (its thread-local goes); drop() retires them all (a reset
# killed them with their context; at exit they are destroyed).
_order_local = threading.local()
_order_made: set = set()      # {event handle (int)} alive: what drop(destroy=True) destroys
_order_generation = [0]       # bumped by drop(): a thread's older events are not used again


class _OrderEvents(dict):
    """A thread's order events by context; destroyed with the thread's local."""

    def __init__(self):
        super().__init__()
        self.generation = _order_generation[0]

    def __del__(self):
        if sys.is_finalizing():  # the driver may be gone; the exit hook destroyed what it could
            return
        with _lock:
            if self.generation != _order_generation[0]:
                return   # retired by drop(): dead with their context, or destroyed there
            mine = [e for e in self.values() if int(e) in _order_made]
            _order_made.difference_update(int(e) for e in mine)
        cuda = _driver()
        for event in mine:
            cuda.cuEventDestroy(event)


def _order_event(cuda, context=None):
    events = getattr(_order_local, "events", None)
    if events is None or events.generation != _order_generation[0]:
        events = _order_local.events = _OrderEvents()
    if context is None:
        context = int(check(cuda.cuCtxGetCurrent(), "cuCtxGetCurrent") or 0)
    event = events.get(context)
    if event is None:
        event = check(cuda.cuEventCreate(_CU_EVENT_DISABLE_TIMING), "cuEventCreate")
        events[context] = event
        with _lock:
            _order_made.add(int(event))
    return event


def order_event(context=None):
    """The calling thread's order event in the current context (a raw
    handle): for C code making streams wait as :func:`order` does, without
    a driver call through Python per stream. ``context``: the current
    context as an int, where the caller knows it (a free does), which
    saves asking the driver through Python."""
    return _order_event(_driver(), context)


def order(after, before):
    """Makes stream ``after`` wait for the work queued so far on stream
    ``before`` (raw handles); nothing when they are the same stream."""
    if after == before:
        return
    cuda = _driver()
    event = _order_event(cuda)
    check(cuda.cuEventRecord(event, before), "cuEventRecord")
    check(cuda.cuStreamWaitEvent(after, event, 0), "cuStreamWaitEvent")


def drop(destroy=False):
    """Forgets every hold and order event: at a context reset, whose events
    died with it, or at exit (``destroy``: destroy the events, ignoring
    failures)."""
    with _lock:
        entries = list(_pending)
        _pending.clear()
    if destroy and entries:
        cuda = _driver()
        for entry in entries:
            cuda.cuEventDestroy(entry.event)
    retire_order_events(destroy)


def retire_order_events(destroy):
    """Every thread makes new order events from now on; the old ones are
    destroyed (``destroy``) or forgotten (they died with their context)."""
    with _lock:
        made = list(_order_made)   # handles (ints): the driver module takes them as CUevent
        _order_made.clear()
        _order_generation[0] += 1
    if destroy and made:
        cuda = _driver()
        for event in made:
            cuda.cuEventDestroy(event)
