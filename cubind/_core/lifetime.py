"""What the layer made in the driver: released in order at exit, dropped at a reset.

At interpreter exit, before modules are torn down, :func:`_at_exit` frees in
this order: device memory still referenced (a module global of the user's
program, a reference cycle), the events of queued-work holds, the streams,
events and libraries the layer made (newest first), then the primary
contexts it retained. A leak checker (``compute-sanitizer --leak-check
full``) then finds nothing of cubind's left when the driver goes. The hook is
registered after ``weakref.finalize``'s own, so it runs first (atexit runs
newest first) and the finalizers of the objects it released are already spent.

:func:`reset_contexts` is :meth:`cubind.Device.reset`'s part here: objects
tied to a destroyed context drop their handles without a driver call (the
handles died with the context) and refuse use afterwards.
"""

import atexit
import itertools
import threading
import weakref

from cubind._core import allocations as _allocations
from cubind._core import pending as _pending
from cubind._core.driver import module as _driver_module

__all__ = ["track", "EVERY_RESET", "retained_primary", "released_primary", "reset_contexts", "resets"]

_lock = threading.Lock()
_keys = itertools.count()
_resources: dict = {}  # key -> (context as int, or None for a context-independent handle; finalizer)
_primaries: list = []  # (ordinal, CUdevice) retained, in retain order
# The context of a handle that belongs to no context but whose use dies with
# any reset (a CUlibrary: its kernels' code lived in the contexts): a reset
# releases it (runs its finalizer) and then tells the object (_context_lost).
EVERY_RESET = "every reset"
# How many resets have happened: a cache of objects tied to contexts (the
# array kernels) compares it with the count it saw, instead of asking to be
# told, so the core never calls up into the layers above it.
resets = 0
def _run(key, fn, args):
    with _lock:
        _resources.pop(key, None)
    fn(*args)


def track(obj, context, fn, *args):
    """A ``weakref.finalize`` calling ``fn(*args)`` when ``obj`` goes, or at
    exit before the primary contexts are released; dropped without calling
    when ``context`` (a CUcontext as int) is reset, when ``obj._context_lost()``
    is called where it has one. ``fn`` must not raise."""
    key = next(_keys)
    finalizer = weakref.finalize(obj, _run, key, fn, args)
    finalizer.atexit = False  # _at_exit runs it, in order
    with _lock:
        _resources[key] = (context, finalizer)
    return finalizer


def retained_primary(ordinal, device):
    """Records a primary context retained by the layer: released last at exit."""
    with _lock:
        _primaries.append((ordinal, device))


def released_primary(ordinal):
    """Forgets the layer's retain of device ``ordinal``'s primary context
    (the caller releases it); False where none was recorded."""
    with _lock:
        for i, (o, _dev) in enumerate(_primaries):
            if o == ordinal:
                del _primaries[i]
                return True
    return False


def reset_contexts(contexts):
    """Forgets everything the layer made in ``contexts`` (ints): memory,
    streams and events; releases what every reset ends (modules, EVERY_RESET),
    and tells each object (``_context_lost``) where it has that method."""
    global resets
    contexts = {int(c) for c in contexts}
    _allocations.abandon(contexts)  # device memory first, while the streams it is ordered on exist
    _pending.drop()
    with _lock:
        gone = [key for key, (ctx, _f) in _resources.items() if ctx in contexts or ctx == EVERY_RESET]
        finalizers = [_resources.pop(key) for key in gone]
    for ctx, finalizer in finalizers:
        if ctx == EVERY_RESET:
            obj = finalizer.peek()
            finalizer()  # alive, unlike the context's handles: released
            obj = obj[0] if obj else None
        else:
            alive = finalizer.detach()
            obj = alive[0] if alive else None
        lost = getattr(obj, "_context_lost", None)
        if lost is not None:
            lost()
    resets += 1


def _quietly(fn, *args):
    try:
        fn(*args)
    except Exception:  # at exit there is no caller to tell; the driver frees the rest with the process
        pass


def _at_exit():
    _quietly(_allocations.release_all)
    _quietly(_pending.drop, True)
    with _lock:
        finalizers = [f for _ctx, f in reversed(list(_resources.values()))]
        _resources.clear()
    for finalizer in finalizers:
        _quietly(finalizer)
    with _lock:
        primaries = list(reversed(_primaries))
        _primaries.clear()
    if primaries:
        cuda = _driver_module()
        for _ordinal, device in primaries:
            _quietly(cuda.cuDevicePrimaryCtxRelease, device)


# weakref.finalize registers its atexit hook with its first instance: make
# that happen now, so that ours, registered after, runs before it.
weakref.finalize(_at_exit, lambda: None)
atexit.register(_at_exit)
