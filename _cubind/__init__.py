"""The floor: what the generated packages (``cuda``, ``nvrtc``, ``nvvm``,
``nvjitlink``) run on. The library loader (``loader``), the conversions of
the 1:1 calls (``convert``), the enum base (``enum``), re-exports
(``exports``), ``CUDAError`` and ``LibraryNotFoundError`` (``errors``), the
CUDA search (``cuda_paths``), the EGL stand-in headers (``egl_fallback/``)
and the ``cuda.bindings`` import hook (``compat``).

Private: users import the generated packages or ``cubind``. It imports
nothing of either (ARCHITECTURE.md), and importing it imports nothing.
"""
