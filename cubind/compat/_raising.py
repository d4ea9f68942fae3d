"""What NVIDIA's exception-raising modules share: an error class per library
carrying its status, the check that raises it, and str options as bytes."""

import enum


def result_enum(name, c_enum, prefix):
    """The library's status enum as an IntEnum, members named without ``prefix``."""
    return enum.IntEnum(name, {member[len(prefix):]: int(getattr(c_enum, member))
                               for member in dir(c_enum) if member.startswith(prefix)})


def error_class(name, results, module):
    """An exception class whose ``.status`` is a member of ``results``; it
    pickles by status, as NVIDIA's do."""

    def __init__(self, status):
        self.status = results(int(status))
        Exception.__init__(self, f"{self.status.name} ({int(status)})")

    def __reduce__(self):
        return type(self), (int(self.status),)

    doc = f"A status other than success; ``.status`` is the :class:`{results.__name__}`."
    return type(name, (Exception,), {"__init__": __init__, "__reduce__": __reduce__, "__doc__": doc,
                                     "__module__": module})


def checker(error):
    """``check(result)``: raises ``error`` for a status other than 0, else
    returns the outputs (None, the one value, or a tuple)."""

    def check(result):
        if int(result[0]) != 0:
            raise error(result[0])
        if len(result) == 1:
            return None
        return result[1] if len(result) == 2 else result[1:]

    return check


def as_bytes(value):
    """A str option or name as the C library's bytes."""
    return value.encode() if isinstance(value, str) else value
