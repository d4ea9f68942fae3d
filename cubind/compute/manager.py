"""Manager: the owner of a device's compute resources, in Kompute's terms."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING

import cubind

from .algorithm import Algorithm, check_tensor
from .sequence import Sequence
from .specialize import CompileCache
from .tensor import Tensor, TensorTypes

if TYPE_CHECKING:
    from collections.abc import Mapping
    from collections.abc import Sequence as _Seq
    from typing import Any, Literal, SupportsIndex

    import numpy.typing as npt

    from .tensor import _Dims, _Number, _Values

log = logging.getLogger("cubind.compute")


class Manager:
    """Tensors, algorithms and sequences on one device.

    ``Manager(device=0, streams=None)``: ``device`` an ordinal or a
    :class:`cubind.Device`; ``streams`` how many streams to make (default 1)
    or a list of streams to use as they are (cubind.Stream, cuda.CUstream,
    any stream ``cubind.Stream.from_handle`` takes). ``mgr.sequence(i)``
    runs on stream ``i``: sequences on different streams may run at once.
    ``destroy()`` (or the end of ``with Manager() as mgr:``) frees everything
    it made. It logs to ``logging.getLogger("cubind.compute")``.
    """
    compile_cache: Any
    # Set in __init__ (one tuple assignment): declared here for the type checker only.
    _tensors: weakref.WeakSet[Tensor]
    _algorithms: weakref.WeakSet[Algorithm]
    _sequences: weakref.WeakSet[Sequence]

    def __init__(self, device: cubind.Device | SupportsIndex = 0, streams: int | _Seq[Any] | None = None) -> None:
        self._device = cubind.Device(device)
        import cuda  # the 1:1 module, for the calls cubind has no object for (here once a manager exists)

        self._cuda = cuda
        log.info("using device %d (%s), %d found", self._device.ordinal, self._device.name, cubind.Device.count())
        self._lock = threading.RLock()  # tensors' last uses, the resource lists
        self._destroyed = False
        self._tensors, self._algorithms, self._sequences = weakref.WeakSet(), weakref.WeakSet(), weakref.WeakSet()
        self._notify = None
        self.compile_cache = CompileCache()
        with self._device:
            self._streams, self._owned = _make_streams(self._device, streams)
        log.debug("manager on device %d: %d streams", self._device.ordinal, len(self._streams))

    @property
    def device(self) -> cubind.Device:
        return self._device

    @property
    def streams(self) -> list[cubind.Stream]:
        return list(self._streams)

    def __repr__(self):
        state = " (destroyed)" if self._destroyed else ""
        return f"<cubind.compute.Manager device {self._device.ordinal}, {len(self._streams)} streams{state}>"

    def __enter__(self) -> Manager:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.destroy()
        return False

    # -- making things -----------------------------------------------------------------

    def tensor(self, data: npt.ArrayLike, dtype: npt.DTypeLike | None = None,
               tensor_type: TensorTypes = TensorTypes.device) -> Tensor:
        """A tensor holding ``data`` on the host (float32 unless ``data`` is a
        numpy array or ``dtype`` says otherwise); an ``OpTensorSyncDevice``
        copies it to the device."""
        self._check_alive("tensor")
        return self._register(self._tensors, Tensor(self, data, dtype, tensor_type))

    def tensor_t(self, data: npt.ArrayLike, tensor_type: TensorTypes = TensorTypes.device) -> Tensor:
        """Kompute's typed form: the tensor takes ``data``'s own dtype."""
        return self.tensor(data, None, tensor_type)

    def algorithm(self, tensors: _Seq[Tensor], kernel: str | bytes | cubind.Program | cubind.Module | cubind.Kernel,
                  workgroup: _Dims | None = None, spec_consts: _Values | Mapping[str, _Number] | None = None,
                  push_consts: _Values | None = None, *, block: _Dims | None = None,
                  entry: str | None = None) -> Algorithm:
        """An algorithm running ``kernel`` (CUDA C++ source, a cubind.Program,
        Module or Kernel) on ``tensors``; see docs/compute.md for how tensors,
        push and specialisation constants reach the kernel."""
        self._check_alive("algorithm")
        algorithm = Algorithm(self, tensors, kernel, workgroup, spec_consts, push_consts, block=block, entry=entry)
        return self._register(self._algorithms, algorithm)

    def sequence(self, queue_index: int = 0) -> Sequence:
        """An empty sequence on stream ``queue_index`` of the manager's."""
        self._check_alive("sequence")
        if isinstance(queue_index, bool) or not isinstance(queue_index, int):
            raise TypeError(f"queue_index: expected an int, not {type(queue_index).__name__}")
        if not 0 <= queue_index < len(self._streams):
            raise ValueError(f"queue_index: {queue_index} is out of range (the manager has "
                             f"{len(self._streams)} streams)")
        return self._register(self._sequences, Sequence(self, self._streams[queue_index]))

    def _register(self, registry, item):
        with self._lock:
            registry.add(item)
        return item

    def _own_tensors(self, tensors, what):
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(f"{what}: expected a list of tensors, not {type(tensors).__name__}")
        return [check_tensor(t, self, f"{what}[{i}]") for i, t in enumerate(tensors)]

    # -- evaluating (called by sequences) ------------------------------------------------------

    def _launch(self, sequence, before=None):
        """Orders ``sequence`` after other sequences' evaluations that used its
        tensors on other streams, launches it and notes it as their last use;
        under the lock so that threads evaluating sequences sharing tensors
        see one order. ``before``, where given, runs first in the same device
        scope (the sequence's changed push constants)."""
        driver = self._cuda
        stream = sequence._stream_handle
        with self._lock, self._device:
            if before is not None:
                before()
            waited = []
            for tensor in sequence._tensors:
                last = tensor._last
                if last is not None and last[0] != stream and not any(e is last[1] for e in waited):
                    waited.append(last[1])
                    cubind.check(driver.cuStreamWaitEvent(stream, last[1].handle, 0), "cuStreamWaitEvent")
            sequence._launch_on_stream()
            for tensor in sequence._tensors:
                tensor._last = (stream, sequence.event)

    def _notifier(self):
        """The stream that wakes asyncio waiters (made on first use)."""
        with self._lock:
            if self._notify is None:
                with self._device:
                    self._notify = cubind.Stream(non_blocking=True)
                log.debug("manager: asyncio notification stream created")
            return self._notify

    # -- release ---------------------------------------------------------------------------

    def _check_alive(self, what):
        if self._destroyed:
            raise ValueError(f"{what}: the Manager was destroyed")

    def destroy(self) -> None:
        """Waits for running sequences, then frees every sequence, algorithm
        and tensor it made (their ``is_init()`` turns false) and its streams.
        Host data stays readable through numpy views of ``data()``."""
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            sequences, algorithms, tensors = list(self._sequences), list(self._algorithms), list(self._tensors)
        log.debug("manager destroying %d sequences, %d algorithms, %d tensors", len(sequences), len(algorithms),
                  len(tensors))
        for sequence in sequences:
            sequence.destroy()
        for algorithm in algorithms:
            algorithm.destroy()
        for tensor in tensors:
            tensor.destroy()
        for stream in self._owned + ([self._notify] if self._notify is not None else []):
            stream.close()
        log.info("manager on device %d destroyed", self._device.ordinal)


def _make_streams(device, streams):
    """(the streams, those of them the manager made and closes)."""
    if streams is None:
        streams = 1
    if isinstance(streams, int) and not isinstance(streams, bool):
        if streams < 1:
            raise ValueError(f"streams: a manager needs at least 1 stream, got {streams}")
        made = [cubind.Stream(non_blocking=True) for _ in range(streams)]
        for stream in made:
            log.debug("manager: stream 0x%x created", int(stream))
        return made, list(made)
    if not isinstance(streams, (list, tuple)) or not streams:
        raise TypeError(f"streams: expected a count or a non-empty list of streams, not {streams!r}")
    given = []
    for i, stream in enumerate(streams):
        if type(stream) is int:
            raise TypeError(f"streams[{i}]: a plain int is ambiguous (Kompute's queue family index, or a stream "
                            f"handle?); give a count (streams=2) or stream objects (cubind.Stream, cuda.CUstream)")
        given.append(stream if isinstance(stream, cubind.Stream) else cubind.Stream.from_handle(stream, device))
    return given, []
