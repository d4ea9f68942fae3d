"""An enum member from what a user writes for it: the member, its value, or
its name in any case with or without the enum's prefix, as the layer's
attribute and option parameters take them."""

import operator

# An enum with more members than this is too long to list in an error: the
# names containing what was written are suggested instead.
_LISTED = 16


def enum_member(enum, prefix, value, param):
    """The member of ``enum`` that ``value`` names; ValueError or TypeError
    naming ``param`` otherwise."""
    if isinstance(value, str):
        name = value.upper()
        member = getattr(enum, name if name.startswith(prefix) else prefix + name, None)
        if not isinstance(member, enum):
            raise ValueError(f"{param}: {value!r} is not a {enum.__name__}{_hint(enum, prefix, name)}")
        return member
    try:
        return enum(operator.index(value))
    except TypeError:
        raise TypeError(f"{param}: expected a {enum.__name__} member, its name or its value, "
                        f"not {type(value).__name__}") from None
    except ValueError:
        raise ValueError(f"{param}: {value!r} is not a {enum.__name__} value") from None


def _hint(enum, prefix, name):
    names = [m.name[len(prefix):].lower() for m in enum]
    if len(names) <= _LISTED:
        return f" (one of: {', '.join(names)})"
    wanted = name[len(prefix):].lower() if name.startswith(prefix) else name.lower()
    close = sorted(n for n in names if wanted in n)
    return f"; did you mean one of {close[:5]}?" if close else ""
