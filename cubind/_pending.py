"""Ordering between streams, and keeping memory alive while queued work uses it.

An asynchronous copy reads or writes its buffers after the call returns. A
host buffer collected meanwhile, or device memory freed in the order of
another stream, would be used after release. :func:`hold` keeps such objects
until an event recorded behind the work completes; :func:`sweep` (run on each
new hold) drops those whose work is done; :func:`wait_for` lets an explicit
``free()`` wait for the work still using the memory.
"""

import threading

from ._errors import CUDAError, check

__all__ = ["hold", "sweep", "wait_for", "order", "pending_count", "drop"]

_CU_EVENT_DISABLE_TIMING = 0x2
_CUDA_ERROR_NOT_READY = 600

_lock = threading.Lock()
_pending = []  # [(CUevent, tuple of objects kept alive)]


def _driver():
    import cuda

    return cuda


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
        _pending.append((event, objects))


def sweep():
    """Drops the objects whose work is done; returns how many entries remain."""
    if not _pending:
        return 0
    cuda = _driver()
    with _lock:
        entries = list(_pending)
    done = []
    for entry in entries:
        err, = cuda.cuEventQuery(entry[0])
        if err != _CUDA_ERROR_NOT_READY:  # done, or failed: either way nothing will use the objects
            done.append(entry)
    with _lock:
        for entry in done:
            _pending.remove(entry)
        remaining = len(_pending)
    for event, _objects in done:  # the objects go here, outside the lock: their release may hold again
        cuda.cuEventDestroy(event)
    return remaining


def pending_count():
    """Entries still held (for tests and diagnostics)."""
    return len(_pending)


def wait_for(obj, stream=None):
    """Makes ``stream`` (a raw handle; ``None``: the calling thread) wait for
    queued work that holds ``obj``."""
    with _lock:
        events = [event for event, objects in _pending if any(o is obj for o in objects)]
    if not events:
        return
    cuda = _driver()
    for event in events:
        if stream is None:
            check(cuda.cuEventSynchronize(event), "cuEventSynchronize")
        else:
            check(cuda.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent")


def order(after, before):
    """Makes stream ``after`` wait for the work queued so far on stream
    ``before`` (raw handles); nothing when they are the same stream."""
    if after == before:
        return
    cuda = _driver()
    event = _event(cuda, before)
    try:
        check(cuda.cuStreamWaitEvent(after, event, 0), "cuStreamWaitEvent")
    finally:
        cuda.cuEventDestroy(event)  # released once the recorded work completes


def drop(destroy=False):
    """Forgets every hold: at a context reset, whose events died with it, or
    at exit (``destroy``: destroy the events, ignoring failures)."""
    with _lock:
        entries = list(_pending)
        _pending.clear()
    if destroy and entries:
        cuda = _driver()
        for event, _objects in entries:
            cuda.cuEventDestroy(event)
