"""libNVVM: compiles NVVM IR (text or bitcode) to PTX, or to LTO-IR with -gen-lto.

Every function of ``nvvm.h`` with its C name; each returns a tuple whose
first element is an ``nvvmResult``, then the outputs. The library is found
and opened on the first call (see ``cubind._bind.loader``; in a toolkit it lives
in ``nvvm/lib64``), never at import.
"""

from cubind._bind.exports import reexport as _reexport
from nvvm import _nvvm

__getattr__, __dir__ = _reexport(globals(), _nvvm)
__all__ = list(_nvvm.__all__)
