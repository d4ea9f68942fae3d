"""The CUDA toolkit's own headers, for programs that include them.

NVRTC searches no directory by default, so ``#include <cooperative_groups.h>``
or ``<cuda_fp16.h>`` fails unless the toolkit's include directory is given.
Looked for where the build looks for CUDA's headers (_cubind/cuda_paths.py),
and taken only where they are of the CUDA major version of the NVRTC in use.
"""

import functools
import os

from _cubind import cuda_paths as _cuda_paths

__all__ = ["toolkit_include_options"]

# A header every toolkit and the runtime wheel ship, and NVRTC programs include.
_PROBE = "cooperative_groups.h"


def _candidates(major):
    # The include directories of every CUDA installation, in the order the
    # build searches them (_cubind/cuda_paths.py): a toolkit's include
    # directory is complete (crt/, cccl/), a wheel's holds only that wheel's
    # headers. Each is taken only if its headers are of NVRTC's major version (below).
    for root in _cuda_paths.roots():
        yield from root.includes
    for site in _cuda_paths.site_dirs():
        yield os.path.join(site, f"nvidia/cu{major}/include")


def _major_of(path):
    """The CUDA major version of the headers in ``path`` (cuda.h's CUDA_VERSION), or None."""
    try:
        with open(os.path.join(path, "cuda.h"), encoding="latin-1") as header:
            for line in header:
                if line.startswith("#define CUDA_VERSION"):
                    return int(line.split()[2]) // 1000
    except (OSError, ValueError, IndexError):
        pass
    return None


@functools.lru_cache(maxsize=4)
def toolkit_include_options(major):
    """``-I`` options for the first toolkit include directory found whose
    headers are of CUDA ``major`` (NVRTC's: another major's headers do not
    compile with it), with its ``cccl`` directory (libcu++ in CUDA 13), or none."""
    for path in _candidates(major):
        if os.path.isfile(os.path.join(path, _PROBE)) and _major_of(path) in (major, None):
            options = [f"-I{path}"]
            if os.path.isdir(os.path.join(path, "cccl")):
                options.append(f"-I{os.path.join(path, 'cccl')}")
            return tuple(options)
    return ()
