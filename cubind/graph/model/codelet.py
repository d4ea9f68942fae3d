"""The codelet: the user's class, with ``start()``, ``tick()`` and ``stop()``
and what GXF's ``CodeletAdapter`` gives it (its queues, allocators, stream
pools, clock, parameters, ids, timestamps)."""

import cubind

from .clock import Clock
from .component import Component
from .errors import GraphError
from .parameters import Parameter, Ref
from .queues import Receiver, Transmitter
from .resources import Allocator, CudaStreamPool


class _Name(str):
    """The codelet's name, readable as ``self.name`` and, as in GXF, ``self.name()``."""

    def __call__(self):
        return str(self)


def _by_name(items, name, kind, owner):
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"{owner.path}: no {kind} named {name!r}; it has "
                   f"{', '.join(repr(i.name) for i in items) or 'none'}")


class Codelet(Component):
    """Subclass it and implement ``start``, ``tick``, ``stop``; declare typed
    parameters as class attributes (``count = Parameter(int, 10)``). The
    lists ``receivers``, ``transmitters``, ``allocators`` and
    ``cuda_stream_pools`` default to every one of the entity's own."""

    receivers = Parameter([Ref(Receiver)], None, "receivers by name (default: the entity's)")
    transmitters = Parameter([Ref(Transmitter)], None, "transmitters by name (default: the entity's)")
    allocators = Parameter([Ref(Allocator)], None, "allocators by name (default: the entity's)")
    cuda_stream_pools = Parameter([Ref(CudaStreamPool)], None, "stream pools by name (default: the entity's)")
    clock = Parameter(Ref(Clock), None, "default: the graph's clock")
    codelet_params = Parameter(str, "", "a string the codelet parses itself (GXF's form)")

    # In a GPU-resident chain (Graph.gpu_resident): True says the tick only
    # queues device work on self.stream; False keeps the codelet out of any
    # chain; None (unknown) lets the capture of its first tick decide.
    gpu_resident = None

    def on_bind(self):
        self._stream = None
        self._pool = None
        self.started = False
        self._count = 0
        self._last = None
        self._delta = 0

    def resolve(self, graph):
        super().resolve(graph)
        entity = self.entity
        for key, kind in (("receivers", Receiver), ("transmitters", Transmitter), ("allocators", Allocator),
                          ("cuda_stream_pools", CudaStreamPool)):
            if self._params[key] is None:
                self._params[key] = [c for c in entity.components if isinstance(c, kind)]
        if self._params["clock"] is None:
            self._params["clock"] = graph.clock

    # -- what the user implements

    def start(self):
        """Once, before the first tick."""

    def tick(self):
        """Each time the entity's scheduling terms allow."""

    def stop(self):
        """Once, after the last tick, for every codelet whose start() ran."""

    # -- GXF's CodeletAdapter

    @property
    def name(self):
        return _Name(self._name)

    def eid(self):
        return self.entity.eid

    def cid(self):
        return self.component_id

    def get_receivers(self):
        return list(self.receivers)

    def get_transmitters(self):
        return list(self.transmitters)

    def get_allocators(self):
        return list(self.allocators)

    def get_cuda_stream_pools(self):
        return list(self.cuda_stream_pools)

    def get_clock(self):
        return self.clock

    def get_codelet_params(self):
        return self.codelet_params

    def get_execution_timestamp(self):
        """Clock time (ns) of the last start, tick or stop."""
        return self._last

    def get_execution_time(self):
        """The same in seconds."""
        return None if self._last is None else self._last / 1e9

    def get_delta_time(self):
        """Seconds between this phase's time and the previous one's."""
        return self._delta / 1e9

    def get_execution_count(self):
        """Ticks so far (1 during the first tick)."""
        return self._count

    def is_first_tick(self):
        return self._count == 1

    # -- Pythonic access

    def rx(self, name):
        """This codelet's receiver ``name``."""
        return _by_name(self.receivers, name, "receiver", self)

    def tx(self, name):
        """This codelet's transmitter ``name``."""
        return _by_name(self.transmitters, name, "transmitter", self)

    @property
    def allocator(self):
        """The first allocator."""
        if not self.allocators:
            raise GraphError(f"{self.path}: no allocator: add an UnboundedAllocator to entity "
                             f"{self.entity.name!r} or name one in 'allocators'")
        return self.allocators[0]

    @property
    def stream(self):
        """The ``cubind.Stream`` taken from the first stream pool for this
        codelet's life, or None without one; it is the current stream
        (``cubind.current_stream()``) inside start, tick and stop."""
        return self._stream

    @property
    def device(self):
        """The entity's device ordinal (None: the current device)."""
        return self.entity.device

    # -- the scheduler's side: cubind.graph's schedulers and GPU-resident
    # chains call these (scheduling/); a codelet does not

    def stamp(self, phase, now):
        """The timestamps and count, as ``phase`` is about to run at ``now``
        (run_phase does it; the scheduler's loop does it before calling
        ``tick()`` itself where there is no device to make current, setting
        these three attributes without the call where this method is not
        overridden: scheduling/loop.pyx's _stamp_tick)."""
        if self._last is not None:
            self._delta = now - self._last
        self._last = now
        if phase == "tick":
            self._count += 1

    def run_phase(self, phase, now, stream=None):
        """Calls ``phase`` (``"start"``, ``"tick"`` or ``"stop"``) with the
        entity's device current and the codelet's stream current; the
        timestamps and count are updated first. ``stream``, where given,
        stands in for the codelet's own during the call (``self.stream`` is
        it): a GPU-resident chain ticks every codelet on the chain's."""
        if stream is not None:
            own, self._stream = self._stream, stream
            try:
                return self.run_phase(phase, now)
            finally:
                self._stream = own
        self.stamp(phase, now)
        if phase == "start" and self.cuda_stream_pools:
            self._pool = self.cuda_stream_pools[0]
            self._stream = self._pool.allocate_stream()
        method = getattr(self, phase)
        stream, ordinal = self._stream, self.entity.device
        # Plain with-blocks, not an ExitStack: this runs on every tick.
        if ordinal is None:
            if stream is None:
                method()
            else:
                with stream:
                    method()
            return
        with cubind.Device(ordinal):
            if stream is None:
                method()
            else:
                with stream:
                    method()

    def return_stream(self):
        """Gives the stream taken from the pool at start back to it (after stop)."""
        if self._stream is not None:
            self._pool.release_stream(self._stream)
            self._stream = None
