"""Int-like enums for the generated bindings.

Members are ``int`` subclasses made once at import; the generated code maps a
C value to its member with one table or dict look-up, so the per-call cost
is that of an index, not of ``enum.IntEnum``'s machinery.
"""


class _EnumMeta(type):
    def __new__(mcls, name, bases, namespace):
        values = {k: v for k, v in namespace.items() if not k.startswith("_") and type(v) is int}
        for key in values:
            del namespace[key]
        cls = super().__new__(mcls, name, bases, namespace)
        by_value, names, by_name = {}, {}, {}
        for key, value in values.items():
            member = by_value.get(value)
            if member is None:  # a second name for a value is an alias of the first
                member = int.__new__(cls, value)
                by_value[value] = member
                names[value] = key
            by_name[key] = member
            type.__setattr__(cls, key, member)
        cls._value2member_ = by_value
        cls._names_ = names
        cls._member_map_ = by_name
        return cls

    def __call__(cls, value):
        if isinstance(value, cls):
            return value
        try:
            return cls._value2member_[value.__index__()]
        except (KeyError, AttributeError):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

    def __iter__(cls):
        return iter(cls._value2member_.values())

    def __len__(cls):
        return len(cls._value2member_)

    def __contains__(cls, item):
        return isinstance(item, cls) or (type(item) is int and item in cls._value2member_)

    def __getitem__(cls, name):
        return cls._member_map_[name]

    def __repr__(cls):
        return f"<enum {cls.__name__!r}>"

    @property
    def __members__(cls):
        return dict(cls._member_map_)


class CEnum(int, metaclass=_EnumMeta):
    """Base of the generated enums: an int with a name."""

    __slots__ = ()

    @property
    def name(self):
        return type(self)._names_.get(int(self), f"UNKNOWN_{int(self)}")

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}: {int(self)}>"

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __reduce__(self):
        return type(self), (int(self),)

    __hash__ = int.__hash__

    @classmethod
    def _unknown_(cls, value):
        """A value the C library returned that this header version does not name."""
        return int.__new__(cls, value)


def dense_table(cls, limit=4096):
    """Members indexed by value, for the values in [0, limit): one index finds
    them. Others (negative values, and outliers such as cudaError_t's
    cudaErrorApiFailureBase = 10000, which once left the runtime's status
    with no table at all) go to the dict."""
    values = cls._value2member_
    small = [v for v in values if 0 <= v < limit]
    if not small:
        return ()
    return tuple(values.get(v) for v in range(max(small) + 1))
