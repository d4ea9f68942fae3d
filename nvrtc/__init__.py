"""NVRTC, the CUDA runtime compiler: CUDA C++ source to PTX, CUBIN, LTO-IR.

Every function of ``nvrtc.h`` with its C name; each returns a tuple whose
first element is an ``nvrtcResult``, then the outputs. The library is found
and opened on the first call (see ``cubind._loader``), never at import.
"""

from nvrtc import _nvrtc
from nvrtc._nvrtc import __all__

# Everything but the enum classes: _nvrtc makes those when first looked up.
globals().update({_name: getattr(_nvrtc, _name) for _name in __all__ if _name not in _nvrtc._LAZY})


def __getattr__(name):
    if name in _nvrtc._LAZY:
        value = globals()[name] = getattr(_nvrtc, name)
        return value
    raise AttributeError(f"module 'nvrtc' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _nvrtc._LAZY)
