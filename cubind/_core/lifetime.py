"""What the layer made in the driver: released in order at exit, dropped at a reset.

At interpreter exit, before modules are torn down, :func:`_at_exit` frees in
this order: device memory still referenced (a module global of the user's
program, a reference cycle), the events of queued-work holds, the
``cubind.Event`` objects still alive (``event.pyx`` keeps them in a list of
its own), the streams, graphs and libraries the layer made (newest first),
then the primary contexts it retained (``context.py`` notes them). A leak
checker (``compute-sanitizer --leak-check full``) then finds nothing of
cubind's left when the driver goes. The hook is
registered after ``weakref.finalize``'s own, so it runs first (atexit runs
newest first) and the finalizers of the objects it released are already spent.

:func:`reset_contexts` is :meth:`cubind.Device.reset`'s part here: objects
tied to a destroyed context drop their handles without a driver call (the
handles died with the context) and refuse use afterwards.
"""

import atexit
import threading
import weakref

from cubind._core import allocations as _allocations
from cubind._core import context as _context
from cubind._core import event as _event
from cubind._core import pending as _pending
from cubind._core.driver import module as _driver_module

__all__ = ["track", "Release", "EVERY_RESET", "reset_contexts", "resets"]

# Reentrant: a release runs when its object goes, which may be inside a
# garbage collection that began while this thread held the lock.
_lock = threading.RLock()
_resources: dict = {}  # Release -> context as int, or None for a context-independent handle
# The context of a handle that belongs to no context but whose use dies with
# any reset (a CUlibrary: its kernels' code lived in the contexts): a reset
# releases it (runs its finalizer) and then tells the object (_context_lost).
EVERY_RESET = "every reset"
# How many resets have happened: a cache of objects tied to contexts (the
# array kernels) compares it with the count it saw, instead of asking to be
# told, so the core never calls up into the layers above it.
resets = 0


class Release:
    """What :func:`track` returns: calling it releases the handle now, once
    (an object's ``close()``); it also runs when the object goes. A plain
    weak reference with a callback, not ``weakref.finalize``: an event is
    made per message in a codelet graph, and the finalizer's registry and
    bookkeeping cost three times the driver's ``cuEventCreate``. Whoever
    takes the entry out of ``_resources`` (under the lock) is the one that
    runs or drops it, so a close racing the object's death, a reset or the
    exit hook releases once."""

    __slots__ = ("_fn", "_args", "_ref")

    def __init__(self, obj, fn, args):
        self._fn, self._args = fn, args
        self._ref = weakref.ref(obj, self.__call__)  # the object's death calls it: one frame, then _run's

    def __call__(self, _ref=None):
        """Releases now; False where it was already released or dropped."""
        with _lock:
            if _resources.pop(self, _GONE) is _GONE:
                return False
        self._run()
        return True

    def _run(self):
        fn, args = self._fn, self._args
        self._fn = self._args = self._ref = None  # the callback's cycle ends here
        fn(*args)

    def _drop(self):
        """Forgets the release without calling it; the object, where alive."""
        obj = self._ref() if self._ref is not None else None
        self._fn = self._args = self._ref = None
        return obj


_GONE = object()


def track(obj, context, fn, *args):
    """A :class:`Release` calling ``fn(*args)`` when ``obj`` goes, when
    called, or at exit before the primary contexts are released; dropped
    without calling when ``context`` (a CUcontext as int) is reset, when
    ``obj._context_lost()`` is called where it has one. ``fn`` must not raise."""
    release = Release(obj, fn, args)
    with _lock:
        _resources[release] = context
    return release


def reset_contexts(contexts):
    """Forgets everything the layer made in ``contexts`` (ints): memory,
    streams and events; releases what every reset ends (modules, EVERY_RESET),
    and tells each object (``_context_lost``) where it has that method."""
    global resets
    contexts = {int(c) for c in contexts}
    _allocations.abandon(contexts)  # device memory first, while the streams it is ordered on exist
    _pending.drop()
    _event.abandon(contexts)
    with _lock:
        gone = [r for r, ctx in list(_resources.items()) if ctx in contexts or ctx == EVERY_RESET]
        entries = [(r, _resources.pop(r)) for r in gone]
    for release, ctx in entries:
        if ctx == EVERY_RESET:
            obj = release._ref() if release._ref is not None else None
            release._run()  # alive, unlike the context's handles: released
        else:
            obj = release._drop()
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
    _quietly(_event.release_all)
    with _lock:
        releases = list(reversed(_resources))
        _resources.clear()
    for release in releases:
        _quietly(release._run)
    primaries = _context.take_primaries()
    if primaries:
        cuda = _driver_module()
        for _ordinal, device in primaries:
            _quietly(cuda.cuDevicePrimaryCtxRelease, device)


# weakref.finalize registers its atexit hook with its first instance: make
# that happen now, so that ours, registered after, runs before it.
weakref.finalize(_at_exit, lambda: None)
atexit.register(_at_exit)
