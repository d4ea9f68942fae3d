"""``cuda.bindings._version``: the version cuda-bindings reports, here the
CUDA version cubind's modules were generated from (``_cubind.compat.version``).
cuda.core 1.2 reads ``__version_tuple__`` to decide whether NVIDIA's Pythonic
NVML module is there (13.2 and later); the C-level ``cy*`` modules' texts are
those of this version."""

from _cubind.compat import version, version_tuple

__all__ = ["__version__", "__version_tuple__", "version", "version_tuple", "__commit_id__", "commit_id"]

__version__ = version = version()
__version_tuple__ = version_tuple = version_tuple()
__commit_id__ = commit_id = None  # not a build of NVIDIA's repository
