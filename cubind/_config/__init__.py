"""``cubind.show_config()`` and ``python -m cubind``: what a bug report needs
to say about this installation, printed without a GPU or a driver as well as
with them, and never raising.

The packages the build made and those it left out (with the build's reason),
the CUDA headers they were generated from and compiled against, each CUDA
library as the loader finds it (path and version, or why not), the GPUs the
driver sees, and the Python side (Python, Cython, numpy, platform). Read from
the build's record (``_cubind/built.py``), the loader's own search and the
generated modules, never from a search of its own.
"""

from cubind._config.report import report, show_config

__all__ = ["report", "show_config"]
