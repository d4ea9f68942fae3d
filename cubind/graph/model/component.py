"""What an entity holds: components with typed parameters, named within
their entity, registered under their GXF type name for YAML apps."""

import itertools

from .errors import GraphError, ParameterError
from .parameters import Ref, bind, declared

# next() on an itertools.count is one C call that no other thread can enter
# halfway (it holds the GIL, or on a free-threaded build the object's lock):
# each caller gets its own value. A lock around a list cost half a message's
# id (every message takes one).
_ids = itertools.count(1)


def new_id():
    """A process-wide unique id for an entity or a component (GXF's eid/cid)."""
    return next(_ids)


class Component:
    """A part of an entity. Subclasses declare :class:`Parameter` attributes
    and may name their GXF type (``class X(Component, gxf_type="X")``), under
    which a YAML app finds them (with or without ``nvidia::gxf::``)."""

    types: dict = {}
    gxf_type = None

    def __init_subclass__(cls, gxf_type=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if gxf_type is not None:
            cls.gxf_type = gxf_type
            Component.types[gxf_type] = cls

    def __init__(self, **params):
        self._given = params
        self._params = None
        self._name = None
        self.entity = None
        self.component_id = None

    @property
    def name(self):
        return self._name

    @property
    def path(self):
        entity = self.entity.name if self.entity is not None else "?"
        return f"{entity}/{self.name}"

    def __repr__(self):
        return f"<{type(self).__name__} {self.path}>"

    def attach(self, entity, name):
        """Joins ``entity`` as ``name``: the parameters are checked here."""
        if self.entity is not None:
            raise GraphError(f"{type(self).__name__} {self.path} is already in an entity")
        self.entity, self._name, self.component_id = entity, name, new_id()
        self._params = bind(self, self.path, self._given)
        self.on_bind()

    def on_bind(self):
        """Checks across parameters, after they are bound (subclasses)."""

    def resolve(self, graph):
        """Replaces each reference parameter's name by its component."""
        for name, param in declared(type(self)).items():
            kind = param.type
            value = self._params[name]
            if isinstance(kind, Ref) and value is not None:
                self._params[name] = graph.lookup(self, f"{self.path}/{name}", value, kind.kind)
            elif isinstance(kind, list) and isinstance(kind[0], Ref) and value is not None:
                self._params[name] = [graph.lookup(self, f"{self.path}/{name}[{i}]", v, kind[0].kind)
                                      for i, v in enumerate(value)]


def component_type(where, name):
    """The class registered as ``name`` (``nvidia::gxf::X`` or ``X``)."""
    short = name.split("::")[-1]
    try:
        return Component.types[short]
    except KeyError:
        raise ParameterError(f"{where}: unknown component type {name!r}; known: "
                             f"{', '.join(sorted(Component.types))}") from None
