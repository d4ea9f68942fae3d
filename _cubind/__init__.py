"""The floor: what the generated packages (``cuda``, ``nvrtc``, ``nvvm``,
``nvjitlink``) run on. The library loader (``loader``), the conversions of
the 1:1 calls (``convert``), the enum base (``enum``), re-exports
(``exports``), ``CUDAError`` and ``LibraryNotFoundError`` (``errors``), the
CUDA search (``cuda_paths``), the EGL, GL and VDPAU stand-in headers (``platform_fallback/``)
and the ``cuda.bindings`` import hook (``compat``).

Private: users import the generated packages or ``cubind``. No module here
imports either; the import hook names the modules it serves and imports one
only when a program imports the served name (ARCHITECTURE.md). Importing this
package imports nothing.
"""
