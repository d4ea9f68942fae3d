"""The driver calls of cubind.compute: the 1:1 ``cuda`` module, its status
tuples turned into :class:`cubind.CUDAError`.

cubind.compute is built on cubind's public objects and the 1:1 modules only;
the CUDA graph API has no Pythonic wrapper in cubind, so it is called here.
"""

import logging

import cubind

log = logging.getLogger("cubind.compute")

_cuda = None


def cuda():
    """The 1:1 driver module, imported on first use (``import cubind.compute``
    loads no CUDA library, as ``import cubind`` does not)."""
    global _cuda
    if _cuda is None:
        import cuda as module

        _cuda = module
    return _cuda


def check(result, call):
    """The outputs of a 1:1 call (None, one value or a tuple), or
    :class:`cubind.CUDAError` naming ``call`` when its status is not success."""
    err = result[0]
    if err != 0:
        raise cubind.CUDAError(err, call)
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def quietly(fn, *args):
    """A release at collection or exit: a failure there (the context already
    gone at interpreter exit, a sticky error) has nobody to report to."""
    try:
        check(fn(*args), fn.__name__)
    except Exception:  # noqa: BLE001 - see the docstring
        log.debug("release %s failed quietly", getattr(fn, "__name__", fn), exc_info=True)
