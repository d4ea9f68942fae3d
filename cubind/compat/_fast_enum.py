"""``cuda.bindings._internal._fast_enum``: NVIDIA's enum type since its 13.2,
served by cubind's own (``_cubind.enum.CEnum``), which every enum of cubind's
modules already is. What consumers do with it works the same: subclass it with
int members (cuda.core's ``system.typing.DeviceArch``), test ``isinstance`` /
``issubclass`` against it and dispatch on the class and its metaclass
(numba-cuda's ``typeof``), read ``.name``, ``.value``, ``__members__``, look a
member up by value (``ValueError`` for an unknown one), iterate, ``len``.

Differences, none read by the released consumers: a member's ``str()`` is
``Cls.NAME`` (NVIDIA's is its ``repr``), and a member may not be written as a
``(value, docstring)`` pair.
"""

from _cubind.enum import CEnum as FastEnum
from _cubind.enum import _EnumMeta as FastEnumMetaclass

__all__ = ["FastEnum", "FastEnumMetaclass"]
