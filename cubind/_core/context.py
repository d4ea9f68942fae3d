"""Primary contexts: which one is current, device 0's made current where
none is, and the retains the layer made.

The layer works in primary contexts only (device_stream_event.py says why).
A primary context it uses is retained once per process and released when the
interpreter exits, after everything made in it (``lifetime`` releases the
retains noted here, last). Here, below devices, streams and events, because
each of them asks for the current context, and the compiled ``Event`` cannot
import the module that holds the other two.
"""

from __future__ import annotations

import threading

from cubind._core import driver
from cubind._core.current import current_ordinal
from cubind._core.errors import CUDAError, check

__all__ = ["ensure_context", "current_context", "context_made_current", "primary_context", "forget_primary",
           "released_primary", "take_primaries", "LOST"]

_NOT_INITIALIZED = 3  # CUDA_ERROR_NOT_INITIALIZED

# What an object made in a context that Device.reset() destroyed says when used.
LOST = "{0}: its context was destroyed by Device.reset(); make a new {0}"

_lock = threading.Lock()
_primary: dict = {}  # ordinal -> retained primary CUcontext
_retains: list = []  # (ordinal, CUdevice) retained, in retain order


def ensure_context() -> int:
    """The ordinal of the device whose context is current, making device 0's
    primary context current first where none is.

    Two driver calls at the C level when a context is current: the array
    helpers and launches call it on every entry. Where none is (or the
    driver is not initialized yet) it asks through the 1:1 functions.
    """
    ordinal = current_ordinal()
    if ordinal >= 0:
        return ordinal
    cuda = driver.module()
    err, ctx = cuda.cuCtxGetCurrent()
    if err == _NOT_INITIALIZED:
        driver.initialized()
        err, ctx = cuda.cuCtxGetCurrent()
    if err != 0:
        raise CUDAError(err, "cuCtxGetCurrent")
    if ctx is None or int(ctx) == 0:
        check(cuda.cuCtxSetCurrent(primary_context(0)), "cuCtxSetCurrent")
        return 0
    return int(check(cuda.cuCtxGetDevice(), "cuCtxGetDevice"))


def current_context() -> int:
    """The current CUcontext as an int (0 where none is): what the layer's
    objects record as theirs, for Device.reset()."""
    cuda = driver.module()
    err, ctx = cuda.cuCtxGetCurrent()
    return int(ctx or 0) if err == 0 else 0


def context_made_current() -> int:
    """The current CUcontext as an int, device 0's primary context made
    current first where none is: ``ensure_context()`` then
    ``current_context()`` in one driver call where a context is current."""
    err, ctx = driver.module().cuCtxGetCurrent()
    if err == 0 and ctx is not None:
        raw = int(ctx)
        if raw:
            return raw
    ensure_context()
    return current_context()


def primary_context(ordinal: int):
    """Device ``ordinal``'s primary context (a ``CUcontext``), retained on
    first use; released when the interpreter exits, after the memory,
    streams, events and modules made in it (cubind._core.lifetime)."""
    ctx = _primary.get(ordinal)
    if ctx is not None:
        return ctx
    cuda = driver.initialized()
    with _lock:
        ctx = _primary.get(ordinal)
        if ctx is None:
            dev = check(cuda.cuDeviceGet(ordinal), "cuDeviceGet")
            ctx = check(cuda.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
            _retains.append((ordinal, dev))
            _primary[ordinal] = ctx
    return ctx


def forget_primary(ordinal: int):
    """Device ``ordinal``'s primary context as retained so far (None if not
    yet), which the next :func:`primary_context` retains afresh (a reset)."""
    with _lock:
        return _primary.pop(ordinal, None)


def released_primary(ordinal: int) -> bool:
    """Forgets the layer's retain of device ``ordinal``'s primary context
    (the caller releases it); False where none was noted."""
    with _lock:
        for i, (o, _dev) in enumerate(_retains):
            if o == ordinal:
                del _retains[i]
                return True
    return False


def take_primaries() -> list:
    """Every retain noted, newest first, forgotten here: the exit hook's to release."""
    with _lock:
        taken = list(reversed(_retains))
        _retains.clear()
    return taken
