"""Where the CUDA toolkit the benchmarks compile their C against is: a full
toolkit tree (include/cuda.h, lib64/), CUDA_HOME or CUDA_PATH first, then nvcc's."""

import os
import shutil


def cuda_root():
    """The toolkit's root directory, or None where none is found."""
    nvcc = shutil.which("nvcc")
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None,
                 "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "include", "cuda.h")):
            return root
    return None
