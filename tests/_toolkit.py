"""Which CUDA toolkit this build comes from, for the tests that read its
headers, point the generator at them, compile C or Cython against them, or
expect its version.

One source of truth: ``CUBIND_CUDA_INCLUDE`` (set by scripts/toolkit-build.sh
to the headers of another toolkit's wheels), else the search setup.py makes
(_cubind/cuda_paths.py).
"""

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _paths():
    from _cubind import cuda_paths as _cuda_paths  # the search setup.py makes

    return _cuda_paths


@functools.cache
def cuda_include():
    """The include directory of cuda.h the bindings were generated and built from (None if there is none)."""
    if os.environ.get("CUBIND_CUDA_INCLUDE"):
        return Path(os.environ["CUBIND_CUDA_INCLUDE"])   # taken as given: never another toolkit's
    return header("cuda.h").parent if header("cuda.h") else None


def spec_headers(spec):
    """The ``headers`` a bindings/*.toml spec parses."""
    return _paths().spec_headers(spec)


def header(name):
    """The path of ``name`` (e.g. "cuda.h", "nvvm.h") where the build finds it, or None."""
    if os.environ.get("CUBIND_CUDA_INCLUDE"):
        path = Path(os.environ["CUBIND_CUDA_INCLUDE"]) / name
        return path if path.is_file() else None
    paths = _paths()
    try:
        _root, dirs = paths.find_headers([name])
    except paths.HeaderNotFound:
        return None
    return next(Path(d) / name for d in dirs if (Path(d) / name).is_file())


@functools.cache
def cuda_version():
    """``CUDA_VERSION`` of that cuda.h (12090, 13000, ...), or None without one."""
    path = header("cuda.h")
    if path is None:
        return None
    match = re.search(r"^#define CUDA_VERSION (\d+)", path.read_text(), re.MULTILINE)
    return int(match[1]) if match else None


def cuda_major_minor():
    """(major, minor) of that cuda.h: (12, 9), (13, 0), ...; None without one."""
    version = cuda_version()
    return None if version is None else (version // 1000, version % 1000 // 10)


def is_cuda_13_0():
    """True where the headers are CUDA 13.0's, the ones exact counts were taken from."""
    return cuda_version() == 13000


def pythonpath(*first):
    """``PYTHONPATH`` for a child interpreter: ``first`` (default: the repository)
    ahead of the caller's, which stays (it may hold the toolkit's wheels)."""
    parts = [str(p) for p in (first or (ROOT,))]
    return os.pathsep.join(filter(None, [*parts, os.environ.get("PYTHONPATH")]))


def library(soname, wheel_subdirs=()):
    """A file named ``soname``: in NVIDIA's wheels on ``sys.path`` (the loader's
    order: ``wheel_subdirs`` under each entry), then a toolkit's lib64/lib. None if none."""
    for entry in sys.path:
        for sub in wheel_subdirs:
            path = Path(entry or ".") / sub / soname
            if path.is_file():
                return path
    for root in _paths().roots(wheels=False):
        for lib in root.lib_dirs(("lib64", "lib")):
            path = Path(lib) / soname
            if path.is_file():
                return path
    return None


def libdevice():
    """The toolkit's ``libdevice.10.bc`` (the CUDA math library as NVVM IR
    bitcode), found by the build's CUDA search: a toolkit's or conda's
    ``nvvm/libdevice``, Debian's, a wheel's (``nvidia/cu13/nvvm/libdevice``,
    ``nvidia/cuda_nvcc/nvvm/libdevice``). None if none has it."""
    for root in _paths().roots():
        base = Path(root.path)
        for pattern in ("nvvm/libdevice/libdevice.10.bc", "*/nvvm/libdevice/libdevice.10.bc",
                        "lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc"):
            found = sorted(base.glob(pattern))
            if found:
                return found[0]
    return None


def ctx_create_args(cuda, flags, dev):
    """cuCtxCreate's arguments in the form of the build's version: 13.x's is
    cuCtxCreate_v4(ctxCreateParams, flags, dev), 12.x's cuCtxCreate_v2(flags, dev)."""
    return (None, flags, dev) if cuda.CUDA_VERSION >= 13000 else (flags, dev)


def _default_include_dirs(cc):
    """The C compiler's own search list for <...> includes, in order."""
    done = subprocess.run([cc, "-E", "-v", "-x", "c", os.devnull], capture_output=True, text=True)
    lines = done.stderr.splitlines()
    start = lines.index("#include <...> search starts here:") + 1
    end = lines.index("End of search list.")
    return [line.strip().removesuffix(" (framework directory)") for line in lines[start:end]]


def without_platform_headers(tmp, cc="cc"):
    """Compiler flags for a system without the platform's development headers
    the CUDA interop headers include (EGL's, GL's, VDPAU's): ``cc``'s default
    search list, each directory mirrored without EGL/, KHR/, GL/ and vdpau/.
    scripts/without-platform-headers.sh builds the package with them."""
    flags = ["-nostdinc"]
    for i, directory in enumerate(_default_include_dirs(cc)):
        mirror = tmp / f"sys{i}"
        mirror.mkdir()
        for entry in os.listdir(directory):
            if entry not in ("EGL", "KHR", "GL", "vdpau"):
                (mirror / entry).symlink_to(os.path.join(directory, entry))
        flags += ["-isystem", str(mirror)]
    return flags


def cuda_core_path():
    """Where the cuda.core the cuda.core tests are written for is, where it is
    not the one installed: a directory put first on those tests' child
    interpreters' path only (a GPU machine's own, newer cuda.core stays what
    the rest of the suite sees: numba needs it). scripts/gpu-check.sh --wheels
    sets CUBIND_CUDA_CORE_PATH."""
    return os.environ.get("CUBIND_CUDA_CORE_PATH") or None


def consumers_path():
    """Where the released consumers of NVIDIA's bindings (cuda-core 1.2.x,
    numba-cuda 0.30.x) are installed apart from the suite's own packages:
    CUBIND_CONSUMERS_PATH, else ``consumers/`` in the virtual environment
    (scripts/_common.sh installs them there, ``--no-deps``)."""
    return os.environ.get("CUBIND_CONSUMERS_PATH") or str(Path(sys.prefix) / "consumers")


def consumers_unserved(running=True):
    """Why this build cannot serve the released consumers of NVIDIA's bindings
    (cuda-core 1.2, numba-cuda 0.30), or None. They are built against
    cuda-bindings 13.x: on a build from CUDA 12 headers cuda.core picks its
    cu12 build, which expects cuda-bindings 12.x's own choices
    (cuStreamGetCaptureInfo without edge data, names CUDA 12.9's headers
    lack); with cuda.bindings 13.2 or later (a build from 13.2+ headers
    reports that version) cuda.core's system module uses NVIDIA's Pythonic
    NVML API (nvml.ClockId, ...), which cubind serves only the part of
    that 13.0 and 13.1 need. Neither is served yet (issue 44). ``running``:
    False for a check of names alone, which the latter does not stop."""
    version = cuda_major_minor()
    if version is not None and version[0] < 13:
        return f"the consumers are served from CUDA 13 headers; this build is CUDA {version[0]}.{version[1]}'s"
    if running and version is not None and version >= (13, 2):
        return (f"cuda.core 1.2 on cuda.bindings {version[0]}.{version[1]} uses NVIDIA's Pythonic NVML API, "
                "served by cubind only as far as 13.0 and 13.1 need it")
    return None


def consumer(distribution, wanted):
    """(version, the directory to put first on a child's path) of the
    ``distribution`` whose version starts with ``wanted`` (``"1.2."``), found in
    consumers_path() and then on sys.path (a GPU machine's site-wide install);
    else why it is missing."""
    import importlib.metadata

    for where in [consumers_path(), *sys.path]:
        if not where or not os.path.isdir(where):
            continue
        for dist in importlib.metadata.distributions(name=distribution, path=[where]):
            if dist.version.startswith(wanted):
                return dist.version, where
    return (f"{distribution} {wanted}x is not installed (scripts/_common.sh installs it --no-deps into "
            f"{consumers_path()}, or set CUBIND_CONSUMERS_PATH)")


def cuda_core_missing(version):
    """None where cuda.core ``version`` is what those tests get, else why not."""
    import importlib.metadata

    where = cuda_core_path()
    try:
        if where:
            found = list(importlib.metadata.distributions(name="cuda-core", path=[where]))
            if not found:
                return f"CUBIND_CUDA_CORE_PATH={where} holds no cuda-core"
            installed = found[0].version
        else:
            installed = importlib.metadata.version("cuda-core")
    except importlib.metadata.PackageNotFoundError:
        return f"cuda.core is not installed (pip install cuda-core=={version})"
    if installed != version:
        return f"these cases are written for cuda.core {version}; cuda-core {installed} is installed"
    return None


def compile_with_stand_ins(tmp, cuda_headers, source, platform_headers, hidden, cc="cc", searched="consumer"):
    """Compiles ``source`` (C text including ``cuda_headers``) with ``cc`` and
    cubind's platform stand-ins (_cubind/platform_fallback) searched as
    ``searched`` says: "consumer", a plain include directory, as a consumer of
    the .pxd files adds cubind.get_include(); "build", as cubind's own build
    searches them (cuda_paths.FALLBACK_FLAGS). The system's EGL, GL and VDPAU
    headers are hidden where ``hidden``. Returns which files of
    ``platform_headers`` (paths as included, "GL/gl.h") the compiler opened,
    and the stand-ins' directory; skips where there is no such compiler or
    the CUDA headers are missing."""
    import shutil

    import pytest

    if shutil.which(cc) is None or any(header(h) is None for h in cuda_headers):
        pytest.skip(f"needs the C compiler {cc} and {', '.join(cuda_headers)}")
    paths = _paths()
    _root, dirs = paths.find_headers(list(cuda_headers))
    flags = without_platform_headers(tmp, cc) if hidden else []
    flags += [f"-I{paths.FALLBACK_INCLUDE}"] if searched == "consumer" else list(paths.FALLBACK_FLAGS)
    path = tmp / "consumer.c"
    path.write_text(source)
    done = subprocess.run([cc, "-fsyntax-only", "-H", *flags] + [f"-I{d}" for d in dirs] + [str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    opened = [line.lstrip(". ") for line in done.stderr.splitlines()
              if line.startswith(".") and any(h in line for h in platform_headers)]
    return opened, paths.FALLBACK_INCLUDE


