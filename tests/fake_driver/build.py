"""Builds the C stand-ins of tests/fake_driver: fake_libcuda.c with the
emulated GPU's parts (emulated_*.c) as libcuda.so.1,
fake_libcudart.c as libcudart.so.13 and fake_libnvml.c as libnvidia-ml.so.1
(compiled against the real nvml.h, whose directory the caller gives). The one place they are compiled,
with one set of flags, for the test suite (tests/conftest.py's
``fake_driver`` fixture) and the benchmark (bench/run.py --smoke).

It lives next to the C sources it builds and imports nothing but the
standard library, so that bench/run.py loads this file by its path
(importlib) without importing the ``tests`` package, its conftest or its
helpers: the bench depends on the stand-in, not on the suite."""

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (sources, soname, the unversioned name to link against)
LIBRARIES = {
    "cuda": (("fake_libcuda.c", "emulated_record.c", "emulated_memory.c", "emulated_events.c",
              "emulated_kernels.c"), "libcuda.so.1", "libcuda.so"),
    "cudart": (("fake_libcudart.c",), "libcudart.so.13", "libcudart.so"),
    "nvml": (("fake_libnvml.c",), "libnvidia-ml.so.1", "libnvidia-ml.so"),
}

# The same flags for the suite and the bench (only the soname is asked for: see build).
CFLAGS = ["-O2", "-shared", "-fPIC"]


def compiler():
    """The C compiler's path (CC, else cc), or None where there is none."""
    return shutil.which(os.environ.get("CC", "cc"))


def build(directory, libraries=("cuda",), soname=False, include_dirs=()):
    """Compile ``libraries`` (keys of LIBRARIES) into ``directory``, each under
    its soname as file name with a link by its unversioned name; returns the
    path of each built library by name. Raises RuntimeError where there is no
    C compiler.

    ``soname``: record the soname in the library, for a program linked
    against it (the bench's C floor, ``-lcuda``). Not for the suite: a
    library loaded by path (CUBIND_CUDA_LIBRARY) under the soname
    libcuda.so.1 is what a later dlopen("libcuda.so.1") in the process gets,
    so NVRTC and cuda.core would run on the stand-in too and crash there."""
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc, or $CC) to build tests/fake_driver")
    os.makedirs(directory, exist_ok=True)
    built = {}
    for name in libraries:
        sources, file_name, link = LIBRARIES[name]
        lib = os.path.join(directory, file_name)
        flags = [*CFLAGS, f"-Wl,-soname,{file_name}"] if soname else CFLAGS
        includes = [f"-I{d}" for d in include_dirs]
        paths = [os.path.join(HERE, source) for source in sources]
        subprocess.run([cc, *flags, *includes, "-o", lib, *paths, "-lm", "-lpthread"], check=True)
        if not os.path.lexists(os.path.join(directory, link)):
            os.symlink(file_name, os.path.join(directory, link))
        built[name] = lib
    return built
