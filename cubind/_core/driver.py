"""The layer's one way to the driver module (``import cuda``).

Importing cubind loads no CUDA library, so every module of the layer reaches
the driver through here on first use. :func:`initialized` also calls
``cuInit(0)`` once per process; a second thread racing the first calls it
twice, which the driver allows (it is idempotent), so no lock is taken on the
path every launch and array call goes through.
"""

from cubind._core.errors import check

_NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE
_state = {"module": None, "initialized": False}


def module():
    """The ``cuda`` module, imported on first use (no ``cuInit``)."""
    cuda = _state["module"]
    if cuda is None:
        import cuda

        _state["module"] = cuda
    return cuda


def initialized():
    """The ``cuda`` module, after ``cuInit(0)`` succeeded once."""
    cuda = _state["module"] or module()
    if not _state["initialized"]:
        check(cuda.cuInit(0), "cuInit")
        _state["initialized"] = True
    return cuda


def try_init():
    """``cuInit(0)``'s status, recording success: 0, or 100 where the driver
    sees no device (what :meth:`cubind.Device.count` reports as 0 devices)."""
    err, = module().cuInit(0)
    if err == 0:
        _state["initialized"] = True
    return err
