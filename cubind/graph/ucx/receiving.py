"""The device memory a UcxReceiver receives tensors into, reused.

UCX's CUDA IPC writes a received tensor into ``cuMemAlloc`` memory (memory
of a stream-ordered pool it cannot use without bouncing through the host:
``staging.py``). One ``cuMemAlloc`` per message was half of a receiver's
loop on the H200 (1 MiB tensors), and its ``cuMemFree``, when the consumer
drops the tensor, waits for the whole device. So a receiver keeps the
blocks: a tensor handed out is a view of a block (``Array.from_ptr``) whose
lease returns the block when the last array using it goes.

A returned block may still be read by kernels the consumer queued before it
dropped the tensor, on streams the receiver cannot know. As ``cuMemFree``
does, one ``cuCtxSynchronize`` settles them, but once for up to ``SETTLE``
returned blocks rather than once per message: until that many are back, a
receive takes a new block. Each size keeps at most ``KEEP`` free blocks;
the rest are freed."""

import math
import threading
import weakref

import numpy as np

import cubind

SETTLE = 4
KEEP = 16


class _Lease:
    """The owner of one handed-out view of a block, keeping the block: when
    it goes (every array over the block gone), its weak reference's callback
    returns the block."""

    __slots__ = ("block", "__weakref__")

    def __init__(self, block):
        self.block = block


class ReceiveBlocks:
    """One receiver's blocks of one device; ``take`` on the UCX loop's
    thread, returns on whichever thread drops the last array."""

    def __init__(self, ordinal):
        self.ordinal = ordinal
        # Reentrant: a lease may go (and its callback run) in a collection inside a locked section.
        self._lock = threading.RLock()
        self._free = {}  # nbytes -> [cubind.Array of uint8]
        self._returned = []  # (nbytes, block): back, but the device may still use them
        self._leases = {}  # weakref to a lease -> (nbytes, block)

    def take(self, shape, dtype):
        """A C-ordered ``cubind.Array`` of ``shape`` and ``dtype`` over a block of its size."""
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize  # numpy's prod took 2 % of a receiver's loop
        block = self._reuse(nbytes)
        if block is None:
            with cubind.Device(self.ordinal):
                block = cubind.empty((max(nbytes, 1),), "uint8", pool=False)  # cuMemAlloc: CUDA IPC takes it
        lease = _Lease(block)
        with self._lock:
            self._leases[weakref.ref(lease, self._back)] = (nbytes, block)
        return cubind.Array.from_ptr(block.ptr, shape, dtype, owner=lease, device=self.ordinal)

    def _reuse(self, nbytes):
        with self._lock:
            free = self._free.get(nbytes)
            if free:
                return free.pop()
            if len(self._returned) < SETTLE:
                return None
            returned, self._returned = self._returned, []
        # Outside the lock: the returns of other threads go on meanwhile.
        cubind.Device(self.ordinal).synchronize()
        with self._lock:
            for size, block in returned:
                kept = self._free.setdefault(size, [])
                if len(kept) < KEEP:
                    kept.append(block)  # the others are freed as they go from here
            free = self._free.get(nbytes)
            return free.pop() if free else None

    def _back(self, ref):
        with self._lock:
            entry = self._leases.pop(ref, None)
            if entry is not None:
                self._returned.append(entry)

    def close(self):
        """Forgets every block: a free one is freed now, one handed out when its arrays go (its lease holds it)."""
        with self._lock:
            self._free.clear()
            self._returned.clear()
            self._leases.clear()

