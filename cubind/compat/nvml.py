"""``cuda.bindings.nvml``, NVIDIA's Pythonic NVML module (cuda-bindings 13.2
and later), as far as cuda.core 1.2's import reads it, over cubind's ``nvml``:
the enums ``DeviceArch`` and ``FieldId`` (``cuda.core.system.typing`` derives
its own ``DeviceArch`` from the first), the status enum ``Return``, and
``NvmlError`` with a subclass per status (``cuda.core.system.exceptions``
re-exports them).

The functions and structs cuda.core's NVML-backed ``system.Device`` calls are
not served: cuda.core uses them only where ``cuda.bindings._version`` reports
13.2 or later, which a build from 13.0 or 13.1 headers does not.
"""

import nvml as _nvml
from _cubind.enum import CEnum as _FastEnum

__all__ = ["DeviceArch", "FieldId", "Return", "NvmlError"]


def _enum(name, prefix, source):
    """A FastEnum ``name`` of the ``prefix``ed ints of ``source`` (members named
    without the prefix), as NVIDIA spells its NVML enums."""
    values = {key[len(prefix):]: int(getattr(source, key)) for key in dir(source)
              if key.startswith(prefix) and isinstance(getattr(source, key), int)}
    members = dict(sorted(values.items(), key=lambda item: item[1]))  # in the header's order: by value
    return type(_FastEnum)(name, (_FastEnum,), {**members, "__module__": __name__})


DeviceArch = _enum("DeviceArch", "NVML_DEVICE_ARCH_", _nvml)
FieldId = _enum("FieldId", "NVML_FI_", _nvml)
Return = _enum("Return", "NVML_", _nvml.nvmlReturn_t)


class NvmlError(Exception):
    """An NVML status other than success; ``.status`` is its :class:`Return`."""

    def __init__(self, status):
        self.status = Return(int(status))
        super().__init__(f"{self.status.name} ({int(status)})")

    def __reduce__(self):
        return type(self), (int(self.status),)


def _class_name(status_name):
    """``ERROR_LIB_RM_VERSION_MISMATCH`` -> ``LibRmVersionMismatchError``."""
    return "".join(word.capitalize() for word in status_name.removeprefix("ERROR_").split("_")) + "Error"


def _error_classes():
    classes = {}
    for member in Return:
        if member.name.startswith("ERROR_"):
            name = _class_name(member.name)
            classes[name] = type(name, (NvmlError,), {"__module__": __name__, "__doc__": f"NVML_{member.name}."})
    return classes


_ERRORS = _error_classes()
globals().update(_ERRORS)
__all__ += sorted(_ERRORS)
