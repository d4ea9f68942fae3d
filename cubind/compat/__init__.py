"""``cuda.bindings`` served by cubind's modules, on request.

Libraries written against NVIDIA's classic modules (``from cuda.bindings
import driver, runtime, nvrtc``; cuda.core 0.3 is one) run on cubind after::

    import cubind.compat
    cubind.compat.install()

or with ``CUBIND_CUDA_BINDINGS=1`` in the environment, read when the first
generated package is imported (``import cuda``, ``nvrtc``, ...; ``from
cuda.bindings import driver`` imports ``cuda`` first), without importing
cubind. Nothing changes by default: cubind's modules and NVIDIA's
``cuda.bindings`` coexist in one process.

``install()`` puts a finder first on ``sys.meta_path`` that answers the
names below with cubind's modules, imported when first asked for:

- ``cuda.bindings.driver``: ``cuda`` (the driver API);
- ``cuda.bindings.runtime``: ``cuda.cudart``;
- ``cuda.bindings.nvrtc``: ``nvrtc``;
- ``cuda.bindings.nvjitlink`` and ``cuda.bindings.nvvm``: NVIDIA's
  exception-raising API for those two libraries (``create``, ``add_data``,
  ...: no tuple convention ever existed for them), over cubind's ``nvjitlink``
  and ``nvvm`` (:mod:`cubind.compat.nvjitlink`, :mod:`cubind.compat.nvvm`);
- ``cuda.bindings._internal.nvjitlink`` / ``.nvvm``: the symbol probe those
  libraries' users call;
- ``cuda.bindings.utils``, ``._version``, ``._internal.utils``,
  ``._internal._fast_enum`` and the part of NVIDIA's Pythonic
  ``cuda.bindings.nvml`` that cuda.core 1.2 reads: the helper and private
  names released consumers import (:mod:`cubind.compat.utils`, ...);
- ``cuda.bindings.cydriver``, ``.cyruntime``, ``.cynvrtc``, ... (the C-level
  modules compiled consumers cimport): cubind's ``cuda._cydriver``, ...

Where no ``cuda-bindings`` distribution is installed, its metadata (the
version, which cuda.core reads) is served too, as the CUDA version cubind's
modules were generated from.

The finder lives in the generated packages' runtime (:mod:`_cubind.compat`),
which the generated packages call when the environment asks for it; this
package is its public face and holds the nvJitLink and NVVM APIs it serves.
"""

from _cubind.compat import ENVIRONMENT_VARIABLE, install, installed

__all__ = ["install", "installed", "ENVIRONMENT_VARIABLE"]
