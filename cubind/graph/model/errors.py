"""The graph's exceptions: each names where the problem is (entity,
component, parameter, phase), so that a YAML app's author can find it."""


class GraphError(Exception):
    """A graph that cannot be built or run as described (a bad connection, an
    unknown component type, a reference to a component that is not there)."""


class ParameterError(GraphError, ValueError):
    """A component parameter that is missing, unknown or of the wrong type;
    the message names ``entity/component/key``."""


class CodeletError(GraphError):
    """A codelet raised: ``entity``, ``codelet`` (the component's name),
    ``phase`` (``"start"``, ``"tick"`` or ``"stop"``); the codelet's own
    exception is ``__cause__``."""

    def __init__(self, entity, codelet, phase, cause):
        self.entity, self.codelet, self.phase = entity, codelet, phase
        super().__init__(f"entity {entity!r}, codelet {codelet!r}: {phase}() raised "
                         f"{type(cause).__name__}: {cause}")


def add_note(exc, text):
    """``exc.add_note(text)``; on Python 3.10, which lacks it, the same
    ``__notes__`` attribute (its tracebacks do not print it)."""
    if hasattr(exc, "add_note"):
        exc.add_note(text)
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", []), text]
