"""Types of cubind/_memory/memory.pyx: the owners of the device memory behind arrays."""

from typing import Callable, Iterable, SupportsIndex

from cubind._core.device_stream_event import _StreamLike

__all__ = ["DeviceMemory", "ForeignMemory", "release_all", "abandon", "live_count",
           "copy_contiguous", "copy_into"]

class _Owner:
    """What both owners share: ``ptr`` is None once released."""
    ptr: int | None
    device: int | None  # the device ordinal (None: not known yet)
    stream: int | None  # the raw handle of the allocation's stream (None: synchronous)
    @property
    def _exports(self) -> int: ...
    def export(self) -> None: ...
    def unexport(self) -> None: ...
    def release(self) -> None: ...

class DeviceMemory(_Owner):
    """``nbytes`` of device memory in the current context, ordered on ``stream`` (None: the default
    stream), from the device's current pool, the ``pool`` given, or ``cuMemAlloc`` (``pool=False``)."""
    @property
    def nbytes(self) -> int: ...
    @property
    def pooled(self) -> bool:
        """From a pool: freed with ``cuMemFreeAsync`` on its stream."""
    def __init__(self, nbytes: int, stream: _StreamLike = ..., pool: bool | SupportsIndex | None = ...) -> None: ...
    def record_stream(self, stream: _StreamLike) -> None:
        """Its stream-ordered free also waits for the work queued on ``stream`` by then."""
    def __del__(self) -> None: ...

class ForeignMemory(_Owner):
    """Memory another object (``owner``) owns; ``on_release`` runs at :meth:`release`."""
    owner: object
    dlpack_type: int | None  # DLPack's device type where the memory came from DLPack
    def __init__(self, ptr: int, owner: object, device: int | None = ...,
                 on_release: Callable[[], object] | None = ..., dlpack_type: int | None = ...) -> None: ...

def copy_contiguous(host: object, ptr: int, to_device: bool) -> None:
    """The default stream's synchronous copy between a C-contiguous numpy array and device memory at ``ptr``."""

def copy_into(host: object, ptr: int) -> bool:
    """The copy from ``ptr`` into ``host`` where it is a writable C-contiguous buffer (True), else nothing (False)."""

def live_count() -> int:
    """DeviceMemory owners allocated and not yet freed."""

def release_all() -> None:
    """Frees every DeviceMemory still alive (cubind's exit hook), without raising."""

def abandon(contexts: Iterable[int]) -> None:
    """Forgets, without a driver call, the DeviceMemory allocated in ``contexts`` (Device.reset())."""
