"""NVRTC, the CUDA runtime compiler: CUDA C++ source to PTX, CUBIN, LTO-IR.

Every function of ``nvrtc.h`` with its C name; each returns a tuple whose
first element is an ``nvrtcResult``, then the outputs. The library is found
and opened on the first call (see ``cubind._bind.loader``), never at import.
"""

from cubind._bind.exports import reexport as _reexport
from nvrtc import _nvrtc

__getattr__, __dir__ = _reexport(globals(), _nvrtc)
__all__ = list(_nvrtc.__all__)
