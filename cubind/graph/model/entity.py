"""An entity: named components (codelets, queues, terms, resources) ticked
together, on one device."""

from .component import Component, new_id
from .errors import GraphError


class Entity:
    """``graph.entity(name, device=None)`` makes one; ``add(component, name)``
    fills it. ``device`` is the ordinal its codelets run on (None: the
    current device)."""

    def __init__(self, graph, name, device=None):
        if device is not None and (not isinstance(device, int) or isinstance(device, bool) or device < 0):
            raise GraphError(f"entity {name!r}: device must be an ordinal (0, 1, ...), got {device!r}")
        self.graph, self.name, self.device = graph, name, device
        self.eid = new_id()
        self.components = []

    def add(self, component, name=None):
        """Adds ``component`` (its parameters are checked here) and returns it."""
        if not isinstance(component, Component):
            raise TypeError(f"entity {self.name!r}: component must be a cubind.graph component, got "
                            f"{type(component).__name__}")
        if name is None:
            name = f"_{type(component).__name__}_{len(self.components)}"
        if any(c.name == name for c in self.components):
            raise GraphError(f"entity {self.name!r} already has a component named {name!r}")
        component.attach(self, name)
        self.components.append(component)
        return component

    def __getitem__(self, name):
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(f"entity {self.name!r} has no component {name!r}; it has "
                       f"{', '.join(repr(c.name) for c in self.components) or 'none'}")

    def of_type(self, kind):
        return [c for c in self.components if isinstance(c, kind)]

    def __repr__(self):
        return f"<Entity {self.name} ({len(self.components)} components)>"
