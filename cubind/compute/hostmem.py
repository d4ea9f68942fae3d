"""Page-locked host memory for tensors: the host mirror of a device tensor
(graph copy nodes need no staging through it) and the memory of a
host-visible tensor, which kernels read and write through its mapped device
address.

cubind's public layer has no pinned host allocation, so this calls
``cuMemHostAlloc`` of the 1:1 module.
"""

from .calls import check, cuda, log


class PinnedBuffer:
    """``nbytes`` of page-locked host memory, made in ``device``'s primary
    context; ``mapped`` adds a device address for it (``device_ptr``)."""

    __slots__ = ("device", "ptr", "nbytes", "device_ptr", "__weakref__")

    def __init__(self, device, nbytes, mapped=False):
        driver = cuda()
        flags = driver.CU_MEMHOSTALLOC_PORTABLE | (driver.CU_MEMHOSTALLOC_DEVICEMAP if mapped else 0)
        self.device, self.nbytes = device, nbytes
        with device:
            self.ptr = int(check(driver.cuMemHostAlloc(nbytes, flags), "cuMemHostAlloc"))
            self.device_ptr = None
            if mapped:
                try:
                    self.device_ptr = int(check(driver.cuMemHostGetDevicePointer(self.ptr, 0),
                                                "cuMemHostGetDevicePointer"))
                except BaseException:
                    free_pinned(device, self.ptr)
                    raise
        log.debug("pinned host memory of %d bytes at 0x%x%s", nbytes, self.ptr, " (mapped)" if mapped else "")


def free_pinned(device, ptr):
    """cuMemFreeHost in ``device``'s context; quiet, since it runs from
    finalizers (at interpreter exit the context may already be released,
    and the memory went with it)."""
    try:
        with device:
            check(cuda().cuMemFreeHost(ptr), "cuMemFreeHost")
    except Exception:  # noqa: BLE001 - see the docstring
        log.debug("cuMemFreeHost(0x%x) failed quietly", ptr, exc_info=True)
