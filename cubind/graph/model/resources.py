"""What a codelet is given besides queues: an allocator for host, pinned and
device tensors, and a pool of CUDA streams. Nothing here loads the driver
until a pinned or device tensor or a stream is asked for."""

import contextlib
import threading
import weakref

import numpy as np

import cubind

from .component import Component
from .errors import GraphError, ParameterError
from .message import Tensor, TensorDescription, _as_dtype, storage_name
from .parameters import Parameter


def device_scope(ordinal):
    """``with device_scope(entity.device):`` makes that device current; None
    (an entity placed nowhere) leaves the current one."""
    return cubind.Device(ordinal) if ordinal is not None else contextlib.nullcontext()


def _pinned_buffer(nbytes, ordinal):
    """``nbytes`` of page-locked host memory as a uint8 numpy array, made in
    device ``ordinal``'s context; freed with the array's last view, or at exit."""
    with device_scope(ordinal):
        return cubind.empty_pinned(nbytes, np.uint8)


def _host_array(desc, ordinal):
    if desc.storage == "pinned":
        buffer = _pinned_buffer(desc.nbytes, ordinal)
    else:
        buffer = np.empty(desc.nbytes, np.uint8)
    if desc.strides is None:
        return buffer.view(desc.dtype).reshape(desc.shape) if desc.size else np.empty(desc.shape, desc.dtype)
    offset = sum((n - 1) * -s for n, s in zip(desc.shape, desc.strides) if s < 0)
    return np.ndarray(desc.shape, desc.dtype, buffer, offset, desc.strides)


def _device_array(desc, ordinal, stream=None):
    with device_scope(ordinal):
        if desc.strides is None:
            return cubind.empty(desc.shape, desc.dtype, stream=stream)
        owner = cubind.empty(desc.nbytes, np.uint8, stream=stream)
        offset = sum((n - 1) * -s for n, s in zip(desc.shape, desc.strides) if s < 0)
        return cubind.Array.from_ptr(owner.ptr + offset, desc.shape, desc.dtype, desc.strides, owner=owner)


class Allocator(Component):
    """Makes tensors. Device memory comes from the current stream (the
    codelet's pool stream inside its phases: ``cuMemAllocAsync`` there)."""

    def allocate(self, shape, dtype, storage="device", strides=None, name="tensor"):
        """A numpy array (``"host"``, ``"pinned"``) or ``cubind.Array`` (``"device"``)."""
        if storage == "device" and strides is None and self._plain(shape):
            # A source codelet asks for one per message: what tensor() and make() would do
            # for a C-ordered device tensor, without the description and Tensor between.
            ordinal = self.entity.device if self.entity is not None else None
            if ordinal is None:
                return cubind.empty(shape, _as_dtype(dtype))
            with cubind.Device(ordinal):
                return cubind.empty(shape, _as_dtype(dtype))
        return self.tensor(TensorDescription(name, storage, shape, dtype, strides)).data

    def _plain(self, shape):
        """Whether ``allocate`` may skip ``tensor``: neither it nor ``make`` is
        overridden, no GPU-resident chain holds the allocator, and ``shape`` is
        a tuple of extents that TensorDescription would take as it is."""
        cls = type(self)
        if self._fixed_for is not None or cls.tensor is not Allocator.tensor or cls.make is not Allocator.make \
                or type(shape) is not tuple:
            return False
        for n in shape:  # a loop, not all() over a generator: a source asks once per message
            if type(n) is not int or n < 0:
                return False
        return True

    _fixed_for = None  # (chain, thread) inside fixed_for(chain) on that thread

    def tensor(self, description):
        """A :class:`Tensor` shaped as ``description`` (GXF's ``reshape_custom``)."""
        fixed = self._fixed_for
        if fixed is not None and fixed[1] == threading.get_ident():
            return fixed[0].fixed_tensor(self, description)
        return self.make(description)

    def make(self, description, stream=None):
        """A new :class:`Tensor` shaped as ``description``, on the entity's
        device; device memory ordered on ``stream`` (None: the current one).
        What ``tensor`` gives where no GPU-resident chain holds the allocator."""
        ordinal = self.entity.device if self.entity is not None else None
        if description.storage == "device":
            data = _device_array(description, ordinal, stream)
        else:
            data = _host_array(description, ordinal)
        return Tensor(description.name, data, description.storage)

    @contextlib.contextmanager
    def fixed_for(self, chain):
        """While the calling thread is inside, ``tensor`` asks ``chain``
        (``chain.fixed_tensor(allocator, description)``): a GPU-resident chain
        ticking its first message or capturing its second makes the tensors
        its codelets ask for its own (scheduling/resident.py). A codelet
        elsewhere naming this allocator, on another thread, still gets new ones."""
        self._fixed_for = (chain, threading.get_ident())
        try:
            yield self
        finally:
            self._fixed_for = None


class UnboundedAllocator(Allocator, gxf_type="UnboundedAllocator"):
    """Allocates as asked, without a limit (GXF's ``UnboundedAllocator``)."""


class BlockMemoryPool(Allocator, gxf_type="BlockMemoryPool"):
    """GXF's fixed-block pool, as a limit: tensors of one storage, each at most
    ``block_size`` bytes, at most ``num_blocks`` alive at once (the memory
    itself comes from cubind's allocation, which pools device memory)."""

    storage_type = Parameter(lambda v: v, 1, "GXF's storage: 0/kHost pinned, 1/kDevice, 2/kSystem host")
    block_size = Parameter(int, doc="bytes per block")
    num_blocks = Parameter(int, doc="blocks alive at once")

    def on_bind(self):
        by_number = {0: "pinned", 1: "device", 2: "host"}
        value = self.storage_type
        self.storage = by_number.get(value) if isinstance(value, int) else None
        if self.storage is None:
            try:
                self.storage = storage_name(value, f"{self.path}/storage_type")
            except ValueError as exc:
                raise ParameterError(str(exc)) from None
        if self.block_size < 1 or self.num_blocks < 1:
            raise ParameterError(f"{self.path}: block_size and num_blocks must be at least 1")
        self._lock = threading.Lock()
        self._alive = weakref.WeakSet()

    def tensor(self, description):
        if description.storage != self.storage:
            raise GraphError(f"{self.path}: holds {self.storage} blocks, asked for {description.storage}")
        if description.nbytes > self.block_size:
            raise GraphError(f"{self.path}: {description.nbytes} bytes asked, blocks are {self.block_size}")
        with self._lock:
            if len(self._alive) >= self.num_blocks:
                raise GraphError(f"{self.path}: all {self.num_blocks} blocks are in use")
            tensor = super().tensor(description)
            self._alive.add(tensor.data)
        return tensor


class CudaStreamPool(Component, gxf_type="CudaStreamPool"):
    """Streams for codelets: each codelet given this pool gets one for its
    life (``allocate_stream``), made on ``dev_id``."""

    dev_id = Parameter(int, 0)
    stream_flags = Parameter(int, 0, "1: non-blocking (CU_STREAM_NON_BLOCKING)")
    stream_priority = Parameter(int, 0, "lower is higher priority")
    reserved_size = Parameter(int, 1, "accepted for GXF's shape (streams are made on demand)")
    max_size = Parameter(int, 0, "most streams out at once; 0: no limit")

    def on_bind(self):
        if self.dev_id < 0:
            raise ParameterError(f"{self.path}/dev_id: must be 0 or more, got {self.dev_id}")
        self._lock = threading.Lock()
        self._free = []
        self._out = 0

    def allocate_stream(self):
        with self._lock:
            if self.max_size and self._out >= self.max_size:
                raise GraphError(f"{self.path}: all {self.max_size} streams are in use (max_size)")
            self._out += 1
            if self._free:
                return self._free.pop()
        try:
            return cubind.Stream(non_blocking=bool(self.stream_flags & 1), priority=self.stream_priority or None,
                                 device=cubind.Device(self.dev_id))
        except BaseException:
            with self._lock:
                self._out -= 1
            raise

    def release_stream(self, stream):
        with self._lock:
            self._out -= 1
            self._free.append(stream)
