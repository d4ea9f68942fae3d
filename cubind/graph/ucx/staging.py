"""Device tensors UCX cannot send by CUDA IPC, copied on the device first.

UCX's CUDA IPC transport exports memory from ``cuMemAlloc``; memory of a
stream-ordered pool (``cuMemAllocAsync``: cubind's allocations with
``stream=``, so every graph allocator's, and CuPy's or PyTorch's async
allocators) it cannot export, and it then moves each buffer through host
bounce buffers. On an H100 (UCX 1.21, two processes): 16 MiB tensors from
``cuMemAlloc`` 1 586 messages/s, from the device's pool 24 (0.4 GB/s), from
an exportable pool no better. So a transmitter copies such a tensor into a
``cuMemAlloc`` block of its own (device to device, on its stream) and sends
that; a block goes back to its free list once its message is sent, so the
next message of that shape sends from the same memory (UCX's IPC cache then
finds its mapping)."""

import cubind


def from_a_pool(array):
    """Whether ``array``'s memory belongs to a stream-ordered pool: cubind's
    own memory knows (``DeviceMemory.pooled``); for memory of another library
    the driver says (its allocation's pool handle is not NULL). A driver call
    per message on the publishing thread was one more beside the data path's
    own, which the driver serializes."""
    pooled = getattr(array.memory, "pooled", None)  # cubind's DeviceMemory; not another library's
    if pooled is not None:
        return bool(pooled)
    import cuda  # here, not at import: a host-only app's transport never loads the driver's module

    err, pool = cuda.cuPointerGetAttribute(cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, array.ptr)
    return int(err) == 0 and pool is not None and int(pool) != 0


class DeviceStaging:
    """One transmitter's blocks, used under its link's lock."""

    def __init__(self, stream=None):
        self._free = {}  # (device, shape, dtype) -> [cubind.Array]
        # The copies' stream: a non-blocking one of its own, made at the first copy (or a raw handle).
        self._stream = stream

    def stage(self, buffers, ordinal, ready=None):
        """``(buffers, taken, copied)``: ``buffers`` with each pool-memory
        device array replaced by a block holding a copy, the blocks taken
        (to give back with :meth:`give_back` once sent), and where there
        were copies an event after them (a ``cubind.Event``; None where the
        copies are done on return: a raw stream handle's). The copies follow
        the producer's ``ready`` event (a ``cubind.Event``). UCX reads
        outside any stream: the data path sends once ``copied`` is complete,
        and this thread does not wait for it."""
        staged, taken = [], []
        for data in buffers:
            device = data if isinstance(data, cubind.Array) else None
            if device is None and hasattr(data, "__cuda_array_interface__"):  # CuPy's, PyTorch's, ...
                device = cubind.asarray(data)
            if device is None or not from_a_pool(device):
                staged.append(data)
                continue
            data = device
            key = (ordinal, data.shape, data.dtype.str)
            blocks = self._free.get(key)
            block = blocks.pop() if blocks else cubind.empty(data.shape, data.dtype, pool=False)  # cuMemAlloc
            if self._stream is None:
                self._stream = cubind.Stream(non_blocking=True)
            if ready is not None:
                self._wait(ready)
                ready = None
            block.copy_from(data, stream=self._stream)
            staged.append(block)
            taken.append((key, block))
        if not taken:
            return staged, taken, None
        if isinstance(self._stream, cubind.Stream):
            return staged, taken, cubind.Event(timing=False).record(self._stream)
        import cuda  # here too: see from_a_pool

        cubind.check(cuda.cuStreamSynchronize(self._stream), "cuStreamSynchronize")
        return staged, taken, None

    def _wait(self, event):
        """The copies' stream waits for ``event`` (a message's ready event:
        a ``cubind.Event``, or the graph's pooled one holding it; none for
        one ready at publish, ``ordering.READY``)."""
        inner = getattr(event, "event", event)
        if inner is None:
            return
        if isinstance(self._stream, cubind.Stream):
            self._stream.wait(inner)
        else:  # a raw handle
            import cuda  # here too: see from_a_pool

            cubind.check(cuda.cuStreamWaitEvent(self._stream, event.handle, 0), "cuStreamWaitEvent")

    def give_back(self, taken):
        for key, block in taken:
            self._free.setdefault(key, []).append(block)
