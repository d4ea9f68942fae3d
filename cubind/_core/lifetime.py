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

from cubind._core import pending as _pending
from cubind._core.driver import module as _driver_module

__all__ = ["track", "retained_primary", "released_primary", "reset_contexts", "on_reset", "register_memory"]

_lock = threading.Lock()
_keys = itertools.count()
_resources: dict = {}  # key -> (context as int, or None for a context-independent handle; finalizer)
_primaries: list = []  # (ordinal, CUdevice) retained, in retain order
_reset_hooks: list = []  # callables(contexts: set of ints) run by reset_contexts
# The device-memory owners' two releases, registered by cubind._memory (a layer
# above this one, which it must not import): free everything at exit; free or
# forget what lives in contexts about to be reset. Run before anything else,
# while the streams memory is ordered on still exist.
_memory_release = {"all": None, "contexts": None}


def register_memory(release_all, abandon):
    """``release_all()`` frees every live device allocation (at exit);
    ``abandon(contexts)`` those of contexts a reset destroys."""
    _memory_release["all"], _memory_release["contexts"] = release_all, abandon


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


def on_reset(hook):
    """Registers ``hook(contexts)``, run when contexts are reset (caches of
    kernels, modules loaded in them)."""
    _reset_hooks.append(hook)


def reset_contexts(contexts):
    """Forgets everything the layer made in ``contexts`` (ints): memory,
    streams and events; runs the reset hooks (modules, kernel caches)."""
    contexts = {int(c) for c in contexts}
    if _memory_release["contexts"] is not None:
        _memory_release["contexts"](contexts)
    _pending.drop()
    with _lock:
        gone = [key for key, (ctx, _f) in _resources.items() if ctx in contexts]
        finalizers = [_resources.pop(key)[1] for key in gone]
    for finalizer in finalizers:
        alive = finalizer.detach()
        lost = getattr(alive[0], "_context_lost", None) if alive else None
        if lost is not None:
            lost()
    for hook in list(_reset_hooks):
        hook(contexts)


def _quietly(fn, *args):
    try:
        fn(*args)
    except Exception:  # at exit there is no caller to tell; the driver frees the rest with the process
        pass


def _at_exit():
    if _memory_release["all"] is not None:
        _quietly(_memory_release["all"])
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
