"""nvJitLink: links LTO-IR, PTX, cubins and fatbins into one cubin at run time.

Every function of ``nvJitLink.h`` with its C name (each calls the versioned
ABI symbol the header's inline wrapper forwards to); each returns a tuple
whose first element is an ``nvJitLinkResult``, then the outputs. The library
is found and opened on the first call (see ``cubind._bind.loader``), never at import.
"""

from cubind._bind.exports import reexport as _reexport
from nvjitlink import _nvjitlink

__getattr__, __dir__ = _reexport(globals(), _nvjitlink)
__all__ = list(_nvjitlink.__all__)
