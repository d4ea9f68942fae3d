"""NVRTC, the CUDA runtime compiler: CUDA C++ source to PTX, CUBIN, LTO-IR.

Every function of ``nvrtc.h`` with its C name; each returns a tuple whose
first element is an ``nvrtcResult``, then the outputs. The library is found
and opened on the first call (see ``cubind._loader``), never at import.
"""

from nvrtc._nvrtc import *  # noqa: F403
from nvrtc._nvrtc import __all__  # noqa: F401
