# cython: language_level=3
"""Which device's context is current, and whether its default stream is
idle, read at the C level.

``ensure_context`` runs on every entry of the array helpers and on each
ready event of a codelet graph's device messages. Asked through the 1:1
functions (``cuCtxGetCurrent`` and ``cuCtxGetDevice``, each a Python call
returning a tuple) it took 0.5 us on the emulated driver; read here, a
tenth of that."""

cimport cuda.cdriver as cdrv

__all__ = ["current_ordinal", "default_stream_idle"]


def current_ordinal():
    """The ordinal of the current context's device; -1 where no context is
    current, or the driver is not initialized (``ensure_context`` then
    makes one current)."""
    cdef cdrv.CUcontext ctx = NULL
    cdef cdrv.CUdevice dev = 0
    if cdrv.cuCtxGetCurrent(&ctx) != cdrv.CUDA_SUCCESS or ctx == NULL:
        return -1
    if cdrv.cuCtxGetDevice(&dev) != cdrv.CUDA_SUCCESS:
        return -1
    return <int>dev


def default_stream_idle():
    """Whether the current context's default stream has run all that was
    queued on it (False where that is not known: no context, an error).
    A codelet graph asks it as a device message is published from the
    default stream (``cubind.graph.model.ordering``): beside a data path's
    device copies on another thread (UCX's CUDA IPC), recording an event on
    the legacy default stream took 15.8 us on the H200 where this query
    took 2.0. It answers as an event recorded there would: on the H200,
    with work queued on a blocking stream both said not ready (the legacy
    stream's implicit wait), with work on a non-blocking one both said
    done (``bench/legacy_record.c``)."""
    cdef cdrv.CUresult err
    with nogil:
        err = cdrv.cuStreamQuery(<cdrv.CUstream>NULL)
    return err == cdrv.CUDA_SUCCESS
