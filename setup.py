"""Builds the extension modules from the committed generated Cython sources.

Building needs Cython and the CUDA headers (for the types the C layer
declares with ``cdef extern``), not libclang: regenerating is separate
(scripts/regenerate.sh).
"""

import os
import shutil
import sys

from setuptools import Extension, setup


def cuda_include_dir():
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    candidates.append("/usr/local/cuda")
    for root in filter(None, candidates):
        include = os.path.join(root, "include")
        if os.path.exists(os.path.join(include, "cuda.h")):
            return include
    sys.exit("cubind: CUDA headers not found; set CUDA_HOME to the toolkit (searched: "
             + ", ".join(filter(None, candidates)) + ")")


def extensions():
    from Cython.Build import cythonize

    include = [cuda_include_dir()]
    # -g0: Python's own CFLAGS ask for debug info, and gcc's variable
    # tracking for it on the driver's Python layer (one very large C file)
    # takes ten minutes at -O2; without it, -O2 takes under three, and the
    # module is 5 MB instead of 24. CUBIND_OPT overrides the level.
    def optimization(name):
        return [os.environ.get("CUBIND_OPT", "-O2"), "-g0"]
    modules = {
        "cubind._loader": [],
        "cubind._convert": [],
        "nvrtc.cnvrtc": include,
        "nvrtc._nvrtc": include,
        "cuda.cdriver": include,
        "cuda._driver": include,
    }
    exts = [
        Extension(name, [name.replace(".", "/") + ".pyx"], include_dirs=dirs, extra_compile_args=optimization(name))
        for name, dirs in modules.items()
    ]
    return cythonize(
        exts,
        nthreads=os.cpu_count() or 1,
        compiler_directives={"language_level": 3, "binding": False, "boundscheck": False, "wraparound": False},
    )


setup(ext_modules=extensions())
