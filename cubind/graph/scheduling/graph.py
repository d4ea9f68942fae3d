"""The graph: entities and the connections between their queues; ``run()``
hands it to a scheduler."""

from cubind.graph.model.clock import Clock, RealtimeClock
from cubind.graph.model.codelet import Codelet
from cubind.graph.model.component import Component
from cubind.graph.model.entity import Entity
from cubind.graph.model.errors import GraphError
from cubind.graph.model.parameters import Parameter, Ref
from cubind.graph.model.queues import Receiver, Transmitter

from .resident import GPUResidentChain, ResidentChain, declared_lines
from .scheduler import GreedyScheduler, Scheduler


class Connection(Component, gxf_type="Connection"):
    """``source`` (a transmitter) feeds ``target`` (a receiver): names as
    ``entity/component``, or the components."""

    source = Parameter(Ref(Transmitter))
    target = Parameter(Ref(Receiver))


class Graph:
    """Entities, connections, a clock and a scheduler.

        g = Graph()
        tx = g.entity("tx")
        out = tx.add(DoubleBufferTransmitter(capacity=1), "signal")
        tx.add(CountSchedulingTerm(count=10))
        tx.add(PingTx(), "ping")
        ...
        g.connect(out, rx["signal"])
        g.run()
    """

    def __init__(self):
        self.entities = []
        self.clock = None
        self.scheduler = None
        self._finalized = False
        # A flag, not a threading.Event: the scheduler's loop reads it before every pick (an
        # Event's is_set was two Python calls a message), and one store is safe from any thread.
        self._interrupted = False
        self._system = None
        self.resident_chains = []
        self._declared_chains = False

    def entity(self, name, device=None):
        if any(e.name == name for e in self.entities):
            raise GraphError(f"the graph already has an entity named {name!r}")
        entity = Entity(self, name, device)
        self.entities.append(entity)
        return entity

    def __getitem__(self, name):
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(f"no entity {name!r}; the graph has {', '.join(repr(e.name) for e in self.entities)}")

    def connect(self, source, target):
        """``source`` (transmitter or ``"entity/component"``) to ``target`` (receiver or name)."""
        if self._system is None:
            self._system = self.entity(f"_connections_{id(self):x}")
        return self._system.add(Connection(source=source, target=target), f"connection_{len(self._system.components)}")

    def gpu_resident(self, *entities):
        """Names a chain of entities (names or entities, in line: each feeds
        the next alone) to capture into a CUDA graph and replay per message
        (``resident.py``, ``docs/graph.md``); returns the
        :class:`ResidentChain`. Checked when the graph runs. With no names:
        every longest line of entities whose codelets all declare
        ``gpu_resident = True`` becomes a chain when the graph runs (added to
        ``resident_chains`` then); returns None."""
        if not entities:
            self._declared_chains = True
            return None
        chain = ResidentChain(self, entities)
        taken = {n for c in self.resident_chains for n in c.names}
        for name in chain.names:
            if name in taken:
                raise GraphError(f"gpu_resident: entity {name!r} is in a chain already")
        self.resident_chains.append(chain)
        return chain

    def lookup(self, owner, where, value, kind):
        """The component ``value`` names, seen from ``owner``: its name in
        ``owner``'s entity, or ``entity/component``."""
        if isinstance(value, Component):
            found = value
        elif isinstance(value, str):
            entity_name, _, name = value.rpartition("/")
            try:
                entity = self[entity_name] if entity_name else owner.entity
                found = entity[name]
            except KeyError as exc:
                raise GraphError(f"{where}: {exc.args[0]}") from None
        else:
            raise GraphError(f"{where}: expected a component or its name, got {type(value).__name__} {value!r}")
        if not isinstance(found, kind):
            names = kind.__name__ if not isinstance(kind, tuple) else " or ".join(k.__name__ for k in kind)
            raise GraphError(f"{where}: {found.path} is a {type(found).__name__}, not a {names}")
        return found

    def components(self, kind=Component):
        return [c for e in self.entities for c in e.components if isinstance(c, kind)]

    def codelets(self):
        return self.components(Codelet)

    def finalize(self):
        """Resolves every reference, wires the connections, picks the clock
        (the first one in the graph, else a ``RealtimeClock``)."""
        if self._finalized:
            return
        clocks = self.components(Clock)
        if clocks:
            self.clock = clocks[0]
        else:
            self.clock = self.entity(f"_clock_{id(self):x}").add(RealtimeClock(), "clock")
        for component in self.components():
            component.resolve(self)
        for named in self.components(GPUResidentChain):  # a YAML app's chains
            self.gpu_resident(*(named.entities or ()))
        for link in self.components(Connection):
            if link.target in link.source.targets:
                raise GraphError(f"{link.path}: {link.source.path} is already connected to {link.target.path}")
            link.source.targets.append(link.target)
        self._finalized = True

    def run(self, scheduler=None):
        """Runs until no term can fire again, the scheduler's duration ends,
        or ``interrupt()``; ``scheduler`` defaults to the graph's own (from
        its YAML), else a greedy one."""
        self.finalize()
        if scheduler is None:
            found = self.components(Scheduler)
            scheduler = found[0] if found else None
        if scheduler is None:
            scheduler = self.entity(f"_scheduler_{id(self):x}").add(GreedyScheduler(), "scheduler")
            scheduler.resolve(self)
        elif scheduler.entity is None:
            self.entity(f"_scheduler_{id(self):x}").add(scheduler, "scheduler")
            scheduler.resolve(self)
        self.scheduler = scheduler
        if self._declared_chains:
            taken = {n for c in self.resident_chains for n in c.names}
            self.resident_chains += [ResidentChain(self, line) for line in declared_lines(self, taken)]
            self._declared_chains = False
        self._interrupted = False
        return scheduler.run(self)

    def interrupt(self):
        """Stops a running graph soon (safe from a signal handler or another thread)."""
        self._interrupted = True

    @property
    def interrupted(self):
        return self._interrupted
