"""The CUDA toolkit's own headers, for programs that include them.

NVRTC searches no directory by default, so ``#include <cooperative_groups.h>``
or ``<cuda_fp16.h>`` fails unless the toolkit's include directory is given.
Looked for where the loader looks for libraries: CUDA_HOME, CUDA_PATH, beside
``nvcc``, NVIDIA's pip wheels, /usr/local/cuda.
"""

import functools
import os
import shutil
import sys

__all__ = ["toolkit_include_options"]

# A header every toolkit and the runtime wheel ship, and NVRTC programs include.
_PROBE = "cooperative_groups.h"


def _candidates():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            yield os.path.join(os.environ[var], "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        yield os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
    for site in sys.path:
        for sub in ("nvidia/cu13/include", "nvidia/cuda_runtime/include"):
            yield os.path.join(site or ".", sub)
    yield "/usr/local/cuda/include"


@functools.lru_cache(maxsize=1)
def toolkit_include_options():
    """``-I`` options for the first toolkit include directory found (and its
    ``cccl`` directory, where CUDA 13 keeps libcu++), or none."""
    for path in _candidates():
        if os.path.isfile(os.path.join(path, _PROBE)):
            options = [f"-I{path}"]
            if os.path.isdir(os.path.join(path, "cccl")):
                options.append(f"-I{os.path.join(path, 'cccl')}")
            return tuple(options)
    return ()
